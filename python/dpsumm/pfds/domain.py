"""The public domain of the attributes and labels (bounds and classes known in advance)."""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping, Sequence, Sized
from typing import Any, cast

import numpy as np

from .._validation import as_array, bounded_int, real_vector
from ..accounting import Neighbour
from ..errors import InvalidParameterError

#: Number of label buckets for regression (Section 3.1: "discretizes Y into b = 10 buckets").
REGRESSION_BUCKETS = 10
#: The neighbour relation under which every ε in this module holds.
NEIGHBOUR: Neighbour = "add-remove"
#: Most attributes of a :meth:`Domain.box` (the projection caps of h1: rust/src/limits.rs).
MAX_FEATURES = 1 << 24
#: Most classes a domain may list (every leaf of every tree holds a noisy count per class).
MAX_CLASSES = 1 << 16
#: Refuse trees with more leaves than this (categorical attributes multiply the branching).
MAX_LEAVES = 1 << 18
#: The exact dense non-negative least squares (Lawson-Hanson) is used up to this many leaves; above
#: it, a sparse trust-region solve (tolerance 1e-12) is used instead.
_DENSE_MAX_LEAVES = 4096


# ----------------------------------------------------------------------------------------------
# the public domain
# ----------------------------------------------------------------------------------------------


