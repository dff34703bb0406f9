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

from ..base import TRY_THE_DEFAULT, OptionsObject, PartyData, refuse_unread

if TYPE_CHECKING:
    from ... import accounting
    from .aggregator import Aggregator, Choice, Pool

__all__ = ["Purchase", "PurchaseRegistry", "PurchaseShape"]


@dataclass(frozen=True, repr=False)
class Purchase(OptionsObject):
    """Base of the purchases (subclasses are frozen dataclasses whose fields are their options)."""

    #: The purchase's name (``--purchase NAME`` on the command line, run config ``purchase``).
    name: ClassVar[str] = ""
    #: What it buys, in a few words: the ``--purchase`` help lists every registered purchase with it.
    brief: ClassVar[str] = ""
    #: Whether every owner makes a DP release (the run spends the owners' budget, replace-one in that owner's rows).
    owner_release: ClassVar[bool] = False
    #: None when the run is certified for every owner, else why it is not (the ledger's note).
    uncertified: ClassVar[str | None] = None
    #: Whether the run needs the owners' and the consumer's labels.
    needs_labels: ClassVar[bool] = False
    #: Whether the owners nominate rows (the method's ``nominees`` and ``candidates`` apply).
    nominates: ClassVar[bool] = True

    @classmethod
    def example(cls) -> Purchase:
        """The purchase with its required options given (the contract tests run every registered purchase by it,
        on rows labelled 0, 1, 2 with one public attribute of levels ``"a"``, ``"b"``); the defaults by default."""
        return cls()

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

    def fit_advice(self) -> str:
        """What a user whose summary from this purchase fits ``D_v`` no better than random rows of it would do
        (:meth:`dpsumm.protocols.base.SummaryMethod.fit_advice`): by default, the default purchase."""
        return TRY_THE_DEFAULT

    def uses_seed_rows(self) -> bool:
        """Whether the purchase reads the run's public seed rows (the run then draws them if the user gives none)."""
        return False

    def default_choice(self, reveal: str) -> str:
        """The aggregator's greedy when the method leaves ``choice`` unset: the exact kernel of bought rows."""
        return "kernel" if reveal == "points" else "hashes"

    def check_plan(self, method: Any, shape: PurchaseShape) -> None:
        """Refuse a run of ``shape`` that this purchase cannot serve (sizes, budgets), before any party is asked
        anything."""

    def commitment(self, reveal: str, choice: str) -> str:
        """How owners commit to their offers: ``"hashes"`` (h1) or ``"digests"`` (16 bytes of each hash)."""
        return "hashes"

    def buy(self, aggregator: Aggregator, size: int) -> Pool:
        """The purchase's exchanges: the rows (or hashes) the aggregator chooses from."""
        raise NotImplementedError

    def choose(self, aggregator: Aggregator, size: int, pool: Pool) -> Choice:
        """The summary from ``pool``: the aggregator's greedy (a purchase may buy more as it chooses)."""
        return aggregator.greedy(size, pool)


@dataclass(frozen=True)
class PurchaseShape:
    """A run as :meth:`Purchase.check_plan` checks it, before any party is asked anything.

    Attributes
    ----------
    size, owners, owner_rows, validation_rows
        The run's shape, as :meth:`dpsumm.protocols.base.SummaryMethod.plan` takes it.
    budget : dpsumm.Budget or None
        The consumer's validation budget (the run's, or the default); None for the exact release.
    owner_epsilon, owner_delta : float
        What each owner's release may spend, for a purchase whose owners release.
    """

    size: int
    owners: int
    owner_rows: list[int] | None
    validation_rows: int | None
    budget: accounting.Budget | None
    owner_epsilon: float
    owner_delta: float


class PurchaseRegistry(dict[str, type[Purchase]]):
    """The purchases by name (:data:`dpsumm.protocols.nominations.PURCHASES`): a name is registered once, to a
    :class:`Purchase` subclass whose own ``name`` it is. Registering a name already taken by another class raises
    :class:`~dpsumm.InvalidParameterError` naming ``name`` instead of silently replacing the first (a run config or
    a ``--purchase`` flag would otherwise build a different purchase than the one its user read about); registering
    the same class again changes nothing."""

    def __init__(self, classes: tuple[type[Purchase], ...] = ()) -> None:
        super().__init__()
        for cls in classes:
            self[cls.name] = cls

    def __setitem__(self, name: str, cls: type[Purchase]) -> None:
        from ...errors import InvalidParameterError

        if not (isinstance(cls, type) and issubclass(cls, Purchase)):
            raise InvalidParameterError(f"a registered purchase must be a Purchase subclass, got {cls!r:.80}", "cls")
        if not isinstance(name, str) or not name or name != cls.name:
            raise InvalidParameterError(
                f"purchase {cls.__name__} must be registered under its own name {cls.name!r}, got {name!r:.80}", "name"
            )
        taken = self.get(name)
        if taken is not None and taken is not cls:
            raise InvalidParameterError(
                f"purchase name {name!r} is already registered to {taken.__module__}.{taken.__qualname__}; "
                f"{cls.__module__}.{cls.__qualname__} needs a name of its own",
                "name",
            )
        super().__setitem__(name, cls)

    def setdefault(self, name: str, cls: type[Purchase]) -> type[Purchase]:  # type: ignore[override]
        if name not in self:
            self[name] = cls
        return self[name]

    def update(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        for name, cls in dict(*args, **kwargs).items():
            self[name] = cls
