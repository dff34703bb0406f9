"""Run the paper's experiments: every method at every size for several repeats of a label split."""

from __future__ import annotations

import dataclasses
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import accounting
from .._validation import bounded_int, positive_float
from ..datasets import LabelSplit
from ..errors import InvalidParameterError
from ..h2 import H2
from ..hashing import RFFHasher
from ..methods import PaperGreedy, resolve_method
from ..metrics import SummaryFitWarning, mlp_accuracy, mmd2, offdiagonal_kernel_mean, population_mmd2, svm_accuracy
from ..preprocessing import median_gamma
from ..privacy import Csprng, check_random_state
from ..protocols.base import SummaryMethod
from ..summarize import Owner, summarize
from .records import (
    CLASSIFIERS,
    DELTA_OWNERS,
    DELTA_VALIDATION,
    EXPERIMENT_METHODS,
    MAX_COUNT,
    MAX_REPEATS,
    Record,
    _finite_or_none,
    relative_to_baseline,
)


def _classifier(name: str) -> Callable[..., float]:
    fits: dict[str, Callable[..., float]] = {"mlp": mlp_accuracy, "svm": svm_accuracy}
    return fits[name]


def _run_pfds(split: LabelSplit, size: int, epsilon: float, random_state: int) -> tuple[np.ndarray, np.ndarray, float]:
    """PFDS (Fioretto & Van Hentenryck 2019) at per-agent ``epsilon`` (add/remove one row of an agent):
    the consumer trains on ``size`` rows drawn uniformly from the union of the agents' synthetic data.

    The public domain is the box [0, 1]^n (pixels scaled to [0, 1]) and the labels seen anywhere in the
    split. Returns (rows, labels, epsilon)."""
    from .. import pfds

    classes = sorted(set(np.concatenate(split.owner_labels).tolist()))
    domain = pfds.Domain.box(split.owners[0].shape[1], 0.0, 1.0, classes=classes)
    X, y = pfds.pfds_training_set(split.owners, split.owner_labels, domain, epsilon, random_state=random_state)
    # Post-processing of the released synthetic data (evaluation subsample, not privacy noise).
    pick = np.random.default_rng(random_state).choice(len(X), size=min(size, len(X)), replace=False)
    return X[pick], y[pick], epsilon


def _constant(obj: SummaryMethod) -> Callable[[int], SummaryMethod]:
    return lambda size: obj


def _with_dim(build: Callable[[int], SummaryMethod], dim: int) -> Callable[[int], SummaryMethod]:
    return lambda size: build(size).set_params(dim=dim)


def _method_specs(methods: Sequence[Any], dim: int | None, probe: int) -> list[tuple[str, Callable[[int], Any]]]:
    """``(name, size -> method object)`` of each entry of ``methods`` (``"pfds"`` builds nothing); callables and
    ``dim`` are tried at the summary size ``probe``, so a bad option fails before any run."""
    if isinstance(methods, (str, bytes)) or not isinstance(methods, Sequence) or not methods:
        raise InvalidParameterError(
            f"`methods` must be a non-empty sequence of names or method objects, got {methods!r}", "methods"
        )
    specs: list[tuple[str, Callable[[int], Any]]] = []
    for m in methods:
        if isinstance(m, str) and m == "pfds":
            specs.append(("pfds", lambda size: None))
            continue
        if isinstance(m, str) and m not in EXPERIMENT_METHODS:
            raise InvalidParameterError(
                f"`methods` must hold names from {EXPERIMENT_METHODS} or method objects, got {m!r}", "methods"
            )
        if callable(m) and not isinstance(m, (str, SummaryMethod, type)):
            made = m(probe)
            if not isinstance(made, SummaryMethod):
                raise InvalidParameterError("a callable in `methods` must return a method object", "methods")
            name = made.name
            build: Callable[[int], Any] = m
        else:
            obj = resolve_method(m)
            name, build = obj.name, _constant(obj)
        if dim is not None:
            build = _with_dim(build, dim)
            build(probe)  # a bad dim fails here
        specs.append((name, build))
    if len({name for name, _ in specs}) != len(specs):
        raise InvalidParameterError(
            "`methods` holds one method twice (use `variant` and two runs for a sweep)", "methods"
        )
    return specs