class Domain:
    r"""The public data domain: bounds of every numeric attribute, the values of every categorical
    attribute, and the label set.

    The domain must be public knowledge (a data dictionary, physical limits, a published schema):
    PFDS draws split candidates and synthetic rows from it, and never reads bounds from private
    rows. Rows outside the domain are rejected (:class:`~dpsumm.errors.InvalidParameterError`).

    Parameters
    ----------
    bounds : sequence of (float, float) or None, or array of shape (d, 2)
        ``bounds[j] = (low, high)`` with ``low < high`` for a numeric attribute j (values in the
        closed interval ``[low, high]``); ``None`` (or a row of NaN) for a categorical attribute,
        which must then appear in ``categories``.
    categories : mapping int -> sequence of float, optional
        ``categories[j]`` lists the distinct values (numeric codes) attribute j can take.
    classes : sequence, optional
        The label set for classification. Exactly one of ``classes`` and ``label_range``.
    label_range : (float, float), optional
        ``(low, high)`` of a real label, for regression: labels are mapped to
        :data:`REGRESSION_BUCKETS` equal-width buckets over this range (Section 3.1).

    Examples
    --------
    MNIST (pixels scaled to [0, 1], ten digits):

    >>> mnist = Domain.box(784, 0.0, 1.0, classes=range(10))
    >>> mnist.n_features, mnist.n_classes
    (784, 10)
    """

    def __init__(
        self,
        bounds: Any,
        categories: Mapping[int, Sequence[float]] | None = None,
        *,
        classes: Sequence[Any] | None = None,
        label_range: tuple[float, float] | None = None,
    ) -> None:
        cats = {} if categories is None else categories
        if not isinstance(cats, Mapping):
            raise InvalidParameterError("`categories` must be a mapping {column: [values]}", "categories")
        rows = _bound_rows(bounds)
        d = len(rows)
        if d == 0:
            raise InvalidParameterError("`bounds` must describe at least one attribute", "bounds")
        self.categories: dict[int, np.ndarray] = _checked_categories(cats, d)
        self.lower, self.upper = _numeric_bounds(rows, self.categories)
        self.n_features = d
        self.is_categorical = np.zeros(d, dtype=bool)
        self.is_categorical[list(self.categories)] = True
        if (classes is None) == (label_range is None):
            raise InvalidParameterError(
                "give exactly one of `classes` (classification) and `label_range` (regression)", "classes"
            )
        self.classes: np.ndarray | None = None if classes is None else _checked_classes(classes)
        self.label_range: tuple[float, float] | None = None if label_range is None else _checked_range(label_range)

    @classmethod
    def box(
        cls,
        n_features: int,
        lower: float | Sequence[float],
        upper: float | Sequence[float],
        *,
        classes: Sequence[Any] | None = None,
        label_range: tuple[float, float] | None = None,
    ) -> Domain:
        """An all-numeric domain ``[lower, upper]^d`` (scalars broadcast)."""
        d = bounded_int(n_features, "n_features", 1, MAX_FEATURES)
        ends = []
        for name, value in (("lower", lower), ("upper", upper)):
            arr = as_array(value, name)
            if arr.dtype.kind not in "fiu" or arr.ndim > 1 or (arr.ndim == 1 and arr.shape[0] != d):
                raise InvalidParameterError(
                    f"`{name}` must be a number or {d} numbers (one per feature), got "
                    f"{type(value).__name__} of shape {arr.shape} and dtype {arr.dtype}",
                    name,
                )
            ends.append(np.broadcast_to(arr.astype(np.float64), (d,)))
        lo, hi = ends
        if not np.isfinite(lo).all():
            raise InvalidParameterError("`lower` must be finite for every feature", "lower")
        if not (np.isfinite(hi).all() and (lo < hi).all()):
            raise InvalidParameterError("`upper` must be finite and above `lower` for every feature", "upper")
        return cls(np.stack([lo, hi], axis=1), classes=classes, label_range=label_range)

    @property
    def task(self) -> str:
        """``"classification"`` or ``"regression"``."""
        return "classification" if self.classes is not None else "regression"

    @property
    def n_classes(self) -> int:
        """Number of label classes the trees count (``REGRESSION_BUCKETS`` for regression)."""
        return REGRESSION_BUCKETS if self.classes is None else int(self.classes.size)

    def index_box(self) -> tuple[np.ndarray, np.ndarray]:
        """The root box in *index space*: numeric columns ``[lower, upper]``; categorical column j
        ``[0, len(categories[j]))`` (a category is the integer index of its value)."""
        lo = self.lower.copy()
        hi = self.upper.copy()
        for j, vals in self.categories.items():
            lo[j], hi[j] = 0.0, float(vals.size)
        return lo, hi

    # --- validation of private inputs (no randomness is used here) ---

    def check_rows(self, X: object, name: str) -> np.ndarray:
        """``X`` as float64 (n, d) inside the domain; raises naming ``name`` otherwise."""
        arr = as_array(X, name)
        if arr.dtype.kind not in "fiub":
            raise InvalidParameterError(f"`{name}` must hold real numbers, got dtype {arr.dtype}", name)
        if arr.ndim != 2:
            raise InvalidParameterError(f"`{name}` must be 2-D (rows x features), got {arr.ndim}-D", name)
        if arr.shape[1] != self.n_features:
            raise InvalidParameterError(
                f"`{name}` has {arr.shape[1]} features per row, the domain has {self.n_features}", name
            )
        arr = np.asarray(arr, dtype=np.float64)
        if arr.shape[0] == 0:
            return arr
        # column reductions first (no (n, d) temporaries on the common, valid path)
        col_min, col_max = arr.min(axis=0), arr.max(axis=0)
        if not (np.isfinite(col_min).all() and np.isfinite(col_max).all()):
            r, c = np.argwhere(~np.isfinite(arr))[0]
            raise InvalidParameterError(f"`{name}` contains NaN or infinite values (row {r}, attribute {c})", name)
        num = ~self.is_categorical
        if num.any() and ((col_min[num] < self.lower[num]).any() or (col_max[num] > self.upper[num]).any()):
            bad = ((arr < self.lower) | (arr > self.upper)) & num
            if bad.any():
                r, c = np.argwhere(bad)[0]
                j = int(c)
                raise InvalidParameterError(
                    f"`{name}` row {r} attribute {j} = {arr[r, j].item()!r} lies outside the domain bounds "
                    f"[{self.lower[j].item()!r}, {self.upper[j].item()!r}]",
                    name,
                )
        for j, vals in self.categories.items():
            col = arr[:, j]
            pos = np.clip(np.searchsorted(vals, col), 0, vals.size - 1)
            bad = vals[pos] != col
            if bad.any():
                r = int(np.flatnonzero(bad)[0])
                raise InvalidParameterError(
                    f"`{name}` row {r} attribute {j} has unknown category {col[r].item()!r} (known: {vals.tolist()})",
                    name,
                )
        return arr

    def to_index(self, X: np.ndarray) -> np.ndarray:
        """Rows in index space (categorical values replaced by their index). ``X`` already checked."""
        if not self.categories:
            return X
        out = X.copy()
        for j, vals in self.categories.items():
            out[:, j] = np.searchsorted(vals, X[:, j])
        return cast(np.ndarray, out)

    def from_index(self, Z: np.ndarray) -> np.ndarray:
        """Inverse of :meth:`to_index` (indices are floored)."""
        if not self.categories:
            return Z
        out = Z.copy()
        for j, vals in self.categories.items():
            out[:, j] = vals[np.clip(np.floor(Z[:, j]).astype(np.int64), 0, vals.size - 1)]
        return cast(np.ndarray, out)

    def check_labels(self, y: object, n: int, name: str) -> np.ndarray:
        """Labels as class indices in ``[0, n_classes)`` (regression: bucket indices)."""
        arr = as_array(y, name)
        if arr.dtype.kind not in "biufUSO":
            raise InvalidParameterError(f"`{name}` must hold labels (numbers or strings), got dtype {arr.dtype}", name)
        if arr.ndim != 1 or arr.shape[0] != n:
            raise InvalidParameterError(
                f"`{name}` must be 1-D with {n} labels (one per row), got shape {arr.shape}", name
            )
        if n == 0:
            return np.zeros(0, dtype=np.int64)
        if self.classes is not None:
            if arr.dtype.kind == "f" and not np.isfinite(arr).all():
                raise InvalidParameterError(f"`{name}` contains NaN or infinite values", name)
            try:
                pos = np.clip(np.searchsorted(self.classes, arr), 0, self.classes.size - 1)
                bad = self.classes[pos] != arr
            except TypeError as exc:
                raise InvalidParameterError(
                    f"`{name}` labels are not comparable with the domain's classes", name
                ) from exc
            if np.any(bad):
                r = int(np.flatnonzero(bad)[0])
                raise InvalidParameterError(
                    f"`{name}` row {r} has unknown label {arr[r].item()!r} (classes: {self.classes.tolist()})", name
                )
            return pos.astype(np.int64)
        if arr.dtype.kind not in "fiu":
            raise InvalidParameterError(f"`{name}` must hold real numbers for regression, got dtype {arr.dtype}", name)
        v = arr.astype(np.float64)
        if not np.isfinite(v).all():
            raise InvalidParameterError(f"`{name}` contains NaN or infinite values", name)
        lo, hi = self.label_range  # type: ignore[misc]
        bad = (v < lo) | (v > hi)
        if bad.any():
            r = int(np.flatnonzero(bad)[0])
            raise InvalidParameterError(
                f"`{name}` row {r} label {v[r].item()!r} lies outside label_range [{lo}, {hi}]", name
            )
        return self._bucket(v)

    def bucket(self, y: np.ndarray) -> np.ndarray:
        """Regression labels -> bucket index in ``[0, REGRESSION_BUCKETS)`` (``y``: a 1-D array of finite numbers;
        InvalidParameterError for anything else, or for a classification domain, which has no buckets)."""
        if self.label_range is None:
            raise InvalidParameterError("`y`: a classification domain (classes) has no regression buckets", "y")
        return self._bucket(real_vector(y, "y"))

    def _bucket(self, y: np.ndarray) -> np.ndarray:
        lo, hi = self.label_range  # type: ignore[misc]
        b = np.floor((y - lo) / (hi - lo) * REGRESSION_BUCKETS).astype(np.int64)
        return cast(np.ndarray, np.clip(b, 0, REGRESSION_BUCKETS - 1))

    def __repr__(self) -> str:
        label = f"classes={self.classes.tolist()}" if self.classes is not None else f"label_range={self.label_range}"
        return f"Domain(n_features={self.n_features}, categorical={sorted(self.categories)}, {label})"


