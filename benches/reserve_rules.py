"""The cell purchases' reserve under noise-aware rules, on the test beds: a measurement, not wired
(docs/explanation/direction-purchase.md, "The reserve").

``quotas_with_reserve`` (dpsumm/protocols/nominations/cells.py) spends ``R = floor(reserve * ceil(3p))`` of the
rows bought over every cell in proportion to the consumer's clipped noisy counts ``max(c~_j, 0)``. With many cells
(1,000 single-owner cells on ``synthetic-k1000``, 66 cells on ``synthetic-census`` given its strata) the positive
part of the noise on the empty cells, about ``J E[max(Z, 0)]``, outweighs ``|D_v|``. Each rule here reads only the
consumer's released counts, their noise scale and ``|D_v|`` (post-processing, no new release):

* ``projected``: the reserve in proportion to the nearest non-negative counts summing to at most ``|D_v|``,
  ``max(c~_j - tau, 0)`` with the smallest ``tau >= 0`` that brings the sum within ``|D_v|``;
* ``capped``: the clipped counts as before, but only ``R * min(1, |D_v| / sum_j max(c~_j, 0))`` rows (the share of
  the positive mass the consumer's rows can account for); the rest go by the thresholded split;
* ``cleared``: the reserve only over the cells whose count reaches ``HOLDER_SIGMAS`` standard deviations of the
  histogram's noise (the owners' holder rule), in proportion to their clipped counts;
* ``cleared-by-key``: ``cleared`` key by key (a key: a label, stratum or stratum x bin), where a key none of whose
  cells reaches that level keeps all its positive cells (as ``label_cells`` treats a label no owner is shown to
  hold): a stratum the consumer wants a few rows of is still offered, the noise's many small cells of a key the
  consumer holds are not;
* ``grouped``: not a reserve but the thresholded split at a coarser level. The cells of each key are grouped by
  their released centres (Ward's agglomeration of the centres, post-processing) into as many groups as the
  consumer's histogram can pay for, ``G = min(J_key, |D_v| / (b S))`` (``b`` its noise scale, ``S`` the keys: the
  one-bin rule); a group is wanted when the sum of its cells' counts reaches ``z_G`` standard deviations of that
  sum's noise (``z_G`` the normal quantile at ``1 - 1/G``); the rows a wanted group is asked for (in proportion to
  its sum) go to its cells in proportion to their positive counts; the reserve as shipped. For many small cells
  (a thousand single-owner cells) the consumer's rows of one owner, scattered over the cells of its neighbours,
  are counted together.
* ``discoveries``: not a reserve but each cell's count weighed by how likely it is to hold rows at all, in place of
  the hard threshold: of the cells whose noisy count is at least ``c~_j``, the noise alone is expected to lift
  ``J P(Z >= c~_j)`` empty ones there (``J`` the cells, ``Z`` the histogram's discrete Laplace), so ``q_j = 1 -
  min(1, J P(Z >= c~_j) / #{i : c~_i >= c~_j})`` is the share of them that hold rows (Benjamini and Hochberg's
  estimate of the true discoveries at that level); every split, the first and the reserve's, is then in proportion
  to ``q_j max(c~_j, 0)`` over the cells with ``q_j >= 1/2`` (at least as many cells that hold rows as noise's cells
  at or above that count), with no other threshold; ``discoveries-all`` keeps every cell at its weight ``q_j
  max(c~_j, 0)``, however small. A cell a little below the threshold of a thousand cells (the consumer's
  rows of one owner, most of them scattered over its neighbours' cells) keeps most of its weight where few cells
  reach its count, and the noise's cells, many at low counts, keep none.

Usage: ``python benches/reserve_rules.py RULE TESTBEDS_OPTIONS...``, e.g. ``python benches/reserve_rules.py projected
--beds synthetic-k1000 --sizes 50 200 --repeats 5 --methods exact direction-kernel --no-accuracy --tag
reserve-projected-k1000``: benches/testbeds.py with the rule in place of the reserve; the results file and table
name this command.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import testbeds  # noqa: E402
from dpsumm.protocols.nominations import cell_purchase  # noqa: E402
from dpsumm.protocols.nominations.cells import (  # noqa: E402
    HOLDER_SIGMAS,
    LabelCells,
    _reserve_split,
    quotas_from_cells,
    quotas_with_reserve,
)


def counts_within_total(counts: np.ndarray, total: float) -> np.ndarray:
    """The nearest non-negative counts to ``counts`` (Euclidean) whose sum is at most ``total``."""
    c = np.maximum(np.asarray(counts, dtype=np.float64), 0.0)
    if c.sum() <= total:
        return c
    if total <= 0:
        return np.zeros_like(c)
    desc = np.sort(c)[::-1]
    level = (np.cumsum(desc) - total) / np.arange(1, len(desc) + 1)
    k = int(np.flatnonzero(desc > level)[-1])
    out: np.ndarray = np.maximum(c - level[k], 0.0)
    return out


def noise_sd(scale: float) -> float:
    """The standard deviation of the discrete Laplace noise of scale ``scale``: ``sqrt(2 r) / (1 - r)``,
    ``r = exp(-1 / scale)`` (0 at scale 0)."""
    return 0.0 if scale == 0 else math.sqrt(2.0 * math.exp(-1.0 / scale)) / -math.expm1(-1.0 / scale)


def cleared_counts(counts: np.ndarray, scale: float) -> np.ndarray:
    """The clipped counts of the cells at or above ``HOLDER_SIGMAS`` standard deviations (:func:`noise_sd`) of the
    discrete Laplace noise of scale ``scale``, 0 elsewhere."""
    c = np.asarray(counts, dtype=np.float64)
    out: np.ndarray = np.where(c >= HOLDER_SIGMAS * noise_sd(scale), np.maximum(c, 0.0), 0.0)
    return out


def cleared_by_key(counts: np.ndarray, scale: float, cells: LabelCells) -> np.ndarray:
    """:func:`cleared_counts` key by key; a key with no cell at that level keeps its positive counts."""
    c = np.asarray(counts, dtype=np.float64)
    cleared = cleared_counts(c, scale)
    keys = np.asarray(cells.labels)
    held = np.zeros(int(keys.max()) + 1 if len(keys) else 0, dtype=bool)
    np.logical_or.at(held, keys, cleared > 0)
    out: np.ndarray = np.where(held[keys], cleared, np.maximum(c, 0.0))
    return out


def reserve_by(
    weights: Callable[[np.ndarray, float, int, LabelCells], np.ndarray],
) -> Callable[..., np.ndarray]:
    """``quotas_with_reserve`` with the reserve split in proportion to ``weights(counts, scale, |D_v|, cells)``."""

    def quotas(*args: Any, factor: float, reserve: float, within_keys: bool = False) -> np.ndarray:
        consumer_counts, consumer_scale, validation_rows, cells, owner_counts, size = args
        B = int(math.ceil(factor * size))
        R = int(math.floor(reserve * B))
        w = weights(np.asarray(consumer_counts, dtype=np.float64), consumer_scale, validation_rows, cells)
        if R == 0 or w.sum() <= 0:  # nothing reserved, or no cell clears the rule: the thresholded split alone
            return quotas_from_cells(*args, factor=factor, within_keys=within_keys)
        main = quotas_from_cells(*args, factor=(B - R) / max(size, 1), within_keys=within_keys)
        return _reserve_split(w, R, main, cells, np.asarray(owner_counts, dtype=np.float64))

    return quotas


def capped(*args: Any, factor: float, reserve: float, within_keys: bool = False) -> np.ndarray:
    """``quotas_with_reserve`` with the reserve share times ``min(1, |D_v| / sum_j max(c~_j, 0))``."""
    consumer_counts, validation_rows = args[0], args[2]
    positive = float(np.maximum(np.asarray(consumer_counts, dtype=np.float64), 0.0).sum())
    share = reserve * min(1.0, validation_rows / max(positive, 1.0))
    return quotas_with_reserve(*args, factor=factor, reserve=share, within_keys=within_keys)


def grouped_counts(counts: np.ndarray, scale: float, validation_rows: int, cells: LabelCells) -> np.ndarray:
    """Each cell's share of its group's count where the group clears its threshold, 0 elsewhere (``grouped``)."""
    from scipy.cluster.hierarchy import fcluster, linkage
    from scipy.stats import norm

    c = np.asarray(counts, dtype=np.float64)
    keys = np.asarray(cells.labels)
    sd = noise_sd(scale)
    n_keys = max(1, len(np.unique(keys)))
    groups = np.zeros(len(c), dtype=np.int64)
    n_groups = 0
    for key in np.unique(keys):
        idx = np.flatnonzero(keys == key)
        G = int(max(1, min(len(idx), validation_rows // max(scale * n_keys, 1.0))))
        if G >= len(idx) or len(idx) < 2:
            labels = np.arange(len(idx))
        else:
            labels = fcluster(linkage(cells.centres[idx], method="ward"), t=G, criterion="maxclust") - 1
        groups[idx] = labels + n_groups
        n_groups += int(labels.max()) + 1
    z = float(norm.ppf(1.0 - 1.0 / max(n_groups, 2)))
    out = np.zeros_like(c)
    for g in range(n_groups):
        members = np.flatnonzero(groups == g)
        total = float(c[members].sum())
        if total < z * sd * math.sqrt(len(members)) or total <= 0:
            continue
        pos = np.maximum(c[members], 0.0)
        out[members] = total * (pos / pos.sum() if pos.sum() > 0 else np.full(len(members), 1.0 / len(members)))
    return out


def grouped(*args: Any, factor: float, reserve: float, within_keys: bool = False) -> np.ndarray:
    """The thresholded split over groups of cells (:func:`grouped_counts`, as noise-free counts), then the reserve
    as shipped."""
    consumer_counts, consumer_scale, validation_rows, cells, owner_counts, size = args
    c = np.asarray(consumer_counts, dtype=np.float64)
    B = int(math.ceil(factor * size))
    R = int(math.floor(reserve * B))
    wanted = grouped_counts(c, consumer_scale, validation_rows, cells)
    if wanted.sum() <= 0:
        return quotas_with_reserve(*args, factor=factor, reserve=reserve, within_keys=within_keys)
    main = quotas_from_cells(
        wanted, 0.0, validation_rows, cells, owner_counts, size, factor=(B - R) / max(size, 1), within_keys=within_keys
    )
    if R == 0:
        return main
    return _reserve_split(np.maximum(c, 0.0), R, main, cells, np.asarray(owner_counts, dtype=np.float64))


#: ``discoveries`` keeps a cell when at least this share of the cells at or above its count are estimated to hold rows.
DISCOVERY_SHARE = 0.5


def discovery_counts(counts: np.ndarray, scale: float, least_share: float = DISCOVERY_SHARE) -> np.ndarray:
    """Each cell's clipped count times the estimated share of the cells at or above its count that hold rows
    (``discoveries``): ``q_j = 1 - min(1, J P(Z >= c~_j) / #{i : c~_i >= c~_j})``, ``P(Z >= k) = r^k / (1 + r)`` for
    the discrete Laplace of scale ``scale`` (``r = exp(-1 / scale)``) at the integer ``k = ceil(c~_j)``; 0 where
    ``q_j`` is below ``least_share``."""
    c = np.asarray(counts, dtype=np.float64)
    if scale == 0 or not len(c):
        return np.maximum(c, 0.0)
    r = math.exp(-1.0 / scale)
    k = np.ceil(np.maximum(c, 1.0))
    noise_cells = len(c) * np.exp(k * math.log(r)) / (1.0 + r)
    at_or_above = len(c) - np.searchsorted(np.sort(c), c, side="left")
    share = 1.0 - np.minimum(1.0, noise_cells / np.maximum(at_or_above, 1))
    out: np.ndarray = np.where((c > 0) & (share >= least_share), c * share, 0.0)
    return out


def discoveries(least_share: float) -> Callable[..., np.ndarray]:
    """``quotas_with_reserve`` with every split in proportion to :func:`discovery_counts` at ``least_share`` (as
    noise-free counts: no threshold)."""

    def quotas(*args: Any, factor: float, reserve: float, within_keys: bool = False) -> np.ndarray:
        consumer_counts, consumer_scale, validation_rows, cells, owner_counts, size = args
        weights = discovery_counts(np.asarray(consumer_counts, dtype=np.float64), consumer_scale, least_share)
        if weights.sum() <= 0:
            return quotas_with_reserve(*args, factor=factor, reserve=reserve, within_keys=within_keys)
        return quotas_with_reserve(
            weights,
            0.0,
            validation_rows,
            cells,
            owner_counts,
            size,
            factor=factor,
            reserve=reserve,
            within_keys=within_keys,
        )

    return quotas


RULES: dict[str, Callable[..., np.ndarray]] = {
    "projected": reserve_by(lambda c, scale, rows, cells: counts_within_total(c, rows)),
    "capped": capped,
    "cleared": reserve_by(lambda c, scale, rows, cells: cleared_counts(c, scale)),
    "cleared-by-key": reserve_by(lambda c, scale, rows, cells: cleared_by_key(c, scale, cells)),
    "grouped": grouped,
    "discoveries": discoveries(DISCOVERY_SHARE),
    "discoveries-all": discoveries(0.0),
}


def _rename_command(out: Path, tag: str, rule: str) -> None:
    """The results file and table of ``tag`` name this script and the rule, not benches/testbeds.py."""
    old, new = "python benches/testbeds.py", f"python benches/reserve_rules.py {rule}"
    results = out / f"results-{tag}.json"
    data: dict[str, Any] = json.loads(results.read_text())
    data["meta"]["command"] = data["meta"]["command"].replace(old, new, 1)
    results.write_text(json.dumps(data, indent=1))
    table = out / f"table-{tag}.md"
    table.write_text(table.read_text().replace(f"`{old}", f"`{new}", 1))


def main() -> None:
    if sys.argv[1:2] in (["-h"], ["--help"]):  # this usage, then benches/testbeds.py's options
        print(f"usage: python benches/reserve_rules.py {{{','.join(RULES)}}} TESTBEDS_OPTIONS...\n")
        testbeds.main()
    if len(sys.argv) < 2 or sys.argv[1] not in RULES:
        raise SystemExit(f"usage: python benches/reserve_rules.py {{{','.join(RULES)}}} TESTBEDS_OPTIONS...")
    rule = sys.argv.pop(1)
    cell_purchase.quotas_with_reserve = RULES[rule]  # type: ignore[assignment]
    testbeds.main()
    argv = sys.argv[1:]
    if "--tag" in argv and "--summarize" not in argv:
        out = Path(argv[argv.index("--out") + 1]) if "--out" in argv else Path("docs/experiments/testbeds")
        _rename_command(out, argv[argv.index("--tag") + 1], rule)


if __name__ == "__main__":
    main()
