"""The paper's experiments (Figure 2, Appendix G): summaries of growing size, compared by MMD² and accuracy.

:func:`run_experiment` runs every method at every size for several repeats of a label split and returns
one :class:`Record` per run; :func:`write_results` writes ``results.json``, ``results.csv`` and the two
plots of Figure 2 (MMD² increase over greedy against size; accuracy against size; error bars over
repeats); :func:`format_table` prints means and standard deviations.

Repeat ``r`` draws a fresh split (``split(r)``) and runs every method on it with the protocol seeded by
``random_state + r``: seeded runs are reproducible and NOT private (they are experiments).
``mmd_increase_pct`` compares each run with the greedy run of the same size and repeat.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from . import accounting
from ._validation import bool_flag, bounded_int, positive_float
from .datasets import LabelSplit
from .errors import InvalidParameterError
from .h2 import H2
from .hashing import RFFHasher
from .methods import PaperGreedy, resolve_method
from .metrics import mlp_accuracy, mmd2, mmd_increase_pct, svm_accuracy
from .preprocessing import median_gamma
from .privacy import Csprng, check_random_state
from .protocols.base import SummaryMethod
from .summarize import Owner, summarize

__all__ = [
    "EXPERIMENT_METHODS",
    "Record",
    "run_experiment",
    "write_results",
    "format_table",
    "median_gamma",
    "broadcast_error",
    "load_results",
    "plot_records",
    "plot_title",
]

EXPERIMENT_METHODS = ("nominations", "central-greedy", "paper", "paper-greedy", "uniform", "exact-greedy", "pfds")
#: The baseline of ``mmd_increase_pct``: the first of these among the methods run.
BASELINES = ("central-greedy", "paper-greedy")
CLASSIFIERS = ("mlp", "svm")
#: The Record fields :func:`plot_records` can draw.
PLOT_FIELDS = (
    "mmd2",
    "mmd_increase_pct",
    "accuracy",
    "accessed",
    "seconds",
    "epsilon_owners",
    "epsilon_validation",
    "epsilon_owners_h2",
)
#: Largest h1 dimension (``dim``) a plot title names (rust/src/limits.rs MAX_DIM).
MAX_DIM = 1 << 20
#: Most repeats of :func:`run_experiment` (each repeat runs every method at every size).
MAX_REPEATS = 100_000
#: Largest summary size an experiment asks for (the method objects' cap on counts).
MAX_COUNT = 1 << 40
DELTA_OWNERS = 1e-4  # the paper's δ for the summary (Section 4)
DELTA_VALIDATION = 1e-2  # the paper's δ for the validation set


@dataclass
class Record:
    """One run: a method at a size in a repeat.

    ``epsilon_owners`` is the owners' total by the tight accountant at ``delta_owners`` (the budget's δ,
    or the paper's 1e-4), including the auction
    (``None`` = not certified, which is the case for the paper's PrivAuction with ε_auc > 0);
    ``epsilon_owners_h2`` leaves the auction out (the h2 releases alone). ``epsilon_validation`` is
    the validation set's at ``delta_validation`` (the budget's, or the paper's 0.01). The three are
    ``None`` for the non-private methods; for ``"pfds"`` both owners' figures are the per-agent ε of
    PFDS (pure ε-DP, ``delta_owners`` None) and the consumer releases nothing.
    """

    method: str
    size: int
    repeat: int
    mmd2: float
    mmd_increase_pct: float | None
    accuracy: float | None
    accessed: int
    epsilon_owners: float | None
    epsilon_validation: float | None
    seconds: float
    epsilon_owners_h2: float | None = None
    gamma: float = 0.1
    delta_owners: float | None = None
    delta_validation: float | None = None
    variant: str = ""
    nominees: int | None = None
    dim: int | None = None
    #: Always False for :func:`run_experiment`: every run is seeded (reproducible, NOT private).
    private: bool = False
    #: The run's :func:`dpsumm.accounting.certification` status ("seeded: NOT private" for every seeded run,
    #: "not private" for the baselines); PFDS runs are seeded too.
    certification: str = ""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _records(records: object, name: str = "records") -> list[Record]:
    """``records`` as a list of :class:`Record` (what :func:`run_experiment` and :func:`load_results` return)."""
    if isinstance(records, (str, bytes, Mapping)) or not isinstance(records, Sequence):
        raise InvalidParameterError(
            f"`{name}` must be a list of experiment Records (from run_experiment or "
            f"load_results), got {type(records).__name__}",
            name,
        )
    for rec in records:
        if not isinstance(rec, Record):
            raise InvalidParameterError(f"`{name}` must hold experiment Records, got {type(rec).__name__}", name)
    return list(records)


def _text(value: object, name: str) -> str:
    if not isinstance(value, str):
        raise InvalidParameterError(f"`{name}` must be a str, got {type(value).__name__}", name)
    return value


def _optional_dim(dim: object) -> int | None:
    return None if dim is None else bounded_int(dim, "dim", 1, MAX_DIM)


def _finite_or_none(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def _classifier(name: str) -> Callable[..., float]:
    fits: dict[str, Callable[..., float]] = {"mlp": mlp_accuracy, "svm": svm_accuracy}
    return fits[name]


def _run_pfds(split: LabelSplit, size: int, epsilon: float, random_state: int) -> tuple[np.ndarray, np.ndarray, float]:
    """PFDS (Fioretto & Van Hentenryck 2019) at per-agent ``epsilon`` (add/remove one row of an agent):
    the consumer trains on ``size`` rows drawn uniformly from the union of the agents' synthetic data.

    The public domain is the box [0, 1]^n (pixels scaled to [0, 1]) and the labels seen anywhere in the
    split. Returns (rows, labels, epsilon)."""
    from . import pfds

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
    random_state = seed0
    schedules: dict[int, accounting.Schedule] = {}
    # baselines first (the others are reported against them), the paper's run before pfds (pfds takes its ε)
    rank = {"central-greedy": 0, "paper-greedy": 0, "paper": 1, "pfds": 3}
    order = sorted(specs, key=lambda spec: rank.get(spec[0], 2))
    # ε is reported at the budget's δ's, or at the paper's (1e-4 owners, 0.01 validation).
    delta_o = privacy.delta if privacy is not None and privacy.delta is not None else DELTA_OWNERS
    delta_v = privacy.validation_delta if privacy is not None else DELTA_VALIDATION
    fit = _classifier(classifier)
    records: list[Record] = []
    from tqdm.auto import tqdm

    bar = tqdm(total=int(repeats) * len(sizes) * len(order), disable=not progress, desc="experiment", unit="run")
    try:
        for r in range(int(repeats)):
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
            g = median_gamma(data.seed_set) if median else float(gamma)
            owners = [
                Owner(o, labels=lab, name=f"owner-{k}")
                for k, (o, lab) in enumerate(zip(data.owners, data.owner_labels))
            ]
            for size in sizes:
                private_eps: float | None = None
                for method, build in order:
                    bar.set_postfix_str(f"repeat {r} size {size} {method}")
                    t0 = time.perf_counter()
                    eps_o = eps_o_h2 = eps_v = None
                    run_delta_v = delta_v
                    if method == "pfds":
                        eps_pfds = pfds_epsilon if pfds_epsilon is not None else private_eps
                        assert eps_pfds is not None
                        pts, labs, eps = _run_pfds(data, size, eps_pfds, random_state + r)
                        accessed = 0
                        eps_o = eps_o_h2 = eps
                    else:
                        meth = build(size)
                        kw: dict[str, Any] = {}
                        if method in ("paper", "paper-greedy"):
                            kw["seed_set"] = data.seed_set
                        if method == "paper" and privacy is not None:
                            if size not in schedules:
                                schedules[size] = accounting.calibrate(
                                    privacy,
                                    size,
                                    len(owners),
                                    meth.dim,  # type: ignore[attr-defined]
                                    seed_set_size=max(1, len(data.seed_set)),
                                )
                            meth = meth.set_params(schedule=schedules[size])
                        if method == "nominations" and privacy is not None:  # the release spends the validation pair
                            kw["privacy"] = accounting.Budget(
                                validation_epsilon=privacy.validation_epsilon, validation_delta=privacy.validation_delta
                            )
                        res = summarize(
                            owners,
                            data.validation,
                            size,
                            meth,
                            gamma=g,
                            random_state=random_state + r,
                            progress=False,
                            **kw,
                        )
                        pts, labs, accessed = res.points, res.labels, res.accessed.total  # type: ignore[assignment]
                        run_delta_v = delta_v
                        if res.privacy is not None:
                            if method == "nominations":  # at the release's own delta_v (the budget's)
                                stored = (res.privacy.deltas or {}).get("validation")
                                run_delta_v = delta_v if stored is None else float(stored)
                            eps_o = _finite_or_none(res.privacy.epsilon("owners", delta_o))
                            eps_o_h2 = res.privacy.epsilon("owners", delta_o, include_auction=False)
                            eps_v = res.privacy.epsilon("validation", run_delta_v)
                            if method == "paper":
                                private_eps = eps_o_h2
                    seconds = time.perf_counter() - t0
                    value = mmd2(pts, data.validation, g)
                    acc = fit(pts, labs, data.test, data.test_labels) if labs is not None else None
                    records.append(
                        Record(
                            method=method,
                            size=size,
                            repeat=r,
                            mmd2=value,
                            mmd_increase_pct=None,
                            accuracy=acc,
                            accessed=int(accessed),
                            epsilon_owners=eps_o,
                            epsilon_validation=eps_v,
                            seconds=seconds,
                            epsilon_owners_h2=eps_o_h2,
                            gamma=g,
                            delta_owners=delta_o if eps_o_h2 is not None and method != "pfds" else None,
                            delta_validation=(run_delta_v if method != "pfds" else delta_v)
                            if eps_v is not None
                            else None,
                            variant=variant,
                            nominees=res.extra.get("nominees") if method == "nominations" else None,
                            dim=None if method == "pfds" else int(res.hasher.dim),
                            certification="seeded: NOT private" if method == "pfds" else res.certification().status,
                        )
                    )
                    bar.update(1)
    finally:
        bar.close()
    return relative_to_baseline(records)


def relative_to_baseline(records: Sequence[Record], baselines: Sequence[Sequence[Record]] = ()) -> list[Record]:
    """Fill ``mmd_increase_pct`` against the strongest non-private baseline of the same size and repeat:
    central greedy when it was run (in ``records`` or in ``baselines``), else the paper's greedy."""
    pool = [*records, *(r for group in baselines for r in group)]
    out = []
    for rec in records:
        base = None
        for name in BASELINES:
            base = next(
                (b.mmd2 for b in pool if b.method == name and b.size == rec.size and b.repeat == rec.repeat), None
            )
            if base is not None:
                break
        inc = None if base is None or rec.method in BASELINES[:1] else mmd_increase_pct(rec.mmd2, base)
        out.append(dataclasses.replace(rec, mmd_increase_pct=inc))
    return out


#: The order of rows and legends: today's method first, then the paper's, then the non-private baselines.
DISPLAY_ORDER = ("nominations", "paper", "pfds", "central-greedy", "exact-greedy", "paper-greedy", "uniform")


def _display_rank(label: str) -> int:
    """Sort key of a row label: its method's place in :data:`DISPLAY_ORDER` (a stable sort keeps the variants
    of one method in the order they were run)."""
    method = label.split(" ", 1)[0]
    return DISPLAY_ORDER.index(method) if method in DISPLAY_ORDER else len(DISPLAY_ORDER)


def baseline_name(records: Sequence[Record]) -> str:
    """The method ``mmd_increase_pct`` is relative to in ``records`` (see :func:`relative_to_baseline`)."""
    present = {r.method for r in records}
    return next((b for b in BASELINES if b in present), BASELINES[0]).replace("-", " ")


def _label(rec: Record) -> str:
    """A record's row label: its method, and its variant when it has one."""
    return f"{rec.method} {rec.variant}".strip()


def _stats(records: Sequence[Record], field: str) -> dict[tuple[str, int], tuple[float, float, int]]:
    """(label, size) -> (mean, sample std, n) of a field over repeats, ignoring None."""
    groups: dict[tuple[str, int], list[float]] = {}
    for rec in records:
        v = getattr(rec, field)
        if v is not None:
            groups.setdefault((_label(rec), rec.size), []).append(float(v))
    return {k: (float(np.mean(v)), float(np.std(v, ddof=1)) if len(v) > 1 else 0.0, len(v)) for k, v in groups.items()}


def format_table(records: Sequence[Record], *, markdown: bool = False) -> str:
    """Mean ± standard deviation over repeats of MMD², its increase over greedy and accuracy, per method and size."""
    records = _records(records)
    markdown = bool_flag(markdown, "markdown")
    mmd, inc, acc, sec, seen = (
        _stats(records, f) for f in ("mmd2", "mmd_increase_pct", "accuracy", "seconds", "accessed")
    )
    methods = sorted(dict.fromkeys(_label(r) for r in records), key=_display_rank)
    sizes = sorted({r.size for r in records})
    head = ["size", "method", "MMD²", f"MMD² vs {baseline_name(records)} (%)", "accuracy", "raw rows seen", "seconds"]

    def pm(d: dict[tuple[str, int], tuple[float, float, int]], key: tuple[str, int], fmt: str) -> str:
        if key not in d:
            return "–"
        m, s, n = d[key]
        return f"{m:{fmt}} ± {s:{fmt.lstrip('+')}}" if n > 1 else f"{m:{fmt}}"

    rows = []
    for size in sizes:
        for method in methods:
            key = (method, size)
            if key not in mmd:
                continue
            rows.append(
                [
                    str(size),
                    method,
                    pm(mmd, key, ".5f"),
                    pm(inc, key, "+.1f"),
                    pm(acc, key, ".3f"),
                    pm(seen, key, ".0f"),
                    pm(sec, key, ".2f"),
                ]
            )
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(lines)
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(head)]
    out = ["  ".join(h.ljust(w) for h, w in zip(head, widths)), "  ".join("-" * w for w in widths)]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows]
    return "\n".join(out)


