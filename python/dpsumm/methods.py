"""The method objects by name, and the one way every entry point builds them.

:func:`dpsumm.summarize`, the CLI (``--method`` and its options), the Flower run config and
:class:`dpsumm.Summarizer` all turn their inputs into a method object here, so each option has one default (on
its method's class) and one validation. An option the chosen method does not have is refused with the name
the user wrote (a keyword, a CLI flag or a run-config key) and where it belongs.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from .accounting import DEFAULT_DELTA as _accounting_default_delta
from .accounting import Budget
from .errors import InvalidParameterError
from .protocols.base import MethodOptionError, SummaryMethod
from .protocols.baselines import CentralGreedy, ExactGreedy, Uniform
from .protocols.nominations import PURCHASES, ByDirection, ByLabel, ByStrata, Nominations, Nominees, Purchase, Winners
from .protocols.paper import PaperGreedy, PaperProtocol

__all__ = [
    "METHOD_CLASSES",
    "METHODS",
    "PURCHASES",
    "DEFAULT_DELTA",
    "OptionDeclaration",
    "option_declarations",
    "purchases_text",
    "budget_from",
    "resolve_method",
    "method_from_options",
    "flat_options",
    "misplaced_options",
    "parse_label_set",
    "label_set_text",
    "parse_levels",
    "levels_text",
    "SummaryMethod",
    "MethodOptionError",
    "Nominations",
    "PaperProtocol",
    "PaperGreedy",
    "CentralGreedy",
    "ExactGreedy",
    "Uniform",
    "Purchase",
    "Nominees",
    "Winners",
    "ByLabel",
    "ByStrata",
    "ByDirection",
]

#: Every method class by its name, recommended first.
METHOD_CLASSES: dict[str, type[SummaryMethod]] = {
    cls.name: cls for cls in (Nominations, PaperProtocol, CentralGreedy, PaperGreedy, ExactGreedy, Uniform)
}
#: The method names (``summarize(..., method=name)`` runs that method with its defaults).
METHODS: tuple[str, ...] = tuple(METHOD_CLASSES)


def resolve_method(method: object) -> SummaryMethod:
    """A method object from ``method``: the object itself, a name meaning that method's defaults, or a purchase
    (``dpsumm.ByStrata(...)``) meaning ``dpsumm.Nominations(purchase=...)``."""
    if isinstance(method, SummaryMethod):
        return method
    if isinstance(method, type) and issubclass(method, SummaryMethod):
        return method()
    if isinstance(method, str) and method in METHOD_CLASSES:
        return METHOD_CLASSES[method]()
    from .protocols.nominations.purchase import Purchase

    if isinstance(method, Purchase):  # a purchase is a way of running nominations: its method is implied
        return METHOD_CLASSES["nominations"](purchase=method)  # type: ignore[call-arg]
    hint = ""
    if isinstance(method, str):
        close = difflib.get_close_matches(method, METHODS, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise MethodOptionError(
        f"`method` must be a method object (dpsumm.Nominations(), dpsumm.PaperProtocol(), ...) or one of "
        f"{', '.join(repr(m) for m in METHODS)}, got {method!r}{hint}",
        "method",
    )


@dataclasses.dataclass(frozen=True)
class OptionDeclaration:
    """One option as its class declares it (:func:`dpsumm.protocols.base.option`): the entry points' flags, run
    config keys and the docs' option tables are made from these."""

    name: str
    owners: tuple[str, ...]  # the method or purchase classes that declare it
    help: str
    kind: type  # how its text form reads (a CLI flag's or a run config value's type): int, float or str
    parse: str | None  # a text form read by a parser of its own ("label_set", "purchase")

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def run_config_key(self) -> str:
        return self.name.replace("_", "-")


def _kind(annotation: object) -> type:
    text = str(annotation)
    if text.startswith("int"):
        return int
    if text.startswith("float"):
        return float
    return str


def option_declarations() -> dict[str, OptionDeclaration]:
    """Every option of every method and purchase class, by name (the first declaration's help and kind)."""
    out: dict[str, OptionDeclaration] = {}
    for cls in (*METHOD_CLASSES.values(), *PURCHASES.values()):
        for f in dataclasses.fields(cls):  # type: ignore[arg-type]
            if f.name == "schedule":  # an object: t_init / t_subs / epsilon_auction set what a flag can
                continue
            known = out.get(f.name)
            if known is not None:
                out[f.name] = dataclasses.replace(known, owners=(*known.owners, cls.__name__))
                continue
            help_text = str(f.metadata.get("help", ""))
            if f.metadata.get("parse") == "purchase":
                help_text += ": " + purchases_text(f.default)
            out[f.name] = OptionDeclaration(f.name, (cls.__name__,), help_text, _kind(f.type), f.metadata.get("parse"))
    return out


