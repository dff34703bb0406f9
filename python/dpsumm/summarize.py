"""``dpsumm.summarize``: build a summary with every party in this process (or through a user's transport).

What every method shares is here; each method's own options live on its method object
(:mod:`dpsumm.methods`: :class:`~dpsumm.Nominations`, :class:`~dpsumm.PaperProtocol`, ...), which also runs it.
"""

from __future__ import annotations

import logging
import numbers
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Literal

import numpy as np

from . import accounting
from ._validation import (
    as_array,
    check_hashable,
    exc_text,
    float_matrix,
    float_matrix_peak,
    label_vector,
    positive_float,
    positive_int,
    real_pair,
)
from .errors import InvalidParameterError
from .hashing import RFFHasher
from .methods import METHODS, misplaced_options, resolve_method
from .metrics import SummaryFitWarning, validation_fit, validation_fit_warning
from .parties import ConsumerParty, OwnerParty, owner_stream
from .privacy import Csprng, check_random_state
from .protocols.base import LocalData, PartyData, Plan, RunSetup, SummaryMethod, check_seed_count, public_setup
from .results import Access, Owner, SummaryResult
from .sources import RowSource, is_row_path, open_rows, whole_rows
from .transport import InProcessTransport, Transport
from .types import ArrayLike, Method, RandomState

__all__ = ["Owner", "SummaryResult", "Access", "summarize", "METHODS"]

_log = logging.getLogger("dpsumm")
#: The consumer's party name in process (owners may not take it).
CONSUMER = "consumer"


# ------------------------------------------------------------------------------------------ validation


def _as_owners(
    owners: object,
) -> tuple[
    list[np.ndarray], list[np.ndarray | None], list[str], list[float], list[object], dict[str, Callable[[], None]]
]:
    """The owners' rows, labels and names, checked, each owner's ``max |x|`` from the same read of its rows (for
    :func:`check_hashable`), each owner's strata as given (checked by the method's
    :meth:`~dpsumm.protocols.base.SummaryMethod.check_party_data`), and the check before each message of the owners
    whose rows were read from a file (:func:`_open_owner`)."""
    if isinstance(owners, np.ndarray) or not isinstance(owners, Sequence) or len(owners) == 0:
        raise InvalidParameterError("`owners` must be a non-empty list of arrays or dpsumm.Owner", "owners")
    datas, labels, names, peaks, strata = [], [], [], [], []
    checks: dict[str, Callable[[], None]] = {}
    n_features: int | None = None
    for k, o in enumerate(owners):
        if isinstance(o, Owner):
            data, lab, name, st = o.data, o.labels, o.name or f"owner-{k}", o.strata
            src: RowSource | None
            if isinstance(data, RowSource):  # opened already (dpsumm.party_tables.open_party_table): as it is
                src = data
                data = src.data
                lab = src.labels if o.labels is None else o.labels
                st = src.strata if o.strata is None else o.strata
                checks[str(name)] = src.check_unchanged
            else:
                src = _open_owner(o, name) if is_row_path(data) or _is_chunks(data) else None
            if src is not None and src.data is not data:
                data = src.data
                lab = src.labels if isinstance(o.labels, str) else o.labels
                st = src.strata if _strata_columns(o.strata) is not None else o.strata
                checks[str(name)] = src.check_unchanged
            strata.append(st)
        else:
            data, lab, name, src = o, None, f"owner-{k}", None
            strata.append(None)
        if src is not None:  # checked, and its peak found, by the read that opened it
            arr, peak = data, src.peak
            if n_features is not None and arr.shape[1] != n_features:
                raise InvalidParameterError(
                    f"owner {name!r} has {arr.shape[1]} features, the first owner {n_features}", "owners"
                )
        else:
            arr, peak = float_matrix_peak(data, "owners", n_features=n_features)
        if n_features is None:
            n_features = arr.shape[1]
        if lab is not None:
            lab = as_array(lab, "owners")
            if lab.shape != (arr.shape[0],):
                raise InvalidParameterError(
                    f"labels of {name!r} must have shape ({arr.shape[0]},), got {lab.shape}", "owners"
                )
            # Sent with each row sold: numbers or strings (an object label could not be sent, and the owner would be
            # excluded mid-run, leaving a short summary).
            try:
                lab = label_vector(lab, f"labels of {name!r}", arr.shape[0], kinds="biufUS")
            except InvalidParameterError as exc:
                raise InvalidParameterError(str(exc), "owners") from None
        datas.append(arr)
        labels.append(lab)
        names.append(str(name))
        peaks.append(peak)
    if len(set(names)) != len(names):
        raise InvalidParameterError("owner names must be unique", "owners")
    if CONSUMER in names:
        raise InvalidParameterError(
            f"an owner may not be named {CONSUMER!r}: that is the consumer's party name", "owners"
        )
    if any(lab is None for lab in labels) and any(lab is not None for lab in labels):
        raise InvalidParameterError("give labels for every owner or for none", "owners")
    if any(st is None for st in strata) and any(st is not None for st in strata):
        raise InvalidParameterError("give strata for every owner or for none", "owners")
    return datas, labels, names, peaks, strata, checks