def run_experiment(
    split: Callable[[int], LabelSplit],
    sizes: Sequence[int],
    *,
    repeats: int = 5,
    methods: Sequence[str | SummaryMethod | Callable[[int], SummaryMethod]] = (
        "nominations",
        "central-greedy",
        "uniform",
    ),
    gamma: float | str = 0.1,
    dim: int | None = None,
    variant: str = "",
    privacy: accounting.Budget | None = None,
    classifier: str = "mlp",
    pfds_epsilon: float | None = None,
    random_state: int = 0,
    progress: bool = True,
) -> list[Record]:
    """Run ``methods`` at every size for ``repeats`` repeats.

    Parameters
    ----------
    split : callable ``repeat -> LabelSplit``
        The data of a repeat (e.g. ``lambda r: mnist_label_split(dir, random_state=r)``).
    sizes : sequence of int
        Summary sizes ``p``.
    methods : sequence of method names, method objects, or callables ``size -> method object``
        Names from :data:`EXPERIMENT_METHODS` mean the method's defaults; a method object
        (``dpsumm.Nominations(nominees=400)``) runs with its options; a callable builds the object per summary
        size (``lambda p: dpsumm.Nominations(nominees=4 * p)``). ``"pfds"`` is a name only.
        ``"nominations"`` (the recommended private protocol; its validation budget is ``privacy``, default
        ε_v = 1, δ_v = 1e-6), ``"central-greedy"`` (non-private, all hashes in one place: the baseline of
        ``mmd_increase_pct`` when run), ``"paper"`` (Alg. 3 at the paper's schedule with the certified
        auction, or calibrated to ``privacy``), ``"paper-greedy"`` (the paper's seeded greedy),
        ``"uniform"``, ``"exact-greedy"`` (exact kernel, centralised, no seed rows), ``"pfds"`` (the union of
        PFDS synthetic data, subsampled to ``size``).
    dim : int, optional
        Sets every method object's ``dim`` (h1's dimension); default each method's own (500 for nominations and
        the baselines, 140 for the paper's methods).
    variant : str
        A label stored in every record (sweeps).
    gamma : float or "median"
        RBF width for the protocol and for MMD². ``"median"``: :func:`median_gamma` of each repeat's
        public seed set (no privacy cost). The paper uses 0.1.
    privacy : dpsumm.Budget, optional
        Nominations: its validation budget. Paper: calibrate the schedule to this budget instead of the
        paper's schedule.
    classifier : {"mlp", "svm"}
        Accuracy of a one-hidden-layer network of 32 units (Figure 2) or a linear SVM (Figure 1),
        trained on the summary and tested on the split's test rows.
    pfds_epsilon : float, optional
        Per-agent ε of the ``"pfds"`` method. None: the same owners' ε as the private run of the same
        size and repeat (its h2 releases, at the reported δ; PFDS's is pure ε-DP under add/remove of
        one row of an agent); then ``"paper"`` must be among ``methods``.
    random_state : int
        Base seed: repeat ``r`` seeds the protocol with ``random_state + r`` (NOT private).
    """
    if not callable(split):
        raise InvalidParameterError(
            f"`split` must be a callable repeat -> LabelSplit, got {type(split).__name__}", "split"
        )
    if isinstance(sizes, (str, bytes)) or not isinstance(sizes, (Sequence, np.ndarray)) or len(sizes) == 0:
        raise InvalidParameterError(f"`sizes` must be a non-empty list of integers >= 1, got {sizes!r:.60}", "sizes")
    sizes = [bounded_int(s, "sizes", 1, MAX_COUNT) for s in sizes]
    repeats = bounded_int(repeats, "repeats", 1, MAX_REPEATS)
    seed0 = bounded_int(random_state, "random_state", 0, 2**64 - 1 - repeats)
    if not isinstance(progress, (bool, np.bool_)):
        raise InvalidParameterError(f"`progress` must be a bool, got {type(progress).__name__}", "progress")
    if not isinstance(variant, str):
        raise InvalidParameterError(f"`variant` must be a str, got {type(variant).__name__}", "variant")
    specs = _method_specs(methods, dim, sizes[0])
    if not isinstance(classifier, str) or classifier not in CLASSIFIERS:
        raise InvalidParameterError(f"`classifier` must be one of {CLASSIFIERS}, got {classifier!r:.60}", "classifier")
    median = isinstance(gamma, str) and gamma == "median"
    if not median:
        if isinstance(gamma, str):
            raise InvalidParameterError(f"`gamma` must be a positive number or 'median', got {gamma!r:.60}", "gamma")
        gamma = positive_float(gamma, "gamma")
    if privacy is not None and not isinstance(privacy, accounting.Budget):
        raise InvalidParameterError("`privacy` must be a dpsumm.Budget or None", "privacy")
    names = [name for name, _ in specs]
    if pfds_epsilon is None and "pfds" in names and "paper" not in names:
        raise InvalidParameterError("`pfds_epsilon` is needed when 'paper' is not among the methods", "pfds_epsilon")
    if pfds_epsilon is not None:
        pfds_epsilon = positive_float(pfds_epsilon, "pfds_epsilon")
    # baselines first (the others are reported against them), the paper's run before pfds (pfds takes its ε)
    rank = {"central-greedy": 0, "paper-greedy": 0, "paper": 1, "pfds": 3}
    order = sorted(specs, key=lambda spec: rank.get(spec[0], 2))
    settings = _Settings(
        privacy=privacy,
        # ε is reported at the budget's δ's, or at the paper's (1e-4 owners, 0.01 validation).
        delta_o=privacy.delta if privacy is not None and privacy.delta is not None else DELTA_OWNERS,
        delta_v=privacy.validation_delta if privacy is not None else DELTA_VALIDATION,
        fit=_classifier(classifier),
        variant=variant,
        pfds_epsilon=pfds_epsilon,
    )
    records: list[Record] = []
    from tqdm.auto import tqdm

    bar = tqdm(total=int(repeats) * len(sizes) * len(order), disable=not progress, desc="experiment", unit="run")
    try:
        for r in range(int(repeats)):
            data = _repeat_split(split, r, sizes)
            g = median_gamma(data.seed_set) if median else float(gamma)
            repeat = _Repeat(
                data=data,
                r=r,
                seed=seed0 + r,
                gamma=g,
                held_out_term=offdiagonal_kernel_mean(data.test, g) if len(data.test) >= 2 else None,
                owners=[
                    Owner(o, labels=lab, name=f"owner-{k}")
                    for k, (o, lab) in enumerate(zip(data.owners, data.owner_labels))
                ],
            )
            for size in sizes:
                private_eps: float | None = None
                for method, build in order:
                    bar.set_postfix_str(f"repeat {r} size {size} {method}")
                    record, private_eps = _run_one(method, build, size, repeat, settings, private_eps)
                    records.append(record)
                    bar.update(1)
    finally:
        bar.close()
    return relative_to_baseline(records)


