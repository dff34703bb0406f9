"""What every summarization method shares: the method-object contract and the public setup of one run.

A *method object* (:class:`dpsumm.Nominations`, :class:`dpsumm.PaperProtocol`, ... one per method, each in its
protocol's module) is a small frozen dataclass that owns its public options, their one default, their
validation (at construction, before any data is read or noise drawn) and how it runs over the shared parties
and transport. The entry points (:func:`dpsumm.summarize`, the CLI, the Flower ServerApp, the estimator, the
experiments) all build one, then

1. :meth:`SummaryMethod.plan` checks the run's shape against the options (summary size, owners, rows, the
   privacy budget) and decides the public rows the run needs (the paper's ``D_init``, or the sample of the
   median heuristic) - every configuration error is raised here, before any noise is drawn;
2. :func:`public_setup` draws the public seed rows and chooses the kernel width and h1 (the same for every
   entry point);
3. :meth:`SummaryMethod.run` runs the protocol through ``setup.transport`` and returns the
   :class:`~dpsumm.SummaryResult`.
"""

from __future__ import annotations

import dataclasses
import difflib
import logging
import numbers
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar

import numpy as np

from .. import accounting
from .._validation import FLOAT32_MAX, Interval, OneOf, float_matrix, real_pair, seed_value
from ..errors import InvalidParameterError
from ..hashing import MAX_DIM, RFFHasher
from ..preprocessing import check_kernel, median_gamma
from ..privacy import Csprng
from ..results import Access, SummaryResult
from ..transport import CheckedTransport, Transport

__all__ = [
    "OptionsObject",
    "option",
    "dim_option",
    "hash_seed_option",
    "reveal_option",
    "SummaryMethod",
    "Plan",
    "RunShape",
    "RunSetup",
    "LocalData",
    "public_setup",
    "MEDIAN_SAMPLE_ROWS",
    "MAX_SEED_CELLS",
    "MethodOptionError",
    "MAX_COUNT",
    "BaseAggregator",
    "HashedConfig",
]

_log = logging.getLogger("dpsumm")

#: Public rows generated for the median heuristic (``gamma="median"``) when the user gives no seed set.
MEDIAN_SAMPLE_ROWS = 150
#: Largest count a method option may hold (rows nominated, candidates, MWEM steps): beyond any data set, and
#: within the 64-bit integers every party and the wire use.
MAX_COUNT = 1 << 40
#: Largest number of values (rows x features) of a generated seed set.
MAX_SEED_CELLS = 1 << 26

_M = TypeVar("_M", bound="OptionsObject")
_C = TypeVar("_C", bound="HashedConfig")


class MethodOptionError(InvalidParameterError, TypeError):
    """An option given where it does not belong (a method's option passed to ``summarize``, an option the chosen
    method does not have, or a misspelled one). Also a :class:`TypeError`, as Python's own unexpected-keyword
    error is."""


@dataclass(frozen=True)
class Plan:
    """What a method decides from the run's shape, before any data is read in bulk or noise drawn.

    Attributes
    ----------
    seed_rows : int
        Public rows to generate (uniform in the public box) when the user gives no seed set; 0 for none.
    uses_seed : bool
        The protocol itself uses the seed rows (the paper's ``D_init``), not only the median heuristic.
    schedule : dpsumm.accounting.Schedule or None
        The paper's privacy schedule (calibrated to the budget when one was given).
    """

    seed_rows: int
    uses_seed: bool = False
    schedule: accounting.Schedule | None = None


@dataclass(frozen=True)
class RunShape:
    """A run's shape as :meth:`SummaryMethod.plan` checks it against the options (its parameters, one object)."""

    size: int
    owners: int
    owner_rows: list[int] | None
    validation_rows: int | None
    privacy: accounting.Budget | None
    gamma_median: bool
    transport_given: bool = False


@dataclass
class LocalData:
    """Every party's rows in this process: what the central baselines need (never the private protocols)."""

    datas: list[np.ndarray]
    labels: list[np.ndarray | None]
    validation: np.ndarray
    rng_uniform: Csprng