def _is_chunks(data: object) -> bool:
    """Whether an owner's ``data`` is an iterable of chunks (an iterator or generator, not an array-like)."""
    return isinstance(data, Iterator)


def _strata_columns(strata: object) -> list[str] | None:
    """An owner's strata given as column names of its parquet table, or None."""
    if isinstance(strata, str):
        return [strata]
    if isinstance(strata, Sequence) and strata and all(isinstance(c, str) for c in strata):
        return [str(c) for c in strata]
    return None


def _open_owner(o: Owner, name: str) -> RowSource:
    """An owner's rows read from a path or chunks (:func:`dpsumm.sources.open_rows`): its rows (a memory map or a
    :class:`~dpsumm.sources.ParquetRows`), its labels and strata (columns of a parquet table when named), the check
    its party makes before each message and ``max |x|`` over its rows."""
    lab_col = o.labels if isinstance(o.labels, str) else None
    try:
        return open_rows(
            o.data, labels=lab_col, strata=_strata_columns(o.strata), chunk_rows=o.chunk_rows, progress=o.progress
        )
    except InvalidParameterError as exc:
        exc.args = (f"owner {name!r}: {exc.args[0]}", *exc.args[1:])
        raise


#: Fewest validation rows a run takes: :func:`dpsumm.metrics.validation_fit` measures the summary against their
#: spread, which one row does not have.
MIN_VALIDATION_ROWS = 2


def _check_run_arguments(gamma: Any, privacy: object, progress: object, transport: object) -> tuple[bool, Any]:
    """``gamma`` (a positive number or ``"median"``: whether it is the median heuristic, and the checked value),
    ``privacy``, ``progress`` and ``transport`` of a run checked; InvalidParameterError naming the argument."""
    median = isinstance(gamma, str) and gamma == "median"
    if not (median or (isinstance(gamma, numbers.Real) and not isinstance(gamma, bool))):
        raise InvalidParameterError(
            f"`gamma` must be a positive number or 'median', got {type(gamma).__name__}", "gamma"
        )
    if not median:
        gamma = positive_float(gamma, "gamma")
    if privacy is not None and not isinstance(privacy, accounting.Budget):
        raise InvalidParameterError("`privacy` must be a dpsumm.Budget or None", "privacy")
    if not isinstance(progress, (bool, np.bool_)):
        raise InvalidParameterError(f"`progress` must be a bool, got {type(progress).__name__}", "progress")
    if transport is not None and not isinstance(transport, Transport):
        raise InvalidParameterError("`transport` must be a dpsumm.transport.Transport or None", "transport")
    return median, gamma