@dataclasses.dataclass
class _Settings:
    """What every run of an experiment shares."""

    privacy: accounting.Budget | None
    delta_o: float
    delta_v: float | None
    fit: Callable[..., float]
    variant: str
    pfds_epsilon: float | None
    schedules: dict[int, accounting.Schedule] = dataclasses.field(default_factory=dict)  # the paper's, by size


@dataclasses.dataclass
class _Repeat:
    """One repeat's data and what is computed once from it."""

    data: LabelSplit
    r: int
    seed: int  # the protocol's seed: the base seed + r
    gamma: float
    held_out_term: float | None
    owners: list[Owner]


def _repeat_split(split: Callable[[int], LabelSplit], r: int, sizes: list[int]) -> LabelSplit:
    """Repeat ``r``'s split, checked against the summary sizes."""
    data = split(r)
    if not isinstance(data, LabelSplit):
        raise InvalidParameterError(
            f"`split` must return a dpsumm.datasets.LabelSplit, got {type(data).__name__} for repeat {r}",
            "split",
        )
    rows = sum(len(o) for o in data.owners)
    if max(sizes) > rows:
        raise InvalidParameterError(
            f"`sizes`: {max(sizes)} exceeds the {rows} owner rows of repeat {r}'s split", "sizes"
        )
    return data


@dataclasses.dataclass
class _Outcome:
    """What one method's run of one size gave: the rows (and labels) bought and each party's ε."""

    points: np.ndarray | None
    labels: np.ndarray | None
    accessed: int
    eps_o: float | None = None
    eps_o_h2: float | None = None
    eps_v: float | None = None
    delta_v: float | None = None
    result: Any = None  # the SummaryResult (None for pfds)