def purchases_text(default: object = None) -> str:
    """Every registered purchase (:data:`PURCHASES`) by name with its ``brief``, ``default`` marked: the
    ``--purchase`` help, made from the registry."""
    parts = [
        f"{name} (default: {cls.brief})" if type(default) is cls else f"{name} ({cls.brief})"
        for name, cls in PURCHASES.items()
    ]
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} or {parts[-1]}"


def _owners_of(option: str) -> list[str]:
    return [cls.__name__ for cls in (*METHOD_CLASSES.values(), *PURCHASES.values()) if option in cls.option_names()]


def _purchase_from(base: SummaryMethod, options: dict[str, Any], spell: Callable[[str], str]) -> None:
    """Replace the flat purchase options of an entry point (``purchase`` as a name, ``label_set``, ...) in
    ``options`` by one purchase object: the named purchase, or the one that has every purchase option given (the
    method's current purchase first)."""
    own = [k for k in options if k not in base.option_names() or k == "purchase"]
    given = {k: options.pop(k) for k in own if k != "purchase"}
    name = options.pop("purchase", None)
    if isinstance(name, Purchase):
        if given:
            raise MethodOptionError(
                f"{spell(sorted(given)[0])} is an option of the purchase object: set it there", sorted(given)[0]
            )
        options["purchase"] = name
        return
    current = base.purchase  # type: ignore[attr-defined]
    if name is None:
        if not given:
            return
        fits = [cls for cls in (type(current), *PURCHASES.values()) if set(given) <= set(cls.option_names())]
        if not fits:
            key = sorted(given)[0]
            raise MethodOptionError(
                f"{spell(key)} does not apply to one purchase with the other options given "
                f"({', '.join(spell(k) for k in sorted(given))})",
                key,
            )
        cls: type[Purchase] = fits[0]
    elif isinstance(name, str) and name in PURCHASES:
        cls = PURCHASES[name]
    else:
        close = difflib.get_close_matches(str(name), list(PURCHASES), n=1)
        raise MethodOptionError(
            f"{spell('purchase')} must be one of {', '.join(repr(p) for p in PURCHASES)}, got "
            f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""),
            "purchase",
        )
    for key in given:
        if key not in cls.option_names():
            raise MethodOptionError(
                f"{spell(key)} does not apply to purchase {cls.name!r} ({cls.__name__} has "
                f"{', '.join(cls.option_names()) or 'no options'}); it is an option of "
                f"{', '.join(_owners_of(key))}",
                key,
            )
    base_opts = current.get_params() if type(current) is cls else {}
    options["purchase"] = cls(**{**base_opts, **given})


def method_from_options(
    method: object, options: Mapping[str, Any], spell: Callable[[str], str] = lambda k: f"`{k}`"
) -> SummaryMethod:
    """The method ``method`` (a name or an object) with ``options`` set; ``spell(option)`` names an option as the
    user wrote it (``"--nominees"``, ``"run config `nominees`"``) in errors.

    Raises
    ------
    MethodOptionError
        An option the method does not have, naming where it belongs.
    InvalidParameterError
        A bad value, naming the option.
    """
    base = resolve_method(method)
    own = base.option_names()
    options = dict(options)
    if isinstance(options.get("label_set"), str):  # its text form (a flag, a run config value)
        options["label_set"] = parse_label_set(options["label_set"], spell=spell)
    if isinstance(options.get("levels"), str):
        options["levels"] = parse_levels(options["levels"], spell=spell)
    if "purchase" in own:
        try:
            _purchase_from(base, options, spell)
        except MethodOptionError:
            raise
        except Exception as exc:  # a bad purchase option's value: say which, as the user spelled it
            arg = getattr(exc, "argument", None)
            if isinstance(arg, str) and exc.args:
                exc.args = (str(exc.args[0]).replace(f"`{arg}`", spell(arg), 1), *exc.args[1:])
            raise
    for key in options:
        if key not in own:
            where = _owners_of(key)
            raise MethodOptionError(
                f"{spell(key)} does not apply to method {base.name!r} ({type(base).__name__} has "
                f"{', '.join(own) if own else 'no options'})"
                + (f"; it is an option of {', '.join(where)}" if where else ""),
                key,
            )
    if not options:
        return base
    try:
        return base.set_params(**options)
    except MethodOptionError:
        raise
    except Exception as exc:  # a bad value: say which option, as the user spelled it
        arg = getattr(exc, "argument", None)
        if isinstance(arg, str) and arg in options and exc.args:
            msg = str(exc.args[0]).replace(f"`{arg}`", spell(arg), 1)
            exc.args = (msg, *exc.args[1:])
        raise


