"""The strata purchase: rows bought by public stratum, the label purchase's exchanges with each row's cell read off
its public attributes instead of its label (docs/guide/strata.md, docs/explanation/label-purchase.md).

A row's stratum is its position in the product of the declared levels of one or several public attributes
(:func:`dpsumm.strata.stratum_index`); a row with a value outside its attribute's levels is in no stratum and is
never counted or sold. The owners release their row counts per stratum and the sum of the cells' h1, the consumer
its histogram over the cells (owner group, stratum), the aggregator buys ``purchase_factor * size`` rows by
stratum (:class:`~dpsumm.protocols.nominations.cell_purchase.CellPurchase`). The proofs are the label purchase's: a
stratum is a public function of the row, so replacing one row moves one count from one stratum to another, as a
label does. The summary's ``labels`` are the owners' training labels, not the strata.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ...strata import Levels, levels_tuple
from .aggregator import Aggregator
from .cell_purchase import CellPurchase, levels_option, reserve_option, set_required_keys
from .cell_rule import CellRule
from .cells import RESERVE_SHARE

__all__ = ["ByStrata"]


@dataclass(frozen=True, repr=False)
class ByStrata(CellPurchase):
    """Buy rows by public stratum (and owner group), from the owners' and the consumer's DP counts.

    The strata are public attributes of each row, given beside the data (``dpsumm.Owner(X, strata=...)`` and
    ``summarize(..., validation_strata=...)``); their public values, the *levels*, are declared here and never read
    off anybody's data. Several attributes make one stratum of each combination of their levels. ``purchase_factor *
    size`` raw rows bought whatever K; every party certified, as with :class:`~dpsumm.ByLabel` (the special case
    whose one attribute is the training label).

    Parameters
    ----------
    levels : sequence of sequences of int, float or str
        The public values of each attribute, e.g. ``[("north", "south"), (0, 1)]`` (one attribute's values alone:
        ``("a", "b", "c")``). Rows with a value outside its attribute's levels are never sold.
    purchase_factor : float, default 3.0
        Raw owner rows bought, in units of the summary size.
    sale_tilt_share : float, default 0.0
        The share of ``epsilon_v`` spent on the hashed mean toward which each owner's sale of a stratum leans.
    reserve : float, default 1/3
        The share of the rows bought kept for every cell the consumer's release counts any row in, below the noise
        threshold too (a stratum the consumer wants a few rows of is still offered to the greedy).

    Examples
    --------
    >>> import dpsumm
    >>> dpsumm.Nominations(purchase=dpsumm.ByStrata(levels=[("a", "b", "c"), (0, 1)]))
    Nominations(purchase=ByStrata(levels=(('a', 'b', 'c'), (0, 1))))
    """

    name: ClassVar[str] = "strata"
    brief: ClassVar[str] = "3 x size raw rows by public stratum; needs strata and --levels"

    reserve: float = reserve_option(RESERVE_SHARE)

    levels: Levels = levels_option()

    def _validate(self) -> None:
        set_required_keys(
            self, "levels", levels_tuple, "the public values of each stratum attribute (e.g. [('a', 'b'), (0, 1)])"
        )
        super()._validate()

    @classmethod
    def example(cls) -> ByStrata:
        return cls(levels=(("a", "b"),))

    def public_levels(self) -> Levels | None:
        return self.levels

    def key_set(self) -> tuple[Any, ...]:
        return tuple(range(_product(self.levels)))

    def key_name(self, j: int) -> Any:
        out: list[Any] = []
        for lev in reversed(self.levels):
            j, r = divmod(j, len(lev))
            out.append(lev[r])
        return tuple(reversed(out))

    def cell_rule(self, agg: Aggregator) -> CellRule:
        return CellRule().with_levels(self.levels)


def _product(levels: Levels) -> int:
    n = 1
    for lev in levels:
        n *= len(lev)
    return n