# One colour per method in every plot.
_COLOURS = dict(
    zip(EXPERIMENT_METHODS, ("tab:blue", "black", "tab:red", "tab:orange", "tab:purple", "tab:green", "tab:brown"))
)
_VARIANT_COLOURS = ("tab:blue", "tab:cyan", "tab:olive", "tab:pink", "tab:gray", "tab:brown", "tab:green")


def _colour(label: str, labels: Sequence[str]) -> str | None:
    """One colour per method; variants of a method ("nominations eps_v=1") get a colour of their own."""
    if label in _COLOURS:
        return _COLOURS[label]
    variants = [lab for lab in labels if lab not in _COLOURS]
    return _VARIANT_COLOURS[variants.index(label) % len(_VARIANT_COLOURS)] if label in variants else None


def _range(values: Sequence[float], fmt: str = ".3g") -> str:
    lo, hi = min(values), max(values)
    return f"{lo:{fmt}}" if math.isclose(lo, hi, rel_tol=1e-9) else f"{lo:{fmt}}-{hi:{fmt}}"


def plot_title(records: Sequence[Record], title: str = "", *, dim: int | None = None) -> str:
    """``"<title>: <method> ε owners …, ε_v … (δ_v …); …, γ …, d …"`` from the records: the privacy each private
    method actually ran at (ranges over sizes and repeats), then the non-private ones."""
    records = _records(records)
    title = _text(title, "title")
    dim = _optional_dim(dim)
    parts = []
    private = sorted(
        {r.method for r in records if r.epsilon_owners_h2 is not None or r.epsilon_validation is not None},
        key=_display_rank,
    )
    for method in private:
        rs = [r for r in records if r.method == method]
        bits = []
        owners = [r.epsilon_owners for r in rs if r.epsilon_owners is not None]
        if method == "pfds":
            bits.append(f"ε {_range([r.epsilon_owners_h2 for r in rs if r.epsilon_owners_h2 is not None])} per agent")
        elif owners:
            d_o = sorted({r.delta_owners for r in rs if r.delta_owners is not None})
            bits.append(f"ε owners {_range(owners)}" + (f" (δ {_range(d_o, 'g')})" if d_o and max(owners) > 0 else ""))
        elif any(r.epsilon_owners_h2 is not None for r in rs):
            bits.append("ε owners not certified")
        val = [r.epsilon_validation for r in rs if r.epsilon_validation is not None]
        if val:
            d_v = sorted({r.delta_validation for r in rs if r.delta_validation is not None})
            bits.append(f"ε_v {_range(val)}" + (f" (δ_v {_range(d_v, 'g')})" if d_v else ""))
        parts.append(f"{method} {', '.join(bits)}")
    if not private:
        parts.append("non-private")
    gammas = sorted({r.gamma for r in records})
    tail = []
    if gammas:
        tail.append(f"γ {_range(gammas)}")
    dims = sorted({r.dim for r in records if r.dim is not None})
    if dim is not None:
        tail.append(f"d {dim}")
    elif dims:
        tail.append("d " + "/".join(str(d) for d in dims))
    body = "; ".join(parts) + (", " + ", ".join(tail) if tail else "")
    head = title.strip()
    return f"{head}: {body}" if head else body


