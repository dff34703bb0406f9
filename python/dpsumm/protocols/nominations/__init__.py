"""The nominations protocol: the consumer releases what it wants privately, the owners offer rows, the trusted
aggregator buys and chooses (docs/explanation/nominations.md, design.md).

* :mod:`.method` - :class:`Nominations`, the method object, and :func:`run_nominations`;
* :mod:`.aggregator` - the exchanges every purchase shares;
* :mod:`.purchase` - what a purchase is; one module per purchase: :mod:`.nominees`, :mod:`.winners`,
  :mod:`.by_label`, :mod:`.by_strata`, :mod:`.by_direction`;
* the cell family those last three share: :mod:`.cell_purchase` (:class:`CellPurchase`), its messages
  :mod:`.cell_messages`, its rule :mod:`.cell_rule` and its arithmetic :mod:`.cells`.

A new purchase is one module (a :class:`Purchase` subclass with its options, messages and owners' handlers), one
line in :data:`PURCHASES`, one test module and one docs page; a new purchase of the cell family subclasses
:class:`CellPurchase` the same way.
"""

from __future__ import annotations

from .aggregator import Aggregator, NominationsConfig, temperature_for
from .by_direction import ByDirection
from .by_label import ByLabel
from .by_strata import ByStrata
from .cell_purchase import CellPurchase
from .method import DEFAULT_DIM, DEFAULT_VALIDATION_BUDGET, Nominations, run_nominations
from .nominees import Nominees
from .purchase import Purchase, PurchaseRegistry, PurchaseShape
from .winners import Winners

__all__ = [
    "Nominations",
    "Purchase",
    "PurchaseRegistry",
    "PurchaseShape",
    "Nominees",
    "Winners",
    "ByLabel",
    "ByStrata",
    "ByDirection",
    "CellPurchase",
    "PURCHASES",
    "Aggregator",
    "NominationsConfig",
    "run_nominations",
    "temperature_for",
    "DEFAULT_DIM",
    "DEFAULT_VALIDATION_BUDGET",
]

#: Every purchase class by its name (``--purchase NAME``, run config ``purchase``); the default first.
PURCHASES: dict[str, type[Purchase]] = PurchaseRegistry(
    (
        ByDirection,
        Nominees,
        ByLabel,
        ByStrata,
        Winners,
    )
)