def _bound_rows(bounds: Any) -> list[Any]:
    """``Domain``'s ``bounds`` as a list: ``(low, high)`` or None per attribute."""
    if isinstance(bounds, np.ndarray):
        if bounds.dtype.kind not in "fiu":
            raise InvalidParameterError(f"`bounds` must hold real numbers, got dtype {bounds.dtype}", "bounds")
        arr = np.asarray(bounds, dtype=np.float64)
        if arr.ndim != 2 or arr.shape[1] != 2:
            raise InvalidParameterError(f"`bounds` must have shape (d, 2), got {arr.shape}", "bounds")
        rows: list[Any] = [None if np.isnan(r).all() else (float(r[0]), float(r[1])) for r in arr]
    else:
        try:
            rows = list(bounds)
        except TypeError as exc:
            raise InvalidParameterError("`bounds` must be a sequence of (low, high) or None", "bounds") from exc
    return rows


def _reals(values: Any) -> list[Any]:
    """``values`` as a list, with TypeError for a complex number among them (``float`` of numpy's complex only warns
    and drops the imaginary part)."""
    items = list(values)
    if any(isinstance(v, (complex, np.complexfloating)) for v in items):
        raise TypeError("complex numbers are not real")
    return items


def _checked_categories(cats: Mapping[Any, Any], d: int) -> dict[int, np.ndarray]:
    """``Domain``'s ``categories``: each key a column of ``d``, each value the sorted distinct finite values."""
    out: dict[int, np.ndarray] = {}
    for j, cj in cats.items():
        if isinstance(j, bool) or not isinstance(j, numbers.Integral) or not 0 <= int(j) < d:
            raise InvalidParameterError(f"`categories` key {j!r} is not a column index in [0, {d})", "categories")
        try:
            vals = np.asarray(_reals(cj), dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise InvalidParameterError(
                f"`categories[{j}]` must be a non-empty list of finite numbers: {exc}", "categories"
            ) from None
        if vals.ndim != 1 or vals.size == 0 or not np.isfinite(vals).all():
            raise InvalidParameterError(f"`categories[{j}]` must be a non-empty list of finite numbers", "categories")
        if np.unique(vals).size != vals.size:
            raise InvalidParameterError(f"`categories[{j}]` has repeated values", "categories")
        out[int(j)] = np.sort(vals)
    return out


def _numeric_bounds(rows: list[Any], categories: dict[int, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Every attribute's ``(lower, upper)`` (NaN for a categorical one): finite, low < high."""
    d = len(rows)
    lower = np.full(d, np.nan)
    upper = np.full(d, np.nan)
    for j, b in enumerate(rows):
        if j in categories:
            if b is not None:
                raise InvalidParameterError(
                    f"attribute {j} has both bounds and categories; give `bounds[{j}] = None`", "bounds"
                )
            continue
        if b is None:
            raise InvalidParameterError(f"missing bounds for numeric attribute {j} (and no categories)", "bounds")
        try:
            lo, hi = (float(v) for v in _reals(b))
        except (TypeError, ValueError, OverflowError) as exc:
            raise InvalidParameterError(f"`bounds[{j}]` must be a pair (low, high), got {b!r}", "bounds") from exc
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise InvalidParameterError(f"`bounds[{j}]` must be finite with low < high, got ({lo!r}, {hi!r})", "bounds")
        lower[j], upper[j] = lo, hi
    return lower, upper


def _checked_classes(classes: Any) -> np.ndarray:
    """``Domain``'s ``classes``, sorted: at least two distinct finite numbers or strings, at most ``MAX_CLASSES``."""
    if isinstance(classes, (str, bytes)) or not isinstance(classes, Iterable):
        raise InvalidParameterError(f"`classes` must be a list of labels, got {type(classes).__name__}", "classes")
    if isinstance(classes, Sized) and len(classes) > MAX_CLASSES:
        raise InvalidParameterError(
            f"`classes` lists {len(classes)} labels, more than the cap of {MAX_CLASSES}", "classes"
        )
    try:
        cl = np.asarray(list(classes))
    except Exception as exc:  # numpy raises many types on ragged or exotic input
        raise InvalidParameterError(f"`classes` must list labels: {exc}", "classes") from None
    if cl.ndim != 1 or cl.size < 2:
        raise InvalidParameterError("`classes` must list at least two labels", "classes")
    if cl.size > MAX_CLASSES:
        raise InvalidParameterError(f"`classes` lists {cl.size} labels, more than the cap of {MAX_CLASSES}", "classes")
    if cl.dtype.kind not in "iufUSb" or (cl.dtype.kind == "f" and not np.isfinite(cl).all()):
        raise InvalidParameterError(f"`classes` must be finite numbers or strings, got {cl.tolist()!r:.80}", "classes")
    if np.unique(cl).size != cl.size:
        raise InvalidParameterError("`classes` has repeated labels", "classes")
    return np.sort(cl)


def _checked_range(label_range: Any) -> tuple[float, float]:
    """``Domain``'s ``label_range``: finite, low < high."""
    try:
        lo, hi = (float(v) for v in _reals(label_range))
    except (TypeError, ValueError, OverflowError) as exc:
        raise InvalidParameterError("`label_range` must be a pair (low, high)", "label_range") from exc
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise InvalidParameterError("`label_range` must be finite with low < high", "label_range")
    return (lo, hi)
