"""The method objects by name, and the one way every entry point builds them.

:func:`dpsumm.summarize`, the CLI (``--method`` and its options), the Flower run config and
:class:`dpsumm.Summarizer` all turn their inputs into a method object here, so each option has one default (on
its method's class) and one validation. An option the chosen method does not have is refused with the name
the user wrote (a keyword, a CLI flag or a run-config key) and where it belongs.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from typing import Any

from .protocols.base import MethodOptionError, SummaryMethod
from .protocols.baselines import CentralGreedy, ExactGreedy, Uniform
from .protocols.nominations import Nominations
from .protocols.paper import PaperGreedy, PaperProtocol

__all__ = ["METHOD_CLASSES", "METHODS", "DEFAULT_DELTA", "budget_from", "resolve_method", "method_from_options", "misplaced_options",
           "SummaryMethod", "MethodOptionError", "Nominations", "PaperProtocol", "PaperGreedy", "CentralGreedy",
           "ExactGreedy", "Uniform"]

#: Every method class by its name, recommended first.
METHOD_CLASSES: dict[str, type[SummaryMethod]] = {
    cls.name: cls for cls in (Nominations, PaperProtocol, CentralGreedy, PaperGreedy, ExactGreedy, Uniform)
}
#: The method names (``summarize(..., method=name)`` runs that method with its defaults).
METHODS: tuple[str, ...] = tuple(METHOD_CLASSES)


def resolve_method(method: object) -> SummaryMethod:
    """A method object from ``method``: the object itself, or a name meaning that method's defaults."""
    if isinstance(method, SummaryMethod):
        return method
    if isinstance(method, type) and issubclass(method, SummaryMethod):
        return method()
    if isinstance(method, str) and method in METHOD_CLASSES:
        return METHOD_CLASSES[method]()
    hint = ""
    if isinstance(method, str):
        close = difflib.get_close_matches(method, METHODS, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise MethodOptionError(
        f"`method` must be a method object (dpsumm.Nominations(), dpsumm.PaperProtocol(), ...) or one of "
        f"{', '.join(repr(m) for m in METHODS)}, got {method!r}{hint}", "method")


def _owners_of(option: str) -> list[str]:
    return [cls.__name__ for cls in METHOD_CLASSES.values() if option in cls.option_names()]


def method_from_options(method: object, options: Mapping[str, Any],
                        spell: Callable[[str], str] = lambda k: f"`{k}`") -> SummaryMethod:
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
    for key in options:
        if key not in own:
            where = _owners_of(key)
            raise MethodOptionError(
                f"{spell(key)} does not apply to method {base.name!r} ({type(base).__name__} has "
                f"{', '.join(own) if own else 'no options'})"
                + (f"; it is an option of {', '.join(where)}" if where else ""), key)
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


def misplaced_options(options: Mapping[str, Any], method: object, where: str = "summarize") -> MethodOptionError:
    """The error for keywords given to ``where`` that belong to a method object (or to nothing)."""
    key = sorted(options)[0]
    owners = _owners_of(key)
    if owners:
        cls: Any = METHOD_CLASSES.get(method) if isinstance(method, str) else type(method)
        example: str = cls.__name__ if cls is not None and key in getattr(cls, "option_names", lambda: ())() else owners[0]
        return MethodOptionError(
            f"`{key}` is an option of {', '.join('dpsumm.' + o for o in owners)}, not of {where}(): pass it on the "
            f"method object, e.g. {where}(..., method=dpsumm.{example}({key}=...))", key)
    everything = sorted({o for cls in METHOD_CLASSES.values() for o in cls.option_names()})
    close = difflib.get_close_matches(key, everything, n=1)
    hint = f" (did you mean {close[0]!r}, an option of {', '.join(_owners_of(close[0]))}?)" if close else ""
    return MethodOptionError(f"{where}() got an unexpected keyword `{key}`{hint}", key)


#: The delta of a budget an entry point builds when the user gives an epsilon without its delta (the CLI's
#: ``--budget``/``--validation-budget``, the Flower run config's ``budget-*`` keys).
DEFAULT_DELTA = 1e-6


def budget_from(epsilon: float | None, delta: float | None, validation_epsilon: float | None,
                validation_delta: float | None, spell: Callable[[str], str] = lambda k: f"`{k}`") -> Any:
    """The :class:`dpsumm.Budget` of an entry point's inputs (None when no epsilon is given); a delta left out is
    :data:`DEFAULT_DELTA`. ``spell`` names the inputs in errors (``"--validation-budget"``)."""
    from .accounting import Budget
    from .errors import InvalidParameterError

    if epsilon is None and validation_epsilon is None:
        for name, value in (("delta", delta), ("validation_delta", validation_delta)):
            if value is not None:
                raise InvalidParameterError(f"{spell(name)} was given without its epsilon", name)
        return None
    if validation_epsilon is None:
        raise InvalidParameterError(f"{spell('epsilon')} needs {spell('validation_epsilon')} too (every private "
                                    "method releases from the validation set)", "validation_epsilon")
    if epsilon is None and delta is not None:
        raise InvalidParameterError(f"{spell('delta')} was given without {spell('epsilon')}", "delta")
    try:
        return Budget(epsilon, (DEFAULT_DELTA if delta is None else delta) if epsilon is not None else None,
                      validation_epsilon, DEFAULT_DELTA if validation_delta is None else validation_delta)
    except InvalidParameterError as exc:
        arg = getattr(exc, "argument", None)
        if arg and exc.args:
            exc.args = (str(exc.args[0]).replace(f"`{arg}`", spell(arg), 1), *exc.args[1:])
        raise