def _set_up(
    meth: SummaryMethod,
    *,
    size: int,
    datas: list[np.ndarray],
    peaks: list[float],
    names: list[str],
    validation: np.ndarray,
    privacy: accounting.Budget | None,
    median: bool,
    gamma: Any,
    seed_set: Any,
    feature_range: tuple[float, float],
    transport: Transport | None,
    rng: Csprng,
    progress: bool,
) -> tuple[Plan, np.ndarray, RFFHasher, tuple[Csprng, Csprng, Csprng]]:
    """The run's plan, public seed rows and h1, checked before any budget is spent (every row hashable), with its
    own progress bar (a calibration to a budget can take a moment); the consumer's, the aggregator's and the
    uniform baseline's streams."""
    K = len(datas)
    n_features = datas[0].shape[1]
    val = validation
    from tqdm.auto import tqdm

    # Setup has its own bar: a calibration to a budget can take a moment.
    setup_bar = tqdm(total=2, desc="setup", unit="step", disable=not progress, leave=False)
    try:
        t_plan = time.perf_counter()
        setup_bar.set_postfix_str(
            "checking the run" + (" and calibrating to the budget" if privacy is not None else "")
        )
        plan = meth.plan(
            size=size,
            owners=K,
            owner_rows=[int(d.shape[0]) for d in datas],
            validation_rows=int(val.shape[0]),
            privacy=privacy,
            gamma_median=median,
            transport_given=transport is not None,
        )
        if plan.schedule is not None and privacy is not None:
            _log.info(
                "calibrated the schedule to %s in %.2f s: %s",
                privacy,
                time.perf_counter() - t_plan,
                plan.schedule.describe().replace("\n", "; "),
            )
        if transport is not None:
            reachable = _transport_parties(transport)
            missing = [n for n in [*names, CONSUMER] if n not in reachable]
            if missing:
                raise InvalidParameterError(
                    f"`transport` does not reach the parties {missing}: it must hold every "
                    f"owner (by the owners' names) and {CONSUMER!r}",
                    "transport",
                )
        setup_bar.update(1)
        setup_bar.set_postfix_str("public rows, kernel width and h1")
        rng_seed, rng_consumer, rng_aggregator, rng_uniform = (
            rng.derive(s) for s in ("seed-set", "consumer", "aggregator", "uniform")
        )
        seed, hasher = public_setup(
            meth,
            plan,
            seed_set=seed_set,
            gamma=gamma,
            feature_range=feature_range,
            n_features=n_features,
            rng_seed=rng_seed,
            validation=val,
        )
        # Every row is hashed in float32: refuse rows whose projection would overflow, before any noise.
        # A number gamma the user chose is what makes rows unhashable; with "median" it is the data's scale.
        blame = None if median else "gamma"
        for d, peak in zip(datas, peaks):
            check_hashable(d, "owners", hasher, projection_blame=blame, peak=peak)
        check_hashable(val, "validation", hasher, projection_blame=blame)
        user_seed = isinstance(seed_set, np.ndarray)
        if seed.shape[0]:
            check_hashable(seed, "seed_set" if user_seed else "feature_range", hasher)
        note = meth.generated_seed_warning()
        if note is not None and not user_seed:
            warnings.warn(note, UserWarning, stacklevel=3)
        setup_bar.update(1)
    finally:
        setup_bar.close()
    return plan, seed, hasher, (rng_consumer, rng_aggregator, rng_uniform)


def _local_data(
    meth: SummaryMethod, datas: list[Any], labels: list[np.ndarray | None], val: np.ndarray, rng_uniform: Csprng
) -> LocalData:
    """The rows a method is run on in this process: a central method (not distributed) reads every owner's rows at
    once, so an owner read from a file is loaded whole for it (:func:`dpsumm.sources.whole_rows`)."""
    return LocalData(
        datas=datas if meth.distributed else [whole_rows(d) for d in datas],
        labels=labels,
        validation=val,
        rng_uniform=rng_uniform,
    )