def flat_options(method: SummaryMethod) -> dict[str, Any]:
    """The options of ``method`` that differ from their defaults, flat, as an entry point takes them
    (:func:`method_from_options` reads them back): the purchase as its name with its own changed options, a label
    set as its text form (:func:`label_set_text`)."""
    out: dict[str, Any] = {}
    for key, value in method.changed_params().items():
        if isinstance(value, Purchase):
            out["purchase"] = value.name
            out.update(value.changed_params())
        else:
            out[key] = value
    if "label_set" in out:
        out["label_set"] = label_set_text(out["label_set"])
    if "levels" in out:
        out["levels"] = levels_text(out["levels"])
    return out


def misplaced_options(options: Mapping[str, Any], method: object, where: str = "summarize") -> MethodOptionError:
    """The error for keywords given to ``where`` that belong to a method object (or to nothing)."""
    key = sorted(options)[0]
    owners = _owners_of(key)
    if owners:
        cls: Any = METHOD_CLASSES.get(method) if isinstance(method, str) else type(method)
        example: str = (
            cls.__name__ if cls is not None and key in getattr(cls, "option_names", lambda: ())() else owners[0]
        )
        call = f"dpsumm.{example}({key}=...)"
        of_a_purchase = any(p.__name__ == example for p in PURCHASES.values())
        if of_a_purchase:
            call = f"dpsumm.Nominations(purchase={call})"
        return MethodOptionError(
            f"`{key}` is an option of {', '.join('dpsumm.' + o for o in owners)}, not of {where}(): pass it on the "
            f"{'purchase' if of_a_purchase else 'method'} object, e.g. {where}(..., method={call})",
            key,
        )
    everything = sorted(option_declarations())
    close = difflib.get_close_matches(key, everything, n=1)
    hint = f" (did you mean {close[0]!r}, an option of {', '.join(_owners_of(close[0]))}?)" if close else ""
    return MethodOptionError(f"{where}() got an unexpected keyword `{key}`{hint}", key)


#: The delta of a budget an entry point builds when the user gives an epsilon without its delta (the CLI's
#: ``--budget``/``--validation-budget``, the Flower run config's ``budget-*`` keys), and the delta a ledger is
#: read at without a budget: one constant, :data:`dpsumm.accounting.DEFAULT_DELTA`.
DEFAULT_DELTA = _accounting_default_delta


def budget_from(
    epsilon: float | None,
    delta: float | None,
    validation_epsilon: float | None,
    validation_delta: float | None,
    spell: Callable[[str], str] = lambda k: f"`{k}`",
) -> Any:
    """The :class:`dpsumm.Budget` of an entry point's inputs (None when no epsilon is given); a delta left out is
    :data:`DEFAULT_DELTA`. ``spell`` names the inputs in errors (``"--validation-budget"``)."""
    if epsilon is None and validation_epsilon is None:
        for name, value in (("delta", delta), ("validation_delta", validation_delta)):
            if value is not None:
                raise InvalidParameterError(f"{spell(name)} was given without its epsilon", name)
        return None
    if validation_epsilon is None:
        raise InvalidParameterError(
            f"{spell('epsilon')} needs {spell('validation_epsilon')} too (every private "
            "method releases from the validation set)",
            "validation_epsilon",
        )
    if epsilon is None and delta is not None:
        raise InvalidParameterError(f"{spell('delta')} was given without {spell('epsilon')}", "delta")
    try:
        return Budget(
            epsilon,
            (DEFAULT_DELTA if delta is None else delta) if epsilon is not None else None,
            validation_epsilon,
            DEFAULT_DELTA if validation_delta is None else validation_delta,
        )
    except InvalidParameterError as exc:
        arg = getattr(exc, "argument", None)
        if arg and exc.args:
            exc.args = (str(exc.args[0]).replace(f"`{arg}`", spell(arg), 1), *exc.args[1:])
        raise


_INT_TEXT = re.compile(r"[+-]?\d+")
_FLOAT_TEXT = re.compile(r"[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?")


