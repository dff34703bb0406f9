"""``dpsumm.Summarizer``: :func:`dpsumm.summarize` as a scikit-learn-style estimator."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from .accounting import Budget
from .errors import InvalidParameterError, NotFittedError
from .hashing import RFFHasher
from .results import Owner, SummaryResult
from .types import ArrayLike, Method, Purchase, RandomState, Reveal

__all__ = ["Summarizer"]

_PARAMS = ("size", "method", "privacy", "gamma", "dim", "seed_set", "reveal", "purchase", "nominees",
           "validation_release", "hash_seed", "feature_range", "random_state", "progress")
#: Passed to summarize() only when set (not every method takes them).
_OPTIONAL = ("purchase", "nominees", "validation_release")


class Summarizer:
    """Build a summary of ``size`` rows from the owners' data for a consumer's validation set.

    ``Summarizer(size, method=..., privacy=...).fit(owners, X_validation)`` runs :func:`dpsumm.summarize`
    with these parameters and keeps the result; the parameters mean exactly what they mean there.

    Parameters
    ----------
    size : int
        Summary size ``p``.
    method : {"nominations", "paper", "central-greedy", "paper-greedy", "exact-greedy", "uniform"}
        ``"nominations"`` (default) is the recommended private method; the others are the paper's
        protocol and non-private baselines (see :data:`dpsumm.types.Method`).
    privacy : dpsumm.Budget, optional
        Budget to calibrate the private method to.
    gamma : float or "median", default=0.1
    dim : int, default=140
    seed_set : array-like, int or None
    reveal : {"points", "hashes"}
    purchase : {"nominees", "winners"}, optional
        Nominations only.
    nominees : int, optional
        Nominations only: rows each owner nominates.
    validation_release : {"gaussian", "mwem"}, optional
        Nominations only.
    hash_seed : int or str, default=0
    feature_range : (float, float), default=(0.0, 1.0)
    random_state : None, int or Csprng
        None (OS entropy) is the only private mode; a seed makes the run reproducible and NOT private.
    progress : bool, default=False

    Attributes
    ----------
    result_ : SummaryResult
        Everything :func:`dpsumm.summarize` returned.
    points_ : ndarray of shape (size, n_features) or None
        The summary rows (None with ``reveal="hashes"``).
    hashes_ : ndarray of shape (size, dim)
    labels_ : ndarray of shape (size,) or None
    owner_, index_ : ndarray of shape (size,)
        Owner and row index of each summary row.
    privacy_ : dpsumm.Ledger or None
    hasher_ : RFFHasher
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np, dpsumm
    >>> rng = np.random.default_rng(0)
    >>> owners = [rng.uniform(size=(30, 3)) for _ in range(3)]
    >>> s = dpsumm.Summarizer(5, method="paper-greedy", random_state=0).fit(owners, rng.uniform(size=(20, 3)))
    >>> s.points_.shape
    (5, 3)
    """

    def __init__(
        self,
        size: int,
        *,
        method: Method = "nominations",
        privacy: Budget | None = None,
        gamma: float | Literal["median"] = 0.1,
        dim: int = 140,
        seed_set: ArrayLike | int | None = None,
        reveal: Reveal = "points",
        purchase: Purchase | None = None,
        nominees: int | None = None,
        validation_release: Literal["gaussian", "mwem"] | None = None,
        hash_seed: int | str = 0,
        feature_range: tuple[float, float] = (0.0, 1.0),
        random_state: RandomState = None,
        progress: bool = False,
    ) -> None:
        self.size = size
        self.method = method
        self.privacy = privacy
        self.gamma = gamma
        self.dim = dim
        self.seed_set = seed_set
        self.reveal = reveal
        self.purchase = purchase
        self.nominees = nominees
        self.validation_release = validation_release
        self.hash_seed = hash_seed
        self.feature_range = feature_range
        self.random_state = random_state
        self.progress = progress

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The constructor's parameters (scikit-learn API)."""
        return {k: getattr(self, k) for k in _PARAMS}

    def set_params(self, **params: Any) -> "Summarizer":
        """Set constructor parameters (scikit-learn API); checked when ``fit`` runs."""
        for key, value in params.items():
            if key not in _PARAMS:
                raise InvalidParameterError(f"invalid parameter {key!r} for Summarizer; valid: {sorted(_PARAMS)}", key)
            setattr(self, key, value)
        return self

    def fit(self, owners: Sequence[Owner | ArrayLike], X_validation: ArrayLike) -> "Summarizer":
        """Run the summary.

        Parameters
        ----------
        owners : list of array-like or Owner
            Each owner's rows (and labels, with :class:`dpsumm.Owner`).
        X_validation : array-like of shape (m, n_features)
            The consumer's validation rows.

        Returns
        -------
        self
        """
        from .summarize import summarize

        kwargs: dict[str, Any] = {k: getattr(self, k) for k in _OPTIONAL if getattr(self, k) is not None}
        res = summarize(owners, X_validation, self.size, method=self.method, seed_set=self.seed_set, gamma=self.gamma,
                        dim=self.dim, privacy=self.privacy, reveal=self.reveal, random_state=self.random_state,
                        progress=self.progress, hash_seed=self.hash_seed, feature_range=self.feature_range, **kwargs)
        self.result_: SummaryResult = res
        self.points_: np.ndarray | None = res.points
        self.hashes_: np.ndarray = res.hashes
        self.labels_: np.ndarray | None = res.labels
        self.owner_: np.ndarray = res.owner
        self.index_: np.ndarray = res.index
        self.privacy_: Any = res.privacy
        self.hasher_: RFFHasher = res.hasher
        self.n_features_in_: int = int(res.hasher.n_features)  # type: ignore[arg-type]
        return self

    def transform(self, X: ArrayLike) -> np.ndarray:
        """``h1(X)`` with the summary's public hasher (to use a model trained on ``hashes_``)."""
        if not hasattr(self, "hasher_"):
            raise NotFittedError("this Summarizer is not fitted: call fit(owners, X_validation) first")
        return self.hasher_.transform(X)

    def __repr__(self) -> str:
        defaults = Summarizer(0).get_params()
        changed = [f"{k}={v!r}" for k, v in self.get_params().items()
                   if k != "size" and not (isinstance(v, np.ndarray) or v is defaults[k] or
                                           (not isinstance(defaults[k], np.ndarray) and v == defaults[k]))]
        shown = ", ".join([repr(self.size), *(c if len(c) < 60 else c[:57] + "..." for c in changed)])
        return f"Summarizer({shown})"