def plot_records(
    records: Sequence[Record], field: str, ylabel: str, title: str, skip: Sequence[str] = (), logy: bool = False
) -> Any:
    """A :class:`matplotlib.figure.Figure` of ``field`` (mean ± sample std over repeats) against size.

    Built without pyplot: the caller's backend and pyplot state are left alone. Accuracy error bars
    are clipped to [0, 1]. Save it with ``fig.savefig(path)``.
    """
    from matplotlib.figure import Figure
    from matplotlib.ticker import NullFormatter, NullLocator

    records = _records(records)
    if not isinstance(field, str) or field not in PLOT_FIELDS:
        raise InvalidParameterError(f"`field` must be one of {PLOT_FIELDS}, got {field!r:.60}", "field")
    ylabel, title = _text(ylabel, "ylabel"), _text(title, "title")
    if (
        isinstance(skip, (str, bytes))
        or not isinstance(skip, (Sequence, set, frozenset))
        or not all(isinstance(s, str) for s in skip)
    ):
        raise InvalidParameterError(f"`skip` must be a list of method labels, got {skip!r:.60}", "skip")
    logy = bool_flag(logy, "logy")
    stats = _stats(records, field)
    methods = sorted((m for m in dict.fromkeys(_label(r) for r in records) if m not in skip), key=_display_rank)
    fig = Figure(figsize=(6.4, 4.0), dpi=120)
    ax = fig.add_subplot(1, 1, 1)
    repeats = sorted({n for (m, _), (_, _, n) in stats.items() if m in methods})
    for method in methods:
        pts = sorted((s, v) for (m, s), v in stats.items() if m == method)
        if not pts:
            continue
        xs = [s for s, _ in pts]
        means = np.array([v[0] for _, v in pts])
        std = np.array([v[1] for _, v in pts])
        if field == "accuracy":
            means = np.clip(means, 0.0, 1.0)
            yerr = np.vstack([np.minimum(std, means), np.minimum(std, 1.0 - means)])
        else:
            yerr = np.vstack([std, std])
        ax.errorbar(xs, means, yerr=yerr, marker="o", capsize=3, label=method, color=_colour(method, methods))
    ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
        ax.yaxis.set_minor_formatter(NullFormatter())
    elif field == "mmd_increase_pct":
        # Nominations' tens of percent and uniform's thousands on one legible axis: linear within ±10 %,
        # logarithmic beyond.
        from matplotlib.ticker import FuncFormatter

        ax.set_yscale("symlog", linthresh=10.0)
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:+,.0f} %" if v else "0"))
        ax.yaxis.set_minor_formatter(NullFormatter())
    sizes = sorted({r.size for r in records})
    ax.set_xticks(sizes)
    ax.set_xticklabels([str(s) for s in sizes])
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("summary size p")
    n_text = "/".join(str(n) for n in repeats) if repeats else "0"
    ax.set_ylabel(f"{ylabel}\n(mean ± std over {n_text} repeats)", fontsize=9)
    if field == "accuracy":
        ax.set_ylim(0.0, 1.0)
    ax.set_title(title, fontsize=8, wrap=True)
    if field == "mmd_increase_pct":
        ax.axhline(0.0, color="grey", lw=0.8, ls="--")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, title=f"error bars: ± std, n = {n_text}", title_fontsize=7)
    fig.tight_layout()
    return fig


