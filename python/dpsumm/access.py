"""What the trusted aggregator saw in a run (its parsimony): :class:`Access`, read by the ledger's report and kept on
every :class:`~dpsumm.SummaryResult`."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Access"]


@dataclass(frozen=True)
class Access:
    """What the aggregator saw (its parsimony, paper Lemma 5).

    Attributes
    ----------
    total, per_owner
        Raw rows the aggregator received, in total and per owner.
    hashes, hashes_per_owner
        h1 hashes of rows it received without the rows (the nominations protocol's nominees).
    hashed_rows, hashed_rows_per_owner
        Rows whose h1 hashes reached the aggregator, bought or not (the nominations protocol): every raw row it
        bought (it holds the row, so its hash too) and every row whose hash was sent without the row. At a random
        feature dimension ``d`` at least the number of features a row's hash may be inverted, so a hash reached is in
        effect a row seen; ``hashed_rows - total`` rows were not bought. 0 where a method does not count them.
    validation_rows
        ``|D_v|``: the consumer's validation set size.
    validation_raw_rows
        Raw validation rows the aggregator received (the trusted aggregator may see ``D_v`` in the paper's
        model; the nominations protocol sends them only for the exact-kernel choice).
    """

    total: int
    per_owner: dict[str, int]
    hashes: int = 0
    hashes_per_owner: dict[str, int] = field(default_factory=dict)
    validation_rows: int = 0
    validation_raw_rows: int = 0
    hashed_rows: int = 0
    hashed_rows_per_owner: dict[str, int] = field(default_factory=dict)
