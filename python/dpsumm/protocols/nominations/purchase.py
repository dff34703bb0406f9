"""What a purchase of the nominations protocol is: how the aggregator gets rows to choose from.

A purchase is a frozen options object (:class:`Purchase`) with its own options, their one default and their
validation. It states what it releases (:attr:`Purchase.owner_release`, :attr:`Purchase.uncertified`), checks a
run's shape before anything is asked of anybody (:meth:`Purchase.check_plan`), then drives the shared
:class:`~dpsumm.protocols.nominations.aggregator.Aggregator` (:meth:`Purchase.buy`, :meth:`Purchase.choose`). Each
purchase lives in its own module with its messages and its owners' handlers; the registry
(:data:`dpsumm.protocols.nominations.PURCHASES`) lists them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from ..base import OptionsObject, PartyData, refuse_unread

if TYPE_CHECKING:
    from ... import accounting
    from .aggregator import Aggregator, Choice, Pool

__all__ = ["Purchase"]


@dataclass(frozen=True, repr=False)
class Purchase(OptionsObject):
    """Base of the purchases (subclasses are frozen dataclasses whose fields are their options)."""

    #: The purchase's name (``--purchase NAME`` on the command line, run config ``purchase``).
    name: ClassVar[str] = ""
    #: Whether every owner makes a DP release (the run spends the owners' budget, replace-one in that owner's rows).
    owner_release: ClassVar[bool] = False
    #: None when the run is certified for every owner, else why it is not (the ledger's note).
    uncertified: ClassVar[str | None] = None
    #: Whether the run needs the owners' and the consumer's labels.
    needs_labels: ClassVar[bool] = False
    #: Whether the owners nominate rows (the method's ``nominees`` and ``candidates`` apply).
    nominates: ClassVar[bool] = True

    def check_method(self, method: Any) -> None:
        """Refuse the method's options that this purchase cannot run with, naming the option."""

    def public_labels(self) -> tuple[Any, ...] | None:
        """The public label set the run's labels are read against (None: the purchase reads no labels)."""
        return None

    def public_levels(self) -> tuple[tuple[Any, ...], ...] | None:
        """The declared levels the run's strata are read against (None: the purchase reads no strata)."""
        return None

    def check_party_data(self, method: Any, data: PartyData, size: int) -> PartyData:
        """The parties' labels and strata as the run reads them, checked before any budget is spent
        (:meth:`dpsumm.protocols.base.SummaryMethod.check_party_data`): a purchase that reads none refuses them."""
        return refuse_unread(method, data)

    def uses_seed_rows(self) -> bool:
        """Whether the purchase reads the run's public seed rows (the run then draws them if the user gives none)."""
        return False

    def default_choice(self, reveal: str) -> str:
        """The aggregator's greedy when the method leaves ``choice`` unset: the exact kernel of bought rows."""
        return "kernel" if reveal == "points" else "hashes"

    def check_plan(
        self,
        method: Any,
        *,
        size: int,
        owners: int,
        owner_rows: list[int] | None,
        validation_rows: int | None,
        budget: accounting.Budget | None,
        owner_epsilon: float,
        owner_delta: float,
    ) -> None:
        """Refuse a run this purchase cannot serve (sizes, budgets), before any party is asked anything."""

    def commitment(self, reveal: str, choice: str) -> str:
        """How owners commit to their offers: ``"hashes"`` (h1) or ``"digests"`` (16 bytes of each hash)."""
        return "hashes"

    def buy(self, aggregator: Aggregator, size: int) -> Pool:
        """The purchase's exchanges: the rows (or hashes) the aggregator chooses from."""
        raise NotImplementedError

    def choose(self, aggregator: Aggregator, size: int, pool: Pool) -> Choice:
        """The summary from ``pool``: the aggregator's greedy (a purchase may buy more as it chooses)."""
        return aggregator.greedy(size, pool)