@dataclass
class RunSetup:
    """The validated public inputs of one run, as the aggregator holds them.

    ``transport`` reaches the owners (named ``owners``) and the consumer (named ``consumer``); ``rng`` is the
    aggregator's stream; ``local`` is set only when every party's data is in this process (in-process runs);
    ``public_rows`` is each owner's public size when the entry point knows it (in process: the rows it was given; on
    Flower: the run config's ``owner-rows``), against which the aggregator checks every row count an owner states.
    """

    transport: Transport | None
    owners: list[str]
    consumer: str
    n_features: int
    size: int
    hasher: RFFHasher
    seed: np.ndarray
    plan: Plan
    privacy: accounting.Budget | None
    rng: Csprng
    seeded: bool
    progress: bool
    started: float
    validation_rows: int | None = None
    with_labels: bool | None = None
    local: LocalData | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    public_rows: dict[str, int] | None = None

    def __post_init__(self) -> None:
        if self.public_rows is None and self.local is not None:  # every owner's rows are here: their sizes are known
            self.public_rows = {o: int(d.shape[0]) for o, d in zip(self.owners, self.local.datas)}


def option(default: Any, *, help: str, constraint: Interval | OneOf | None = None, parse: str | None = None) -> Any:
    """One option of a method or purchase object, declared once: its default, its help text and its ``constraint``
    (an :class:`~dpsumm._validation.Interval` or :class:`~dpsumm._validation.OneOf`, checked at construction by
    :class:`OptionsObject`, the value None passing when it is the default; ``parse`` names a text form the command
    line and the Flower run config read it from, e.g. ``"label_set"``). The CLI flags, the run config keys and the
    docs' option tables are made from these declarations."""
    return field(default=default, metadata={"help": help, "parse": parse, "constraint": constraint})


def dim_option(default: int) -> Any:
    """h1's ``dim`` option (every method that hashes has one), ``default`` its own."""
    return option(default, help="random features d of h1", constraint=Interval(int, 1, MAX_DIM))


def reveal_option() -> Any:
    """What the aggregator receives of a row it buys: ``reveal`` (the paper's methods and nominations)."""
    return option(
        "points",
        help="points (default; the aggregator gets the raw rows it buys) or hashes (only their h1)",
        constraint=OneOf(("points", "hashes")),
    )


def hash_seed_option() -> Any:
    """h1's ``hash_seed`` option (every method that hashes has one)."""
    return option(0, help="public seed of h1")


class _MethodType(type):
    """The options objects' metaclass: an option the method does not have (misspelled, or another method's) or too
    many positional arguments is a :class:`MethodOptionError` naming it and where it belongs, not the bare
    ``TypeError`` of the dataclass ``__init__``."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        kwargs = cls._legacy_options(kwargs)  # type: ignore[attr-defined]
        if dataclasses.is_dataclass(cls):
            names = [f.name for f in dataclasses.fields(cls) if f.init]
            if len(args) > len(names):
                raise MethodOptionError(
                    f"{cls.__name__} takes at most {len(names)} options positionally "
                    f"({', '.join(names)}), got {len(args)}: pass options by keyword",
                    names[-1] if names else "args",
                )
            unknown = sorted(k for k in kwargs if k not in names)
            if unknown:
                key = unknown[0]
                where = sorted(
                    {
                        c.__name__
                        for c in _method_classes(OptionsObject)
                        if c is not cls and dataclasses.is_dataclass(c) and c.name and key in c.option_names()
                    }
                )
                if where:
                    hint = f"; it is an option of {', '.join('dpsumm.' + o for o in where)}"
                else:
                    close = difflib.get_close_matches(key, names, n=1)
                    hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise MethodOptionError(
                    f"{cls.__name__} has no option `{key}` (its options: "
                    f"{', '.join(names) if names else 'none'}){hint}",
                    key,
                )
        return super().__call__(*args, **kwargs)


def _method_classes(base: type) -> list[type]:
    """Every subclass of ``base`` defined so far."""
    out: list[type] = []
    subs: list[type] = base.__subclasses__()
    for sub in subs:
        out += [sub, *_method_classes(sub)]
    return out


class OptionsObject(metaclass=_MethodType):
    """Base of the method and purchase objects: scikit-learn style parameters, a readable repr, validation at
    construction.

    Subclasses are frozen dataclasses (``@dataclass(frozen=True, repr=False)``) whose fields are their public
    options, each with its one default. They are immutable, hashable, comparable and picklable: :meth:`set_params`
    returns a new, validated object.
    """

    #: The object's name (a method's ``summarize(..., method=name)``; a purchase's ``--purchase NAME``).
    name: ClassVar[str] = ""

    def __post_init__(self) -> None:
        self._check_constraints()
        self._validate()

    def _check_constraints(self) -> None:
        """Every option's declared constraint (:func:`option`), in declaration order: the value checked and
        normalised (an int, a float), or :class:`~dpsumm.InvalidParameterError` naming the option."""
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            constraint = f.metadata.get("constraint")
            value = getattr(self, f.name)
            if constraint is None or (value is None and f.default is None):
                continue
            object.__setattr__(self, f.name, constraint.check(value, f.name))

    @classmethod
    def _legacy_options(cls, kwargs: dict[str, Any]) -> dict[str, Any]:
        """Keywords of an earlier release rewritten to today's (with a DeprecationWarning); none by default."""
        return kwargs

    def _validate(self) -> None:
        """Check and normalise every option (subclasses extend it); raises naming the option."""

    # -- scikit-learn style parameters -------------------------------------------------------------

    @classmethod
    def option_names(cls) -> tuple[str, ...]:
        """The method's options, in declaration order."""
        return tuple(f.name for f in dataclasses.fields(cls))  # type: ignore[arg-type]

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The method's options as a dict (scikit-learn's ``get_params``)."""
        return {name: getattr(self, name) for name in self.option_names()}

    def set_params(self: _M, **params: Any) -> _M:
        """A copy with ``params`` changed, validated like the constructor.

        Method objects are immutable, so unlike a scikit-learn estimator this returns the new object and
        leaves ``self`` unchanged: ``method = method.set_params(nominees=400)``.
        """
        unknown = [k for k in params if k not in self.option_names()]
        if unknown:
            raise MethodOptionError(
                f"{type(self).__name__} has no option {unknown[0]!r}; its options are {', '.join(self.option_names())}",
                unknown[0],
            )
        return dataclasses.replace(self, **params)  # type: ignore[type-var]

    def changed_params(self) -> dict[str, Any]:
        """The options that differ from their defaults."""
        out = {}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            default = f.default if f.default is not dataclasses.MISSING else None
            value = getattr(self, f.name)
            if not _same(value, default):
                out[f.name] = value
        return out

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self.changed_params().items())
        return f"{type(self).__name__}({shown})"


@dataclass
class PartyData:
    """What :func:`dpsumm.summarize` hands a method's input check (:meth:`SummaryMethod.check_party_data`) before any
    budget is spent: the owners' names, rows and labels (checked), their strata and the validation rows' labels and
    strata as given; the check returns them as the run's parties read them (strata as columns, None where unread)."""

    names: list[str]
    datas: list[np.ndarray]
    labels: list[np.ndarray | None]
    strata: list[Any]
    validation_rows: int
    validation_labels: Any = None
    validation_strata: Any = None
    transport_given: bool = False


