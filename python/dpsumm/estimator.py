"""``dpsumm.Summarizer``: :func:`dpsumm.summarize` as a scikit-learn-style estimator."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from .accounting import Budget
from .errors import InvalidParameterError, NotFittedError
from .hashing import RFFHasher
from .methods import MethodOptionError, resolve_method
from .protocols.base import SummaryMethod
from .results import Owner, SummaryResult
from .types import ArrayLike, Method, RandomState

__all__ = ["Summarizer"]

#: summarize()'s argument names for the arguments of Summarizer.fit.
_FIT_NAMES = {"validation": "X_validation", "validation_labels": "y_validation"}
# (``validation_strata`` keeps its name in fit)
_PARAMS = ("size", "method", "privacy", "gamma", "seed_set", "feature_range", "random_state", "progress")


class Summarizer:
    """Build a summary of ``size`` rows from the owners' data for a consumer's validation set.

    ``Summarizer(size, method=..., privacy=...).fit(owners, X_validation)`` runs :func:`dpsumm.summarize`
    with these parameters and keeps the result; the parameters mean exactly what they mean there.

    Parameters
    ----------
    size : int
        Summary size ``p``.
    method : method object or name, default="nominations"
        :class:`dpsumm.Nominations` (the recommended private method), :class:`dpsumm.PaperProtocol`, or a
        non-private baseline; a name means that method's defaults. The method's own options are its fields
        (``Summarizer(200, method=dpsumm.Nominations(nominees=600))``); in ``get_params(deep=True)`` and
        ``set_params`` they appear as ``method__<option>`` (scikit-learn's nested parameters).
    privacy : dpsumm.Budget, optional
        The budget of the private method (see :func:`dpsumm.summarize`).
    gamma : float or "median", default="median"
    seed_set : array-like, int or None
        Public rows (the median heuristic's sample; the paper's ``D_init``).
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
        method: SummaryMethod | Method = "nominations",
        privacy: Budget | None = None,
        gamma: float | Literal["median"] = "median",
        seed_set: ArrayLike | int | None = None,
        feature_range: tuple[float, float] = (0.0, 1.0),
        random_state: RandomState = None,
        progress: bool = False,
        **options: Any,
    ) -> None:
        if options:
            from .methods import misplaced_options

            raise misplaced_options(options, method, where="Summarizer")
        self.size = size
        self.method = method
        self.privacy = privacy
        self.gamma = gamma
        self.seed_set = seed_set
        self.feature_range = feature_range
        self.random_state = random_state
        self.progress = progress

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The constructor's parameters (scikit-learn API); with ``deep``, also the method's options as
        ``method__<option>``."""
        params = {k: getattr(self, k) for k in _PARAMS}
        if deep:
            method = resolve_method(self.method)
            params.update({f"method__{k}": v for k, v in method.get_params().items()})
        return params

    def set_params(self, **params: Any) -> Summarizer:
        """Set constructor parameters, or the method's options as ``method__<option>`` (scikit-learn API)."""
        nested = {k.split("__", 1)[1]: v for k, v in params.items() if k.startswith("method__")}
        plain = {k: v for k, v in params.items() if not k.startswith("method__")}
        for key in plain:
            if key not in _PARAMS:
                raise MethodOptionError(
                    f"invalid parameter {key!r} for Summarizer; valid: {sorted(_PARAMS)} and method__<option>", key
                )
        if nested:  # built before anything is set: a refused option leaves the estimator unchanged
            plain["method"] = resolve_method(plain.get("method", self.method)).set_params(**nested)
        for key, value in plain.items():
            setattr(self, key, value)
        return self

    def fit(
        self,
        owners: Sequence[Owner | ArrayLike],
        X_validation: ArrayLike,
        y_validation: ArrayLike | None = None,
        *,
        validation_strata: Any = None,
    ) -> Summarizer:
        """Run the summary.

        Parameters
        ----------
        owners : list of array-like or Owner
            Each owner's rows (and labels, with :class:`dpsumm.Owner`).
        X_validation : array-like of shape (m, n_features)
            The consumer's validation rows.
        y_validation : array-like of shape (m,), optional
            Their labels: ``validation_labels`` of :func:`dpsumm.summarize`, for
            ``Nominations(label_set=...)`` (the label purchase; other methods refuse them).
        validation_strata : array-like, optional
            Their public strata: ``validation_strata`` of :func:`dpsumm.summarize`, for
            ``Nominations(purchase=ByStrata(levels=...))`` with owners' strata (``dpsumm.Owner(X, strata=...)``).

        Returns
        -------
        self
        """
        from .summarize import summarize

        try:
            res = summarize(
                owners,
                X_validation,
                self.size,
                self.method,
                privacy=self.privacy,
                gamma=self.gamma,
                seed_set=self.seed_set,
                feature_range=self.feature_range,
                random_state=self.random_state,
                progress=self.progress,
                validation_labels=y_validation,
                validation_strata=validation_strata,
            )
        except InvalidParameterError as exc:  # summarize's names for fit's arguments
            renamed = _FIT_NAMES.get(exc.argument or "")
            if renamed is not None and exc.args:  # the message keeps summarize's name, after fit's
                exc.args = (f"`{renamed}` (summarize's `{exc.argument}`): {exc.args[0]}", *exc.args[1:])
                exc.argument = renamed
            raise
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
        defaults = Summarizer(0).get_params(deep=False)
        changed = [
            f"{k}={v!r}"
            for k, v in self.get_params(deep=False).items()
            if k != "size"
            and not (
                isinstance(v, np.ndarray)
                or v is defaults[k]
                or (not isinstance(defaults[k], np.ndarray) and v == defaults[k])
            )
        ]
        shown = ", ".join([repr(self.size), *(c if len(c) < 80 else c[:77] + "..." for c in changed)])
        return f"Summarizer({shown})"