def _run_summary(method: str, build: Callable[[int], Any], size: int, repeat: _Repeat, settings: _Settings) -> _Outcome:
    """One run of a dpsumm method (every method but pfds) at ``size``, ε read at the reported δ's."""
    data, privacy = repeat.data, settings.privacy
    meth = build(size)
    kw: dict[str, Any] = {}
    if meth.reads_seed_rows:
        kw["seed_set"] = data.seed_set  # the split's public rows (the direction's geometry)
    if method == "paper" and privacy is not None:
        if size not in settings.schedules:
            settings.schedules[size] = accounting.calibrate(
                privacy,
                size,
                len(repeat.owners),
                meth.dim,  # type: ignore[attr-defined]
                seed_set_size=max(1, len(data.seed_set)),
            )
        meth = meth.set_params(schedule=settings.schedules[size])
    if meth.needs_labels:  # a purchase by label: the consumer's labels (the split's, public set)
        kw["validation_labels"] = data.validation_labels
    if method == "nominations" and privacy is not None:  # the release spends the validation pair
        kw["privacy"] = accounting.Budget(
            validation_epsilon=privacy.validation_epsilon, validation_delta=privacy.validation_delta
        )
    with warnings.catch_warnings():  # the experiment measures every method's MMD² itself
        warnings.simplefilter("ignore", SummaryFitWarning)
        res = summarize(
            repeat.owners,
            data.validation,
            size,
            meth,
            gamma=repeat.gamma,
            random_state=repeat.seed,
            progress=False,
            **kw,
        )
    out = _Outcome(res.points, res.labels, res.accessed.total, delta_v=settings.delta_v, result=res)
    if res.privacy is not None:
        if method == "nominations":  # at the release's own delta_v (the budget's)
            stored = (res.privacy.deltas or {}).get("validation")
            out.delta_v = settings.delta_v if stored is None else float(stored)
        out.eps_o = _finite_or_none(res.privacy.epsilon("owners", settings.delta_o))
        out.eps_o_h2 = res.privacy.epsilon("owners", settings.delta_o, include_auction=False)
        out.eps_v = res.privacy.epsilon("validation", out.delta_v)
    return out


def _run_one(
    method: str,
    build: Callable[[int], Any],
    size: int,
    repeat: _Repeat,
    settings: _Settings,
    private_eps: float | None,
) -> tuple[Record, float | None]:
    """The record of ``method`` at ``size`` in ``repeat``, and the owners' ε of the size's private run so far (the
    paper's, which pfds takes when no ``pfds_epsilon`` is given)."""
    data, g = repeat.data, repeat.gamma
    t0 = time.perf_counter()
    if method == "pfds":
        eps_pfds = settings.pfds_epsilon if settings.pfds_epsilon is not None else private_eps
        assert eps_pfds is not None
        pts, labs, eps = _run_pfds(data, size, eps_pfds, repeat.seed)
        run = _Outcome(pts, labs, 0, eps_o=eps, eps_o_h2=eps, delta_v=settings.delta_v)
    else:
        run = _run_summary(method, build, size, repeat, settings)
        if method == "paper" and run.result.privacy is not None:
            private_eps = run.eps_o_h2
    seconds = time.perf_counter() - t0
    value = mmd2(run.points, data.validation, g)
    population = (
        population_mmd2(run.points, data.test, g, held_out_term=repeat.held_out_term)
        if repeat.held_out_term is not None
        else None
    )
    acc = settings.fit(run.points, run.labels, data.test, data.test_labels) if run.labels is not None else None
    res = run.result
    record = Record(
        method=method,
        size=size,
        repeat=repeat.r,
        mmd2=value,
        mmd_increase_pct=None,
        accuracy=acc,
        accessed=int(run.accessed),
        epsilon_owners=run.eps_o,
        epsilon_validation=run.eps_v,
        seconds=seconds,
        epsilon_owners_h2=run.eps_o_h2,
        gamma=g,
        delta_owners=settings.delta_o if run.eps_o_h2 is not None and method != "pfds" else None,
        delta_validation=(run.delta_v if method != "pfds" else settings.delta_v) if run.eps_v is not None else None,
        variant=settings.variant,
        nominees=res.extra.get("nominees") if method == "nominations" else None,
        dim=None if method == "pfds" else int(res.hasher.dim),
        certification="seeded: NOT private" if method == "pfds" else res.certification().status,
        mmd2_population=population,
        purchase=res.extra.get("purchase") if method == "nominations" else None,
    )
    return record, private_eps