def refuse_unread(method: Any, data: PartyData) -> PartyData:
    """``data`` for a method that reads no validation labels and no strata: refuses the consumer's (InvalidParameterError
    naming the argument); the owners' labels stand (they go along with the rows bought), their strata are left aside
    (one list of owners serves every method)."""
    if data.validation_labels is not None:
        raise InvalidParameterError(
            f"`validation_labels` applies only to a purchase by label (the default crossed with the labels: "
            f"Nominations(purchase=ByDirection(label_set=...)); or ByLabel(label_set=...)), not to {method!r}",
            "validation_labels",
        )
    if data.validation_strata is not None:
        raise InvalidParameterError(
            f"`validation_strata` applies only to a purchase by strata (the default crossed with them: "
            f"Nominations(purchase=ByDirection(levels=...)); or ByStrata(levels=...)), not to {method!r}",
            "validation_strata",
        )
    # owners built with strata serve every method: one that reads none leaves them aside
    return dataclasses.replace(data, strata=[None] * len(data.strata))


#: The advice of a poor fit to ``D_v`` (:meth:`SummaryMethod.fit_advice`) for every method but the default.
TRY_THE_DEFAULT = (
    "the owners may hold few rows like D_v, or the method did not reach them: try the default, "
    "dpsumm.Nominations() (3 x size raw rows by cells along the consumer's released direction)"
)


