"""Protocol messages <-> Flower ``RecordDict`` (the only payload Flower carries).

A :class:`dpsumm.messages.Message` becomes ``Message.to_dict()`` split by value type:

* ``"dpsumm.fields"`` (:class:`flwr.app.ConfigRecord`): every scalar field (int, float, str, bool, bytes)
  plus ``"kind"``;
* ``"dpsumm.arrays"`` (:class:`flwr.app.ArrayRecord`): every numpy array field, dtype and shape kept;
* ``"dpsumm.types"`` (:class:`flwr.app.ConfigRecord`): one tag per field (``int``, ``bigint``, ``float``,
  ``str``, ``bool``, ``bytes``, ``none``, ``array``), so that ``None`` and integers beyond int64 (a
  ``hash_seed`` may be any value below 2**64) survive the trip;
* ``"dpsumm.codec"`` (:class:`flwr.app.ConfigRecord`): the codec's :data:`CODEC_VERSION`, so that parties of
  versions whose messages differ (kinds or fields renamed) refuse each other's messages by name.

:func:`decode` checks the tags and rebuilds the message with :func:`dpsumm.messages.from_dict`, which
checks the schema. Anything else raises :class:`dpsumm.errors.ProtocolError`.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np
from flwr.app import Array, ArrayRecord, ConfigRecord, RecordDict

from ..errors import ProtocolError
from ..messages import Message, from_dict

__all__ = ["encode", "decode", "FIELDS", "ARRAYS", "TYPES", "CODEC", "CODEC_VERSION"]

FIELDS = "dpsumm.fields"
ARRAYS = "dpsumm.arrays"
TYPES = "dpsumm.types"
CODEC = "dpsumm.codec"
#: The version of the messages' wire form: 2 since the cell family's messages say cells (``cell_release_request``,
#: ``key_set``, ...; 1: ``label_release_request``, ``label_set``, ..., with no version record).
CODEC_VERSION = 2

_INT64 = (-(2**63), 2**63 - 1)


def _scalar(name: str, value: Any) -> tuple[str, Any]:
    """(tag, value as a ConfigRecord scalar) for one field value."""
    if isinstance(value, np.generic):
        value = value.item()
    if value is None:
        return "none", None
    if isinstance(value, bool):
        return "bool", value
    if isinstance(value, int):
        if _INT64[0] <= value <= _INT64[1]:
            return "int", value
        return "bigint", str(value)
    if isinstance(value, float):
        return "float", value
    if isinstance(value, str):
        return "str", value
    if isinstance(value, bytes):
        return "bytes", value
    raise ProtocolError(f"field {name!r}: a value of type {type(value).__name__} cannot be sent over Flower")


def encode(message: Message) -> RecordDict:
    """The Flower payload of one protocol message.

    Parameters
    ----------
    message : dpsumm.messages.Message

    Returns
    -------
    flwr.app.RecordDict

    Raises
    ------
    ProtocolError
        If a field holds a value Flower cannot carry (e.g. a label that is a Python object).
    """
    if not isinstance(message, Message):
        raise ProtocolError(f"`message` must be a dpsumm protocol message, got {type(message).__name__}")
    fields: dict[str, Any] = {}
    arrays: dict[str, Array] = {}
    types: dict[str, str] = {}
    for name, value in message.to_dict().items():
        if isinstance(value, np.ndarray):
            if value.dtype.hasobject:  # numpy saves no objects without pickle, which Flower does not use
                raise ProtocolError(f"field {name!r}: an array of Python objects cannot be sent over Flower")
            types[name] = "array"
            arrays[name] = Array(np.ascontiguousarray(value))
            continue
        tag, v = _scalar(name, value)
        types[name] = tag
        if tag != "none":
            fields[name] = v
    return RecordDict(
        {
            FIELDS: ConfigRecord(fields),
            ARRAYS: ArrayRecord(arrays),
            TYPES: ConfigRecord(cast(Any, types)),
            CODEC: ConfigRecord({"version": CODEC_VERSION}),
        }
    )


def decode(content: RecordDict) -> Message:
    """Rebuild a protocol message from :func:`encode` output.

    Raises
    ------
    ProtocolError
        If the payload is not an encoded protocol message or breaks the message schema.
    """
    if not isinstance(content, RecordDict):
        raise ProtocolError(f"not a dpsumm message: a {type(content).__name__}, not a Flower RecordDict")
    try:
        fields = content[FIELDS]
        arrays = content[ARRAYS]
        types = content[TYPES]
    except KeyError as exc:
        raise ProtocolError(f"not a dpsumm message: record {exc} is missing") from exc
    if (
        not isinstance(fields, ConfigRecord)
        or not isinstance(types, ConfigRecord)
        or not isinstance(arrays, ArrayRecord)
    ):
        raise ProtocolError("not a dpsumm message: records have the wrong types")
    codec = content.get(CODEC)
    version = codec.get("version") if isinstance(codec, ConfigRecord) else None
    if version != CODEC_VERSION:
        raise ProtocolError(
            f"a dpsumm message of codec version {version!r} (this dpsumm reads version {CODEC_VERSION}): every party "
            "of a run must run the same dpsumm version"
        )
    data: dict[str, Any] = {}
    for name, tag in types.items():
        if tag == "none":
            data[name] = None
        elif tag == "array":
            if name not in arrays:
                raise ProtocolError(f"array field {name!r} is missing")
            try:
                data[name] = arrays[name].numpy()
            except (ValueError, TypeError) as exc:  # bytes that are not a numpy array, or pickled objects
                raise ProtocolError(f"array field {name!r} cannot be read: {str(exc).splitlines()[0][:120]}") from None
        elif tag in ("int", "float", "str", "bool", "bytes", "bigint"):
            if name not in fields:
                raise ProtocolError(f"field {name!r} is missing")
            v = fields[name]
            expected: type | tuple[type, ...] = {
                "int": int,
                "float": float,
                "str": str,
                "bool": bool,
                "bytes": bytes,
                "bigint": str,
            }[str(tag)]
            if not isinstance(v, expected) or (tag == "int" and isinstance(v, bool)):
                raise ProtocolError(f"field {name!r} should be {tag}, got {type(v).__name__}")
            if tag == "bigint":
                try:
                    v = int(str(v))
                except ValueError as exc:
                    raise ProtocolError(f"field {name!r} is not an integer: {v!r}") from exc
            data[name] = v
        else:
            raise ProtocolError(f"field {name!r} has an unknown type tag {tag!r}")
    return from_dict(data)