RESULT_FIELDS = (
    "method",
    "size",
    "repeat",
    "mmd2",
    "mmd_increase_pct",
    "accuracy",
    "accessed",
    "epsilon_owners",
    "epsilon_validation",
    "seconds",
    "epsilon_owners_h2",
    "gamma",
    "delta_owners",
    "delta_validation",
    "variant",
    "nominees",
    "dim",
    "private",
)


def load_results(path: str | Path) -> list[Record]:
    """Records from a ``results.json`` written by :func:`write_results` (a file or its directory)."""
    from .datasets import _is_dir, _is_file, _os_error, _path_like

    p = _path_like(path, "path")
    if _is_dir(p, "path"):
        p = p / "results.json"
    if not _is_file(p, "path"):
        raise InvalidParameterError(f"no results file at {p}", "path")
    try:
        rows = json.loads(p.read_text())
        if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
            raise ValueError("expected a JSON list of records")
        return [Record(**row) for row in rows]
    except OSError as exc:
        raise _os_error(exc, p, "path") from exc
    except (ValueError, TypeError) as exc:
        raise InvalidParameterError(f"{p} is not a dpsumm results file: {exc}", "path") from exc


def write_results(
    records: Sequence[Record], out: str | Path, *, title: str = "", plots: bool = True, dim: int | None = None
) -> dict[str, Path]:
    """Write ``results.json``, ``results.csv``, ``table.md`` and (with ``plots``) ``mmd_increase.png`` and
    ``accuracy.png`` into ``out`` (created). Returns the paths by name.

    The plots' titles carry ``title`` (the dataset), ε, γ and ``dim`` (d); the caller's matplotlib
    backend is never changed."""
    from .datasets import _os_error, _path_like

    records = _records(records)
    title = _text(title, "title")
    plots = bool_flag(plots, "plots")
    dim = _optional_dim(dim)
    d = _path_like(out, "out")
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _os_error(exc, d, "out") from exc
    paths = {"json": d / "results.json", "csv": d / "results.csv", "table": d / "table.md"}
    rows = [r.to_dict() for r in records]
    paths["json"].write_text(json.dumps(rows, indent=1))
    with paths["csv"].open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(RESULT_FIELDS))
        w.writeheader()
        for row in rows:
            w.writerow({k: ("" if row[k] is None else row[k]) for k in RESULT_FIELDS})
    note = ""
    if any(not r.private for r in records):
        note = "\n**NOT private**: seeded runs (reproducible experiments); the noise can be removed by anyone with the seed.\n"
    paths["table"].write_text(format_table(records, markdown=True) + "\n" + note)
    if plots:
        head = plot_title(records, title, dim=dim)
        paths["mmd2_plot"] = d / "mmd2.png"
        plot_records(
            records, "mmd2", "MMD² to the validation set (log scale), lower is better", head, logy=True
        ).savefig(paths["mmd2_plot"])
        paths["mmd_plot"] = d / "mmd_increase.png"
        plot_records(
            records,
            "mmd_increase_pct",
            f"MMD² vs {baseline_name(records)} (%, symlog scale), lower is better",
            head,
            skip=[baseline_name(records).replace(" ", "-")],
        ).savefig(paths["mmd_plot"])
        if any(r.accuracy is not None for r in records):
            paths["accuracy_plot"] = d / "accuracy.png"
            plot_records(records, "accuracy", "test accuracy, higher is better", head).savefig(paths["accuracy_plot"])
    return paths


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