def broadcast_error(
    split: LabelSplit,
    schedule: accounting.Schedule,
    *,
    gamma: float = 0.1,
    rounds: Sequence[int] = (1, 10, 50, 100, 200, 500, 1000),
    random_state: int | Csprng | None = None,
) -> list[dict[str, float]]:
    """How far the private broadcast ``v`` of Alg. 3 is from the exact one, along the greedy path.

    Builds the non-private greedy summary of ``schedule.size`` rows, then replays the h2 releases the
    private protocol would make on that summary (validation: ``t_init`` steps at
    ``epsilon_validation_step``; summary: epoch 1 on the seed set, then ``t_subs`` steps per epoch at
    ``epsilon_epoch_step``, warm-started, exactly as :class:`dpsumm.protocols.paper.Aggregator`) and compares
    ``v_priv = g~ - q/(q+1) g_l`` with ``v = mean h1(D_v) - q/(q+1) mean h1(D_s)``.

    Returns one dict per round in ``rounds`` (up to the size): ``round``, ``validation_norm``
    (``||mean h1(D_v)||``), ``validation_error`` (``||g~ - mean h1(D_v)||``), ``summary_norm``,
    ``summary_error`` (``||g_l - mean h1(D_s)||``), ``v_norm``, ``v_error`` and ``v_cosine`` (cosine
    between private and exact ``v``; the owners' bids rank rows by ``h1(x).v``, so a cosine near 0
    means the bids carry no information). Seeded: NOT private (a diagnostic).
    """
    if not isinstance(split, LabelSplit):
        raise InvalidParameterError(
            f"`split` must be a dpsumm.datasets.LabelSplit, got {type(split).__name__}", "split"
        )
    if not isinstance(schedule, accounting.Schedule):
        raise InvalidParameterError("`schedule` must be a dpsumm.accounting.Schedule", "schedule")
    gamma = positive_float(gamma, "gamma")
    if isinstance(rounds, (str, bytes)) or not isinstance(rounds, (Sequence, np.ndarray, set, frozenset)):
        raise InvalidParameterError(f"`rounds` must be a list of round numbers >= 1, got {rounds!r:.60}", "rounds")
    rounds = [bounded_int(r, "rounds", 1, MAX_COUNT) for r in rounds]
    rng = check_random_state(random_state)
    size = schedule.size
    owners = [Owner(o) for o in split.owners]
    greedy = summarize(
        owners,
        split.validation,
        size,
        PaperGreedy(schedule=schedule, dim=schedule.dim),
        seed_set=split.seed_set,
        gamma=gamma,
        progress=False,
        random_state=0,
    )
    hasher = RFFHasher(split.validation.shape[1], dim=schedule.dim, gamma=gamma, seed=greedy.hasher.seed)
    Hv, Hs, Hp = hasher.transform(split.validation), hasher.transform(split.seed_set), greedy.hashes
    h2_v = H2(schedule.dim, schedule.eta, rng.derive("validation"))
    h2_v.add(Hv)
    g_v = h2_v.release(schedule.t_init, schedule.epsilon_validation_step)
    mean_v = Hv.astype(np.float64).mean(0)
    h2_s = H2(schedule.dim, schedule.eta, rng.derive("summary"))
    h2_s.add(Hs)
    total = Hs.astype(np.float64).sum(0)
    wanted = {int(r) for r in rounds}
    out: list[dict[str, float]] = []
    for rnd in range(1, len(Hp) + 1):
        if rnd == 1:
            g_s = h2_s.release(schedule.t_init, schedule.epsilon_first_epoch_step)
        else:
            h2_s.add(Hp[rnd - 2 : rnd - 1])
            total += Hp[rnd - 2].astype(np.float64)
            g_s = h2_s.release(schedule.t_subs, schedule.epsilon_epoch_step[rnd - 1])
        if rnd not in wanted:
            continue
        q = len(Hs) + rnd - 1
        mean_s = total / q
        v = mean_v - q / (q + 1.0) * mean_s
        v_priv = g_v - q / (q + 1.0) * g_s
        nv, npv = float(np.linalg.norm(v)), float(np.linalg.norm(v_priv))
        out.append(
            {
                "round": rnd,
                "validation_norm": float(np.linalg.norm(mean_v)),
                "validation_error": float(np.linalg.norm(g_v - mean_v)),
                "summary_norm": float(np.linalg.norm(mean_s)),
                "summary_error": float(np.linalg.norm(g_s - mean_s)),
                "v_norm": nv,
                "v_error": float(np.linalg.norm(v_priv - v)),
                "v_cosine": float(v @ v_priv / (nv * npv)) if nv > 0 and npv > 0 else 0.0,
            }
        )
    return out