def summarize(
    owners: Sequence[Owner | ArrayLike],
    validation: ArrayLike,
    size: int,
    method: SummaryMethod | Method = "nominations",
    *,
    privacy: accounting.Budget | None = None,
    gamma: float | Literal["median"] = "median",
    seed_set: ArrayLike | int | None = None,
    feature_range: tuple[float, float] = (0.0, 1.0),
    random_state: RandomState = None,
    progress: bool = True,
    transport: Transport | None = None,
    validation_labels: ArrayLike | None = None,
    validation_strata: Any = None,
    **options: Any,
) -> SummaryResult:
    """Build a summary of ``size`` rows from the owners' data whose MMD to ``validation`` is small.

    All parties run in this process and exchange typed messages through one transport. The default is the
    nominations protocol, whose ledger certifies every party (docs/explanation/design.md). Each method's own options are
    fields of its method object: ``summarize(owners, X_v, 200, dpsumm.Nominations(nominees=600))``.

    Parameters
    ----------
    owners : list of array-like or Owner
        Each owner's rows, shape (n_k, n_features).
    validation : array-like of shape (m, n_features)
        The consumer's validation rows (target distribution).
    size : int
        Summary size ``p`` (1 <= size <= total rows).
    method : method object or name, default="nominations"
        :class:`dpsumm.Nominations` (recommended: every party certified), :class:`dpsumm.PaperProtocol`
        (Sarpatwar et al. 2019, Alg. 3), or a non-private baseline: :class:`dpsumm.CentralGreedy`,
        :class:`dpsumm.PaperGreedy`, :class:`dpsumm.ExactGreedy`, :class:`dpsumm.Uniform`. A name
        (``"nominations"``, ``"paper"``, ``"central-greedy"``, ``"paper-greedy"``, ``"exact-greedy"``,
        ``"uniform"``) means that method with its defaults.
    privacy : dpsumm.Budget or None
        The budget a private method spends: nominations' validation release (a validation-only budget; None
        means ``Budget(validation_epsilon=1, validation_delta=1e-6)``, the delta lowered to ``0.01 / |D_v|`` for a
        validation set of more than 10,000 rows); the paper's protocol is calibrated to
        it (owners' and validation pairs; None runs the paper's schedule). Refused for a non-private method.
    gamma : float or "median", default="median"
        RBF kernel width, or ``"median"``: :func:`dpsumm.median_gamma` of the public seed rows.
    seed_set : array-like, int or None
        Public rows known to every party: the sample of ``gamma="median"`` and the paper methods' ``D_init``
        (removed from the returned summary). An array, a count of rows to generate uniformly in
        ``feature_range``, or None (150 generated rows for the median heuristic; the schedule's count for the
        paper's methods).
    feature_range : (float, float), default=(0.0, 1.0)
        The public box of generated seed rows.
    random_state : None, int or Csprng
        None draws every random bit from OS entropy (the only private mode). An int makes the run
        bit-for-bit reproducible and is NOT private (the ledger and the result say so).
    progress : bool, default=True
        Show progress bars (setup; the paper's rounds).
    transport : Transport, optional
        Deliver messages through this transport instead of in-process party objects (the parties must be
        named as the owners and ``"consumer"``). Not for the central baselines.
    validation_labels : array-like of shape (m,), optional
        The labels of the validation rows: needed by ``Nominations(purchase=ByLabel(label_set=...))`` (the label purchase, with labels
        for every owner), which releases their histogram; other methods refuse them.
    validation_strata : array-like, optional
        The public attributes of the validation rows (one attribute as a 1-D array, several as a 2-D array, a list
        of columns or a DataFrame), needed by ``Nominations(purchase=ByStrata(levels=...))`` with strata for every
        owner (``dpsumm.Owner(X, strata=...)``), which releases their histogram over the cells.
    **options
        Refused: a method's option belongs on its method object (the error says which).

    Returns
    -------
    SummaryResult
    """
    t0 = time.perf_counter()
    if options:
        raise misplaced_options(options, method)
    meth = resolve_method(method)
    median, gamma = _check_run_arguments(gamma, privacy, progress, transport)
    feature_range = real_pair(feature_range, "feature_range")
    rng = check_random_state(random_state)
    datas, labels, names, peaks, given_strata, checks = _as_owners(owners)
    n_features = datas[0].shape[1]
    val = float_matrix(validation, "validation", n_features=n_features)
    if val.shape[0] < MIN_VALIDATION_ROWS:  # before any release: the summary's fit to D_v needs two rows' spread
        raise InvalidParameterError(
            f"`validation` must have at least {MIN_VALIDATION_ROWS} rows (the summary's fit to D_v is measured "
            f"against their spread), got {val.shape[0]}",
            "validation",
        )
    size = positive_int(size, "size")
    # The method's (its purchase's) check of the parties' labels and strata, before any budget is spent.
    parties = meth.check_party_data(
        PartyData(
            names=names,
            datas=datas,
            labels=labels,
            strata=given_strata,
            validation_rows=int(val.shape[0]),
            validation_labels=validation_labels,
            validation_strata=validation_strata,
            transport_given=transport is not None,
        ),
        size,
    )
    labels, strata = parties.labels, parties.strata
    val_labels, val_strata = parties.validation_labels, parties.validation_strata
    for k, d in enumerate(datas):
        if d.shape[0] == 0:
            raise InvalidParameterError(f"owner {names[k]!r} has no rows", "owners")
    if seed_set is not None and not (isinstance(seed_set, numbers.Integral) and not isinstance(seed_set, bool)):
        seed_set = float_matrix(seed_set, "seed_set", n_features=n_features, allow_empty=True)
    elif seed_set is not None:
        check_seed_count(int(seed_set), n_features)  # type: ignore[arg-type]  # refused even when no seed row is drawn
    plan, seed, hasher, (rng_consumer, rng_aggregator, rng_uniform) = _set_up(
        meth,
        size=size,
        datas=datas,
        peaks=peaks,
        names=names,
        validation=val,
        privacy=privacy,
        median=median,
        gamma=gamma,
        seed_set=seed_set,
        feature_range=feature_range,
        transport=transport,
        rng=rng,
        progress=bool(progress),
    )
    seeded = bool(rng.is_seeded)
    _log.info(
        "summarize: method=%r size=%d owners=%d rows=%d features=%d gamma=%.6g dim=%d seeded=%s",
        *(meth, size, len(datas), sum(d.shape[0] for d in datas), n_features, hasher.gamma, hasher.dim, seeded),
    )
    if transport is None and meth.distributed:
        transport = _in_process(
            names, datas, labels, val, rng_consumer, random_state, val_labels, strata, val_strata, checks
        )
    setup = RunSetup(
        transport=transport,
        owners=names,
        consumer=CONSUMER,
        n_features=n_features,
        size=size,
        hasher=hasher,
        seed=seed,
        plan=plan,
        privacy=privacy,
        rng=rng_aggregator,
        seeded=seeded,
        progress=bool(progress),
        started=t0,
        validation_rows=int(val.shape[0]),
        with_labels=labels[0] is not None,
        local=_local_data(meth, datas, labels, val, rng_uniform),
    )
    return _finish(_check_fit(meth.run(setup), meth, val, hasher.gamma), seeded)