def parse_label_set(text: object, spell: Callable[[str], str] = lambda k: f"`{k}`") -> tuple[Any, ...]:
    """``Nominations(label_set=...)`` from its text form, as an entry point takes it (a CLI flag, a Flower run config
    value, which are scalars): a JSON list (``'[0, 1, 2]'``, ``'["cat", "dog"]'``) or comma-separated labels
    (``"0,1,2"``; an item that reads as an integer or a decimal number is that number, any other item a string,
    spaces around items dropped). ``spell("label_set")`` names the input in errors (``"--label-set"``).

    Only the form is checked here; :class:`dpsumm.Nominations` checks the labels (distinct, finite, not mixing
    strings and numbers). :func:`label_set_text` writes the form back.

    Raises
    ------
    InvalidParameterError
        ``argument="label_set"``: not a string, an empty item, malformed JSON, or a JSON value that is not a list of
        numbers and strings.
    """
    name = spell("label_set")
    example = 'e.g. "0,1,2" or a JSON list such as \'["cat", "dog"]\''
    if not isinstance(text, str):
        raise InvalidParameterError(f"{name} must be a string of labels ({example}), got {text!r}", "label_set")
    body = text.strip()
    if not body:
        raise InvalidParameterError(f"{name} is empty: give the public labels ({example})", "label_set")
    if body.startswith("["):
        try:
            value = json.loads(body)
        except ValueError as exc:
            raise InvalidParameterError(f"{name} is not a valid JSON list ({exc}): {text!r}", "label_set") from None
        if not isinstance(value, list) or any(
            isinstance(v, bool) or not isinstance(v, (int, float, str)) for v in value
        ):
            raise InvalidParameterError(f"{name} must be a JSON list of numbers or strings, got {text!r}", "label_set")
        return tuple(value)
    out: list[Any] = []
    for item in body.split(","):
        item = item.strip()
        if not item:
            raise InvalidParameterError(f"{name} has an empty label in {text!r} ({example})", "label_set")
        if _INT_TEXT.fullmatch(item):
            out.append(int(item))
        elif _FLOAT_TEXT.fullmatch(item):
            out.append(float(item))
        else:
            out.append(item)
    return tuple(out)


def label_set_text(labels: Any) -> str:
    """The text form of a label set that :func:`parse_label_set` reads back to the same labels: comma-separated
    numbers (``"0,1,2"``) when every label is a number, else a compact JSON list (``'["cat","dog"]'``)."""
    values = [v.item() if hasattr(v, "item") else v for v in labels]
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        text = ",".join(repr(v) for v in values)
        if parse_label_set(text) == tuple(values) and [type(v) for v in parse_label_set(text)] == [
            type(v) for v in values
        ]:
            return text
    return json.dumps(values, separators=(",", ":"))


def parse_levels(text: object, spell: Callable[[str], str] = lambda k: f"`{k}`") -> tuple[tuple[Any, ...], ...]:
    """``ByStrata(levels=...)`` from its text form (a CLI flag, a Flower run config value): a JSON list of lists
    (``'[["a", "b"], [0, 1]]'``) or attributes separated by ``;``, each a comma-separated list read as
    :func:`parse_label_set` reads one (``"a,b;0,1"``). The purchase checks the values; :func:`levels_text` writes
    the form back.

    Raises
    ------
    InvalidParameterError
        ``argument="levels"``: not a string, an empty attribute, or malformed JSON.
    """
    name = spell("levels")
    if not isinstance(text, str) or not text.strip():
        raise InvalidParameterError(
            f'{name} must be a non-empty string of levels (e.g. "a,b,c;0,1" or \'[["a","b"],[0,1]]\'), got {text!r}',
            "levels",
        )
    body = text.strip()
    if body.startswith("["):
        try:
            value = json.loads(body)
        except ValueError as exc:
            raise InvalidParameterError(f"{name} is not a valid JSON list ({exc}): {text!r}", "levels") from None
        if not isinstance(value, list) or not all(isinstance(v, list) for v in value):
            raise InvalidParameterError(f"{name} must be a JSON list of lists of values, got {text!r}", "levels")
        return tuple(tuple(v) for v in value)
    out = []
    for part in body.split(";"):
        try:
            out.append(parse_label_set(part, spell=lambda k: name))
        except InvalidParameterError as exc:
            raise InvalidParameterError(str(exc), "levels") from None
    return tuple(out)


def levels_text(levels: Any) -> str:
    """The text form of declared levels that :func:`parse_levels` reads back: ``;``-separated
    :func:`label_set_text` forms when each is comma-separated, else a compact JSON list of lists."""
    parts = [label_set_text(a) for a in levels]
    if not any(p.startswith("[") for p in parts):
        text = ";".join(parts)
        if parse_levels(text) == tuple(tuple(a) for a in levels):
            return text
    return json.dumps([list(a) for a in levels], separators=(",", ":"))