def plot_parsimony(records: Sequence[Record], path: str | Path, *, title: str = "") -> Path:
    """MMD² against raw rows the aggregator saw (log-log), one point per (method, size), mean ± std over repeats.

    Builds a :class:`matplotlib.figure.Figure` directly: the caller's matplotlib backend is never touched.
    """
    from matplotlib.figure import Figure

    mmd, seen = _stats(records, "mmd2"), _stats(records, "accessed")
    fig = Figure(figsize=(6.0, 4.0), dpi=120)
    ax = fig.add_subplot()
    for label in dict.fromkeys(_label(r) for r in records):
        keys = sorted(k for k in mmd if k[0] == label and k in seen)
        if not keys:
            continue
        xs = [max(seen[k][0], 1.0) for k in keys]
        ax.errorbar(
            xs,
            [mmd[k][0] for k in keys],
            yerr=[mmd[k][1] for k in keys],
            marker="o",
            capsize=3,
            label=label,
            color=_colour(label, list(dict.fromkeys(_label(r) for r in records))),
        )
        for x, k in zip(xs, keys):
            ax.annotate(f"p={k[1]}", (x, mmd[k][0]), fontsize=6, xytext=(3, 3), textcoords="offset points")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("raw rows the aggregator saw")
    ax.set_ylabel("MMD² to the validation set (± std over repeats)")
    ax.set_title(title, fontsize=8, wrap=True)
    ax.grid(alpha=0.3, which="major")
    ax.legend(fontsize=7)
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out)
    return out