def _transport_parties(transport: Transport) -> list[str]:
    """The names ``transport.parties`` gives (a user's transport: read once, checked), or InvalidParameterError."""
    try:
        value = transport.parties
    except Exception as exc:  # noqa: BLE001 - a user's property may raise anything
        raise InvalidParameterError(f"`transport`: its parties cannot be read ({exc_text(exc)})", "transport") from None
    names = list(value) if isinstance(value, Iterable) and not isinstance(value, (str, bytes)) else None
    if names is None or not all(isinstance(n, str) for n in names):
        raise InvalidParameterError(
            f"`transport.parties` must be a list of party names, got {type(value).__name__}", "transport"
        )
    return names


def _in_process(
    names: list[str],
    datas: list[np.ndarray],
    labels: list[np.ndarray | None],
    validation: np.ndarray,
    rng_consumer: Csprng,
    random_state: object = None,
    validation_labels: np.ndarray | None = None,
    strata: list[list[np.ndarray] | None] | None = None,
    validation_strata: list[np.ndarray] | None = None,
    checks: dict[str, Callable[[], None]] | None = None,
) -> InProcessTransport:
    """Every party as an object in this process: one owner per name (its own noise stream for its DP
    releases: :func:`dpsumm.parties.owner_stream`), and the consumer."""
    strata = strata or [None] * len(names)
    parties: dict[str, Any] = {
        n: OwnerParty(d, lab, n, rng=owner_stream(random_state, n), strata=st, check=(checks or {}).get(n))
        for n, d, lab, st in zip(names, datas, labels, strata)
    }
    parties[CONSUMER] = ConsumerParty(validation, rng_consumer, labels=validation_labels, strata=validation_strata)
    return InProcessTransport(parties)


def _check_fit(result: SummaryResult, method: SummaryMethod, validation: np.ndarray, gamma: float) -> SummaryResult:
    """A private run's summary measured against ``D_v`` (:func:`dpsumm.metrics.validation_fit`, in
    ``result.extra["validation_fit"]``; the nominations protocol's aggregator records it itself), with a warning
    when it is no closer to ``D_v`` than as many rows drawn at random from ``D_v``'s own distribution would be.
    The consumer's own rows and the summary it receives only."""
    if result.privacy is None or result.points is None or not len(result.points):
        return result
    if "validation_fit" not in result.extra:
        result.extra["validation_fit"] = validation_fit(result.points, validation, gamma)
    message = validation_fit_warning(result.extra["validation_fit"], len(result.points), method.fit_advice())
    if message is not None:
        warnings.warn(message, SummaryFitWarning, stacklevel=3)
    return result


def _finish(result: SummaryResult, seeded: bool) -> SummaryResult:
    """Mark a seeded result and log what the run decided."""
    result.seeded = seeded
    for event in result.events:
        _log.warning("run event: %s", event)
    _log.info(
        "summarize: %d rows in %.2f s, aggregator saw %d raw rows; %s",
        len(result),
        result.seconds,
        result.accessed.total,
        result.privacy_status(),
    )
    return result
