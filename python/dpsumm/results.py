"""What a summary run returns: :class:`SummaryResult`, and the owners' input type :class:`Owner`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ._validation import bool_flag, positive_int
from .access import Access
from .accounting import certification, privacy_text
from .errors import InvalidParameterError
from .hashing import RFFHasher

if TYPE_CHECKING:
    from .accounting import Certification

__all__ = ["Owner", "Access", "SummaryResult"]


@dataclass(frozen=True)
class Owner:
    """A data owner's rows (and optional labels and strata) with a display name.

    Parameters
    ----------
    data : array-like of shape (n_rows, n_features), path or iterable of chunks
        The owner's private rows (float32 or float64; other real dtypes are converted), or where they live
        (:func:`dpsumm.sources.open_rows`): a ``.npy`` file (memory-mapped), a ``.parquet`` file or a directory
        of parquet files (read in record batches), or an iterable of 2-D chunks; the rows are then never held in
        memory at once; or a :class:`dpsumm.sources.RowSource` opened already (its labels and strata are the
        owner's unless given here).
    labels : array-like of shape (n_rows,) or str, optional
        The training labels, sent along with a row when the aggregator buys it (the summary's ``labels``); with a
        parquet ``data``, the name of its label column.
    strata : array-like, optional
        Public attributes of each row that a purchase by strata (:class:`dpsumm.ByStrata`) counts and buys by:
        one attribute as a 1-D array of ``n_rows`` values, several as a 2-D array (one column each), a list of
        1-D columns or a pandas DataFrame; numbers or strings. With a parquet ``data``, a column name or a list of
        column names.
    name : str, optional
        Defaults to ``"owner-<k>"``.
    chunk_rows : int, default=65536
        Rows read and checked at a time when ``data`` is a path or an iterable of chunks.
    progress : bool, default=False
        Log the progress of reading such a ``data`` (INFO on the ``dpsumm`` logger).
    """

    data: Any
    labels: Any = None
    strata: Any = None
    name: str | None = None
    chunk_rows: int = 65_536
    progress: bool = False

    def __post_init__(self) -> None:
        if self.name is not None and (not isinstance(self.name, str) or not self.name.strip()):
            raise InvalidParameterError(
                f"`name` of an Owner must be None or a non-empty str, got {type(self.name).__name__} {self.name!r:.60}",
                "name",
            )
        positive_int(self.chunk_rows, "chunk_rows")  # read only for a path or chunks: checked for any data
        bool_flag(self.progress, "progress")

    def __repr__(self) -> str:
        shape = getattr(self.data, "shape", None)
        rows = f"{shape[0]}x{shape[1]}" if shape is not None and len(shape) == 2 else type(self.data).__name__
        lab = "" if self.labels is None else ", labelled"
        lab += "" if self.strata is None else ", stratified"
        return f"Owner(name={self.name!r}, rows={rows}{lab})"


@dataclass
class SummaryResult:
    """The summary and everything a user needs to audit it.

    Attributes
    ----------
    points : ndarray of shape (size, n_features) or None
        The summary rows (the seed set removed, Alg. 3 line 10). None when ``reveal="hashes"``.
    hashes : ndarray of shape (size, dim)
        ``h1`` of the summary rows. With ``reveal="hashes"`` this is all the aggregator received: train a
        linear model on it and apply it to ``hasher.transform(X_test)`` (random Fourier features make a
        linear model on ``h1`` an approximate RBF-kernel machine).
    labels : ndarray of shape (size,) or None
        The owners' labels of the summary rows, when the owners were given labels.
    owner : ndarray of shape (size,), int
        Index (into ``owners``) of the owner of each row.
    index : ndarray of shape (size,), int
        Row index of each summary row within its owner's data.
    owner_names : list of str
    accessed : Access
        Raw rows the aggregator saw, total and per owner.
    contribution : ndarray of shape (n_owners,)
        Per owner, the sum of its winning marginal bids ``h1(x).v`` (the paper's value attribution;
        each bid is the marginal gain of Eq. 3 up to the positive factor ``2/(q+1)``).
    privacy : dpsumm.accounting.Ledger or None
        Every privacy-relevant release with its cost (None for the non-private methods).
    trace : list of RoundRecord
        Per round: bids, requests, winner, pool size, and fault events.
    events : list of dict
        Every fault event of the run (owners excluded, an early stop, a summary short of ``size``).
    hasher : RFFHasher
        The public h1 used.
    gamma : float
        The RBF kernel width the run used (a number given, or the median heuristic's value): ``hasher.gamma``.
    method : str
    seconds : float
    seeded : bool
        True when the run used a seeded ``random_state``: reproducible and **NOT private**.
    private : bool
        True only for a private method run from OS entropy (``not seeded`` and a privacy ledger).
    """

    points: np.ndarray | None
    hashes: np.ndarray
    labels: np.ndarray | None
    owner: np.ndarray
    index: np.ndarray
    owner_names: list[str]
    accessed: Access
    contribution: np.ndarray
    privacy: Any
    trace: list[Any]
    events: list[dict[str, Any]]
    hasher: RFFHasher
    method: str
    schedule: Any = None
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)
    seeded: bool = False

    @property
    def gamma(self) -> float:
        """The RBF kernel width the run used (``hasher.gamma``): measure the summary at it
        (``dpsumm.metrics.mmd2(result.points, X, result.gamma)``)."""
        return float(self.hasher.gamma)

    @property
    def private(self) -> bool:
        """Whether the summary is a differentially private release (a private method, OS entropy)."""
        return self.certification().private

    def __len__(self) -> int:
        return int(self.owner.shape[0])

    def certification(self) -> Certification:
        """Whether this result is private and certified (:func:`dpsumm.accounting.certification` of its ledger)."""
        return certification(self.privacy, seeded=bool(self.seeded))

    def privacy_status(self) -> str:
        """``"not private"``, ``"seeded: NOT private"``, ``"private, certified"`` or ``"private, NOT certified"``
        (``self.certification().status``)."""
        return self.certification().status

    def privacy_text(self, delta_owners: float | None = None, delta_validation: float | None = None) -> str:
        """The privacy table, what each party's ε is relative to, what the aggregator saw, and the verdict
        (:func:`dpsumm.accounting.privacy_text`; default δ's: the run's, else ``accounting.DEFAULT_DELTA``)."""
        return privacy_text(self, delta_owners, delta_validation)

    def __repr__(self) -> str:
        excluded = [e["owner"] for e in self.events if e.get("event") == "excluded"]
        ex = f", excluded={excluded}" if excluded else ""
        if any(e.get("event") in ("short", "stopped") for e in self.events):
            ex += ", fewer rows than asked (see .events)"
        return (
            f"SummaryResult(method={self.method!r}, size={len(self)}, owners={len(self.owner_names)}, "
            f"accessed={self.accessed.total}{ex}, {self.privacy_status()})"
        )