def plot_sweep(
    records: Sequence[Record],
    field: str,
    parameter: str,
    values: Mapping[str, float],
    path: str | Path,
    *,
    ylabel: str,
    title: str = "",
    baselines: Sequence[str] = ("central-greedy", "uniform"),
    logy: bool = False,
) -> Path:
    """``field`` (mean ± std over repeats) against a swept parameter, one line per summary size.

    ``values`` maps each variant label (e.g. ``"eps_v=0.5"``) to its x position (``math.inf`` is drawn at the right
    end and labelled ∞); ``baselines`` are drawn as dashed horizontal lines per size. Builds a ``Figure`` directly.
    """
    from matplotlib.figure import Figure

    stats = _stats(records, field)
    finite = [v for v in values.values() if math.isfinite(v)]
    inf_x = max(finite) * 2.0 if finite else 1.0
    fig = Figure(figsize=(6.4, 4.0), dpi=120)
    ax = fig.add_subplot()
    sizes = sorted({r.size for r in records})
    for i, size in enumerate(sizes):
        colour = _VARIANT_COLOURS[i % len(_VARIANT_COLOURS)]
        pts = sorted(
            (inf_x if math.isinf(x) else x, stats[(f"nominations {v}", size)])
            for v, x in values.items()
            if (f"nominations {v}", size) in stats
        )
        if pts:
            ax.errorbar(
                [x for x, _ in pts],
                [m for _, (m, _, _) in pts],
                yerr=[s for _, (_, s, _) in pts],
                marker="o",
                capsize=3,
                color=colour,
                label=f"nominations, p = {size}",
            )
        for b, style in zip(baselines, ("--", ":")):
            if (b, size) in stats:
                ax.axhline(
                    stats[(b, size)][0],
                    color=colour,
                    ls=style,
                    lw=0.9,
                    label=f"{b}, p = {size}" if i == 0 or len(sizes) <= 3 else None,
                )
    ax.set_xscale("log")
    ticks = sorted({inf_x if math.isinf(x) else x for x in values.values()})
    ax.set_xticks(ticks)
    ax.set_xticklabels(["∞" if t == inf_x and any(math.isinf(x) for x in values.values()) else f"{t:g}" for t in ticks])
    from matplotlib.ticker import NullFormatter, NullLocator

    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_minor_formatter(NullFormatter())
    if logy:
        ax.set_yscale("log")
        ax.yaxis.set_minor_formatter(NullFormatter())
    n = sorted({k for (_, _, k) in stats.values()})
    ax.set_xlabel(parameter)
    ax.set_ylabel(f"{ylabel}\n(mean ± std over {'/'.join(map(str, n))} repeats)", fontsize=9)
    ax.set_title(title, fontsize=8, wrap=True)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=6, ncol=2)
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out)
    return out
