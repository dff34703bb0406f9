"""The label purchase: rows bought by public label (and owner group) from the owners' and the consumer's DP counts,
the cell family's exchanges (:class:`~.cell_purchase.CellPurchase`) with each row's key its label
(docs/explanation/label-purchase.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from .cell_purchase import CellPurchase, label_set_option, label_set_tuple, set_required_keys

__all__ = ["ByLabel"]


@dataclass(frozen=True, repr=False)
class ByLabel(CellPurchase):
    """Buy rows by public label (and owner group), from the owners' and the consumer's DP counts.

    ``purchase_factor * size`` raw rows bought (3 x size by default), whatever the number of owners. Every party
    is certified: each owner makes one DP release (the owners' ``(epsilon, delta)`` of the run's budget, default
    ``(1, 1e-6)``, replace-one in that owner's rows); the consumer its histogram over the cells (and, with
    ``sale_tilt_share > 0``, its hashed mean), replace-one in ``D_v``. Needs the owners' labels and the
    consumer's ``validation_labels``; a run chooses on the exact kernel of the bought rows. The special case of
    :class:`~dpsumm.ByStrata` whose one attribute is the training label.

    Parameters
    ----------
    label_set : sequence of int, float or str
        The public labels a row may have; it must not be read off anybody's data. Rows with other labels are
        never sold.
    purchase_factor : float, default 3.0
        Raw owner rows bought, in units of the summary size.
    sale_tilt_share : float, default 0.0
        The share of the consumer's ``epsilon_v`` spent on its hashed mean ``g~``, toward which each owner's sale
        of a label leans (a shift inside the labels); the histogram gets the rest. In ``[0, 1)``.
    reserve : float, default 0.0
        The share of the rows bought kept for every cell the consumer's release counts any row in, below the noise
        threshold too (:class:`~dpsumm.ByStrata`'s default is 1/3).
    """

    name: ClassVar[str] = "labels"
    brief: ClassVar[str] = "3 x size raw rows by public label; needs labels"
    needs_labels: ClassVar[bool] = True

    label_set: Sequence[Any] = label_set_option()

    def _validate(self) -> None:
        set_required_keys(self, "label_set", label_set_tuple, "the public labels the rows may have (e.g. range(10))")
        super()._validate()

    @classmethod
    def example(cls) -> ByLabel:
        return cls(label_set=(0, 1, 2))

    def public_labels(self) -> tuple[Any, ...] | None:
        return tuple(self.label_set)

    def key_set(self) -> tuple[Any, ...]:
        return tuple(self.label_set)