class SummaryMethod(OptionsObject):
    """Base of the method objects (:class:`dpsumm.Nominations`, :class:`dpsumm.PaperProtocol`, ...)."""

    #: Whether a run spends and certifies a privacy budget (``privacy=`` applies).
    private: ClassVar[bool] = False
    #: Whether the method runs over parties and a transport (in process or on Flower); the central baselines
    #: need every row in this process.
    distributed: ClassVar[bool] = True

    @property
    def needs_labels(self) -> bool:
        """Whether a run needs the owners' and the consumer's labels (``validation_labels``)."""
        return False

    def public_labels(self) -> tuple[Any, ...] | None:
        """The public label set the run's labels are read against (None: the method reads no labels)."""
        return None

    @property
    def needs_strata(self) -> bool:
        """Whether a run needs the owners' and the consumer's strata (``validation_strata``)."""
        return False

    def public_levels(self) -> tuple[tuple[Any, ...], ...] | None:
        """The declared strata levels the run's strata are read against (None: the method reads no strata)."""
        return None

    def check_party_data(self, data: PartyData, size: int) -> PartyData:
        """The parties' labels and strata as a run reads them, checked before any budget is spent
        (InvalidParameterError naming the argument): a method that reads none refuses them."""
        return refuse_unread(self, data)

    @property
    def reads_seed_rows(self) -> bool:
        """Whether the protocol itself reads the run's public seed rows (the paper's ``D_init``, a purchase's cells),
        beyond the median heuristic: an experiment then passes its split's public rows as ``seed_set``."""
        return False

    def fit_advice(self) -> str:
        """What a user whose summary fits ``D_v`` no better than random rows of it would do (the advice of the
        :class:`~dpsumm.metrics.SummaryFitWarning` of a private run of this method): by default, the default
        purchase."""
        return TRY_THE_DEFAULT

    def generated_seed_warning(self) -> str | None:
        """Why rows drawn uniformly in ``feature_range`` would mislead this method when the user gives no seed set
        (:func:`dpsumm.summarize` warns with it), or None."""
        return None

    def _validate(self) -> None:
        if hasattr(self, "hash_seed"):
            object.__setattr__(self, "hash_seed", seed_value(self.hash_seed, "hash_seed"))

    # -- the run -----------------------------------------------------------------------------------

    def plan(
        self,
        *,
        size: int,
        owners: int,
        owner_rows: list[int] | None,
        validation_rows: int | None,
        privacy: accounting.Budget | None,
        gamma_median: bool,
        transport_given: bool = False,
    ) -> Plan:
        """Check the run's shape against the options and decide the public rows; raises before any noise.

        Parameters
        ----------
        size : int
            Summary size.
        owners : int
            Number of owners.
        owner_rows : list of int or None
            Each owner's row count, when the entry point knows them (in process); None on Flower.
        validation_rows : int or None
            ``|D_v|`` when known.
        privacy : dpsumm.Budget or None
        gamma_median : bool
            ``gamma="median"``: the run needs public rows for the median heuristic.
        transport_given : bool
            The parties are reached through a user's transport, not built from local data.
        """
        return self._plan(RunShape(size, owners, owner_rows, validation_rows, privacy, gamma_median, transport_given))

    def _plan(self, shape: RunShape) -> Plan:
        """:meth:`plan` on the run's shape (a subclass extends it, calling ``super()._plan(shape)`` first)."""
        size, owner_rows, privacy = shape.size, shape.owner_rows, shape.privacy
        if privacy is not None and not isinstance(privacy, accounting.Budget):
            raise InvalidParameterError("`privacy` must be a dpsumm.Budget or None", "privacy")
        if privacy is not None and not self.private:
            raise InvalidParameterError(
                f"`privacy` was given but method {self.name!r} is not private (no budget is spent or certified); "
                "use a private method (Nominations or PaperProtocol) or drop `privacy`",
                "privacy",
            )
        if shape.transport_given and not self.distributed:
            raise InvalidParameterError(
                f"method {self.name!r} is a central baseline: it needs every row in this process, so `transport` "
                "does not apply",
                "transport",
            )
        if owner_rows is not None and size > sum(owner_rows):
            raise InvalidParameterError(f"`size` ({size}) exceeds the owners' total rows ({sum(owner_rows)})", "size")
        return Plan(seed_rows=MEDIAN_SAMPLE_ROWS if shape.gamma_median else 0)

    def planned_spend(self, privacy: accounting.Budget | None, plan: Plan) -> dict[str, tuple[float, float]]:
        """What a run of ``plan`` will ask each party to spend, before anything is sent: ``"consumer"`` its
        ``(epsilon_v, delta_v)``, ``"owners"`` each owner's own releases' ``(epsilon, delta)``; a party that
        releases nothing under a budget is left out (a Flower node checks its caps against it:
        :func:`dpsumm.flower.caps.check_run_caps`)."""
        return {}

    def run(self, setup: RunSetup) -> SummaryResult:
        """Run the method; see the subclasses."""
        raise NotImplementedError


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return a is b
    try:
        return bool(a == b) and type(a) is type(b)
    except Exception:  # noqa: BLE001 - an uncomparable value is shown
        return False


