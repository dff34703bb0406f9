"""Exceptions raised by dpsumm. Every one is a subclass of :class:`DpsummError`."""

from __future__ import annotations

__all__ = [
    "DpsummError",
    "InvalidParameterError",
    "PrivacyBudgetError",
    "ProtocolError",
    "EntropyError",
    "NotFittedError",
    "LedgerFormatError",
    "DataFileError",
]


class DpsummError(Exception):
    """Base class of every exception dpsumm raises on purpose."""


class InvalidParameterError(DpsummError, ValueError):
    """An argument has a bad value, shape, dtype or contents.

    Raised before any privacy budget is spent. ``argument`` names the offending argument.
    """

    argument: str | None = None

    def __init__(self, message: str, argument: str | None = None) -> None:
        super().__init__(message)
        if argument is not None:
            self.argument = argument


class PrivacyBudgetError(DpsummError, ValueError):
    """A privacy budget cannot be met, or a requested release would exceed it."""

    argument: str | None = None


class ProtocolError(DpsummError, RuntimeError):
    """A party broke the protocol (a malformed message, a failed verification, a missing reply)."""


class EntropyError(DpsummError, OSError):
    """The operating system could not provide entropy for the CSPRNG."""


class NotFittedError(DpsummError, ValueError, AttributeError):
    """An estimator was used before ``fit`` (scikit-learn's convention: a ValueError and AttributeError)."""


class LedgerFormatError(InvalidParameterError):
    """A ledger's dict form (``Ledger.from_dict``) does not follow the versioned schema ``Ledger.to_dict`` writes.

    Raised for a wrong type (string booleans included), an unknown or missing key, an unsupported version,
    or figures that contradict the entries (totals, costs, flags, notes). ``where`` is the path of the
    offending value, e.g. ``"entries[3].event.public"``; ``argument`` is ``"data"``.
    """

    where: str = ""

    def __init__(self, message: str, where: str = "", argument: str = "data") -> None:
        super().__init__(
            f"`{argument}` is not a ledger written by Ledger.to_dict(): {where + ': ' if where else ''}{message}",
            argument,
        )
        self.where = where


class DataFileError(InvalidParameterError):
    """A data file cannot be read as the rows it should hold (missing, unreadable, too large, malformed, or
    with an index, header or label column that cannot be told apart from the features).

    ``path`` is the file; ``argument`` the API argument (or CLI flag) that named it.
    """

    path: str = ""

    def __init__(self, message: str, path: object = "", argument: str | None = None) -> None:
        super().__init__(message, argument)
        self.path = str(path)
