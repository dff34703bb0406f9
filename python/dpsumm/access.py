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