# ------------------------------------------------------------------------------------------ public setup


def check_seed_count(count: int, n_features: int) -> int:
    """A ``seed_set`` given as a count of rows to generate: ``>= 0`` and at most :data:`MAX_SEED_CELLS` values,
    checked whether or not the run draws them (a count no run could use is refused, not ignored)."""
    m = int(count)
    if m < 0:
        raise InvalidParameterError(f"`seed_set` as a count must be >= 0, got {m}", "seed_set")
    if m * n_features > MAX_SEED_CELLS:
        raise InvalidParameterError(
            f"`seed_set`: {m} generated rows of {n_features} features exceed the cap of {MAX_SEED_CELLS} values",
            "seed_set",
        )
    return m


def _seed_rows(
    seed_set: object, count: int, n_features: int, feature_range: tuple[float, float], rng: Csprng
) -> np.ndarray:
    """The public seed set: the user's array, or ``count`` rows uniform in the public box ``feature_range``."""
    if seed_set is None or (isinstance(seed_set, numbers.Integral) and not isinstance(seed_set, bool)):
        m = check_seed_count(count if seed_set is None else int(seed_set), n_features)
        lo, hi = real_pair(feature_range, "feature_range")
        if m and not max(abs(lo), abs(hi)) <= FLOAT32_MAX:  # the rows are float32: (0, 1e308) would overflow
            raise InvalidParameterError(
                f"`feature_range` must lie within the float32 range (|x| <= {FLOAT32_MAX:.3g}) for the {m} seed rows "
                f"generated in it, got ({lo:g}, {hi:g})",
                "feature_range",
            )
        # The same stream as m * n_features calls of rng.uniform(), drawn in one call.
        u = np.asarray(rng.uniform_array(m * n_features), dtype=np.float64).reshape(m, n_features)
        return (lo + (hi - lo) * u).astype(np.float32)
    return float_matrix(seed_set, "seed_set", n_features=n_features, allow_empty=True)


def public_setup(
    method: SummaryMethod,
    plan: Plan,
    *,
    seed_set: object,
    gamma: float | str,
    feature_range: tuple[float, float],
    n_features: int,
    rng_seed: Csprng,
    validation: np.ndarray | None = None,
) -> tuple[np.ndarray, RFFHasher]:
    """The run's public rows and h1: the same for :func:`dpsumm.summarize` and the Flower ServerApp.

    Public seed rows are drawn when the method uses them or ``gamma="median"`` needs them: the user's
    ``seed_set`` array, or ``seed_set`` (a count; default ``plan.seed_rows``) rows uniform in ``feature_range``.
    ``gamma="median"`` is :func:`dpsumm.median_gamma` of those public rows. A degenerate kernel warns
    (:class:`dpsumm.preprocessing.DegenerateKernelWarning`), checked on the public rows, or on ``validation`` when given and the
    rows were generated.
    """
    user_seed = not (seed_set is None or isinstance(seed_set, numbers.Integral))
    if isinstance(seed_set, numbers.Integral) and not isinstance(seed_set, bool):
        check_seed_count(int(seed_set), n_features)
    seed = np.zeros((0, n_features), np.float32)
    if plan.uses_seed or gamma == "median":
        seed = _seed_rows(seed_set, plan.seed_rows, n_features, feature_range, rng_seed)
    if gamma == "median":
        if seed.shape[0] < 2:
            raise InvalidParameterError(
                "gamma='median' (the default) needs a seed set of at least two public rows: give `seed_set` more "
                "rows, or a number as gamma",
                "seed_set" if user_seed or seed_set is not None else "gamma",
            )
        try:
            g = median_gamma(seed)
        except InvalidParameterError as exc:  # the rows are the user's seed set, or generated in feature_range
            raise InvalidParameterError(f"gamma='median': {exc}", "seed_set" if user_seed else "feature_range") from exc
        _log.info("gamma='median': %.6g from %d public seed rows", g, seed.shape[0])
        if not user_seed and validation is not None:  # generated rows in the public box: the data may not live there
            check_kernel(validation, g, what="the validation rows (gamma='median' of generated seed rows)")
    else:
        g = float(gamma)
        if user_seed and seed.shape[0] >= 2:
            check_kernel(seed, g, what="the public seed set")
        elif validation is not None:
            check_kernel(validation, g, what="the validation rows")
    dim = int(method.dim)  # type: ignore[attr-defined]
    hash_seed = method.hash_seed  # type: ignore[attr-defined]
    return seed, RFFHasher(n_features, dim=dim, gamma=g, seed=hash_seed)


# ------------------------------------------------------------------------------------------ the aggregators


@dataclass(frozen=True)
class HashedConfig:
    """h1 as an aggregator's public config states it: the base of each protocol's config (the paper's
    ``ProtocolConfig``, the nominations' ``NominationsConfig``)."""

    n_features: int
    dim: int
    gamma: float
    hash_seed: int | str

    def h1_fields(self, dim: int | None = None, hash_seed: int | str | None = None) -> dict[str, Any]:
        """h1's numbers as a request carries them to a party, which builds the same h1 from them; ``dim`` and
        ``hash_seed`` given: a second hasher's (the cells')."""
        return {
            "n_features": self.n_features,
            "dim": self.dim if dim is None else dim,
            "gamma": self.gamma,
            "hash_seed": self.hash_seed if hash_seed is None else hash_seed,
        }


class BaseAggregator(Generic[_C]):
    """What the protocols' trusted aggregators share (the paper's and the nominations'): the parties they reach
    through ``transport``, their public ``config`` and h1, which owners are still in the run, the rows each sold,
    the run's events, and how the rows chosen become the :class:`~dpsumm.SummaryResult`.

    ``record`` puts a privacy-relevant release on the run's ledger (its arguments are the protocol's).
    """

    def __init__(
        self,
        transport: Transport,
        owners: list[str],
        consumer: str,
        config: _C,
        rng: Csprng,
        record: Callable[..., None] | None = None,
    ) -> None:
        self.transport = CheckedTransport(transport)  # a whole message from every party asked, or PartyUnavailable
        self.owners = list(owners)
        self.consumer = consumer
        self.config = config
        self.rng = rng
        self.record = record or (lambda *a, **k: None)
        self.hasher = RFFHasher(config.n_features, dim=config.dim, gamma=config.gamma, seed=config.hash_seed)
        self.active = {o: True for o in self.owners}
        self.accessed = {o: 0 for o in self.owners}
        self.n_rows: dict[str, int] = {}
        self.events: list[dict[str, Any]] = []
        #: Whether the owners' rows are labelled (a row sold without its label is refused); None: not known.
        self.with_labels: bool | None = None

    def hashes_of(self, rows: np.ndarray) -> np.ndarray | None:
        """h1 of rows a party sent (finite, of the run's width), or None when h1 cannot hash them (a value beyond
        the float32 range, or whose projection is): the party's fault, not the run's."""
        try:
            return self.hasher.transform(rows)
        except InvalidParameterError:
            return None

    def exclude(self, owner: str, reason: str, when: dict[str, Any]) -> dict[str, Any] | None:
        """Exclude ``owner`` from the rest of the run with an event (``when``: the phase or round, then the owner
        and ``reason``); the event, or None when the owner was already out."""
        if not self.active.get(owner, False):
            return None
        self.active[owner] = False
        event = {**when, "owner": owner, "event": "excluded", "reason": reason}
        self.events.append(event)
        return event

    def summary_result(
        self,
        chosen: Sequence[tuple[str, int]],
        values: Sequence[float] | np.ndarray,
        rows: tuple[np.ndarray | None, np.ndarray, np.ndarray | None],
        *,
        accessed: Access,
        privacy: accounting.Ledger | None,
        method: str,
        started: float,
        extra: dict[str, Any],
        trace: list[Any] | None = None,
        schedule: accounting.Schedule | None = None,
    ) -> SummaryResult:
        """The run's result from the rows ``chosen`` (``(owner, row index)`` in the order chosen), each one's gain
        in the greedy (``values``, summed per owner as its contribution) and their ``rows`` (points or None, h1
        hashes, labels or None); ``started`` is the run's start on :func:`time.perf_counter`."""
        position = {name: k for k, name in enumerate(self.owners)}
        owner = np.array([position[o] for o, _ in chosen], dtype=np.int64)
        contribution = np.zeros(len(self.owners))
        for k, v in zip(owner, values):
            contribution[k] += v
        points, hashes, labels = rows
        return SummaryResult(
            points=points,
            hashes=hashes,
            labels=labels,
            owner=owner,
            index=np.array([i for _, i in chosen], dtype=np.int64),
            owner_names=list(self.owners),
            accessed=accessed,
            contribution=contribution,
            privacy=privacy,
            trace=[] if trace is None else trace,
            events=list(self.events),
            hasher=self.hasher,
            method=method,
            schedule=schedule,
            seconds=time.perf_counter() - started,
            extra=extra,
        )
