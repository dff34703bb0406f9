"""How good a summary is for the consumer: its fit to ``D_v`` and its share of each stratum or label beside ``D_v``'s.

Everything here reads what the consumer holds after a run (its validation rows, their strata and labels, and the
summary it received with the strata and labels of the rows bought): no party releases anything for it, so it costs
no privacy budget. ``dpsumm summarize`` prints it and saves it in ``report.json`` (key ``"quality"``);
``dpsumm report`` draws it (:mod:`dpsumm.plot`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ._validation import FLOAT32_MAX, as_array, float_matrix, instance_of
from .errors import InvalidParameterError

__all__ = ["shares", "quality_report", "projection", "MAX_PROJECTED"]

#: Rows of the summary and of ``D_v`` kept (evenly spaced) in the report's 2-D projection.
MAX_PROJECTED = 1000


def _keys(columns: Sequence[np.ndarray] | np.ndarray, name: str = "columns") -> list[str]:
    """One display key per row: the row's values of every column, joined by ``/``; InvalidParameterError naming
    ``name`` for anything but a 1-D array or a list of 1-D columns of one length."""
    if isinstance(columns, (str, bytes)) or not isinstance(columns, (np.ndarray, list, tuple)):
        raise InvalidParameterError(
            f"`{name}` must be a 1-D array or a list of 1-D arrays, got {type(columns).__name__}", name
        )
    cols = [np.asarray(columns)] if isinstance(columns, np.ndarray) and np.asarray(columns).ndim == 1 else columns
    cols = [as_array(c, name) for c in cols]
    if any(c.ndim != 1 or len(c) != len(cols[0]) for c in cols):
        raise InvalidParameterError(
            f"`{name}` must be 1-D columns of one length, got shapes {[c.shape for c in cols]}", name
        )
    if not cols:
        return []
    return ["/".join(str(v.item() if hasattr(v, "item") else v) for v in vals) for vals in zip(*cols)]


def shares(
    summary: Sequence[np.ndarray] | np.ndarray, validation: Sequence[np.ndarray] | np.ndarray
) -> list[dict[str, Any]]:
    """Each value's share of the summary's rows beside its share of the validation rows.

    Parameters
    ----------
    summary, validation : 1-D array or list of 1-D arrays (one per attribute)
        A stratum (or label) per row of the summary and of ``D_v``; several attributes are joined (``east/2``).

    Returns
    -------
    list of dict
        ``{"value": str, "summary": float, "validation": float}`` for every value present in either, sorted by
        the validation share (largest first). Shares are fractions in [0, 1].

    Examples
    --------
    >>> import numpy as np
    >>> shares(np.array(["a", "a", "b", "b"]), np.array(["a", "a", "a", "b"]))
    [{'value': 'a', 'summary': 0.5, 'validation': 0.75}, {'value': 'b', 'summary': 0.5, 'validation': 0.25}]
    """
    s, v = _keys(summary, "summary"), _keys(validation, "validation")
    if not v:
        raise InvalidParameterError("`validation` has no rows to count", "validation")
    out = []
    for value in sorted(set(s) | set(v)):
        out.append(
            {
                "value": value,
                "summary": s.count(value) / len(s) if s else 0.0,
                "validation": v.count(value) / len(v),
            }
        )
    return sorted(out, key=lambda d: -d["validation"])


def _rows(value: object, name: str, n_features: int | None = None) -> np.ndarray:
    """Rows of :func:`projection` as float64: finite, within the float32 range (where dpsumm's rows live)."""
    arr = float_matrix(value, name, n_features=n_features, allow_empty=n_features is not None)
    if arr.size and np.abs(arr).max() > FLOAT32_MAX:
        raise InvalidParameterError(f"`{name}` has values beyond the float32 range (|x| > {FLOAT32_MAX:.3g})", name)
    return np.asarray(arr, dtype=np.float64)


def projection(summary: np.ndarray, validation: np.ndarray) -> dict[str, list[list[float]]]:
    """Summary and validation rows on the two leading principal axes of the validation rows (at most
    :data:`MAX_PROJECTED` of each, evenly spaced), for a picture of where the summary lies in ``D_v``."""
    val = _rows(validation, "validation")
    summ = _rows(summary, "summary", val.shape[1])
    centre = val.mean(axis=0)
    _, _, vt = np.linalg.svd(val - centre, full_matrices=False)
    axes = vt[:2].T if vt.shape[0] >= 2 else np.column_stack([vt[0], np.zeros_like(vt[0])])

    def thin(rows: np.ndarray) -> np.ndarray:
        step = max(1, -(-rows.shape[0] // MAX_PROJECTED))
        return rows[::step]

    return {
        "summary": np.round((thin(summ) - centre) @ axes, 6).tolist(),
        "validation": np.round((thin(val) - centre) @ axes, 6).tolist(),
    }


def quality_report(
    result: Any,
    validation: np.ndarray,
    *,
    summary_strata: Sequence[np.ndarray] | None = None,
    validation_strata: Sequence[np.ndarray] | None = None,
    strata_names: Sequence[str] | None = None,
    validation_labels: np.ndarray | None = None,
    label_name: str | None = None,
) -> dict[str, Any]:
    """The consumer's view of a run: the kernel width, the summary's validation fit and MMD² to ``D_v``, its share of
    each stratum (and each label) beside ``D_v``'s, and a 2-D projection of both.

    Parameters
    ----------
    result : SummaryResult
    validation : ndarray of shape (m, n_features)
        The consumer's validation rows (as given to the run).
    summary_strata, validation_strata : list of 1-D arrays, optional
        The strata of the summary's rows (the rows bought carry them) and of the validation rows.
    strata_names : list of str, optional
        The attributes' names, for the report.
    validation_labels : 1-D array, optional
        The validation rows' labels; with the summary's labels (``result.labels``) the report counts labels too.
    label_name : str, optional
        The labels' column name, for the report.

    Returns
    -------
    dict
        ``gamma``, ``size``, ``validation_fit`` (:func:`dpsumm.metrics.validation_fit`: below 1 the summary fits
        ``D_v`` better than as many rows drawn from ``D_v``'s distribution), ``validation_mmd2`` (biased MMD² to
        ``D_v``), ``strata`` and ``labels`` (``{"attributes": [...], "shares": shares(...)}`` or None) and
        ``projection`` (None for a summary of hashes only).
    """
    from .kernels import mmd2
    from .metrics import validation_fit
    from .results import SummaryResult

    instance_of(result, SummaryResult, "result", "a dpsumm.SummaryResult")
    if result.points is not None and len(result.points):
        validation = float_matrix(validation, "validation", n_features=result.points.shape[1])
    gamma = float(result.hasher.gamma)
    points = result.points
    fit = result.extra.get("validation_fit")
    mmd = None
    if points is not None and len(points):
        if fit is None and validation.shape[0] >= 2:
            fit = validation_fit(points, validation, gamma)
        mmd = mmd2(points, validation, gamma)
    report: dict[str, Any] = {
        "gamma": gamma,
        "size": len(result),
        "validation_fit": None if fit is None else float(fit),
        "validation_mmd2": None if mmd is None else float(mmd),
        "strata": None,
        "labels": None,
        "projection": None if points is None or not len(points) else projection(points, validation),
    }
    if summary_strata is not None and validation_strata is not None:
        names = list(strata_names) if strata_names is not None else [str(j) for j in range(len(validation_strata))]
        report["strata"] = {"attributes": names, "shares": shares(list(summary_strata), list(validation_strata))}
    if validation_labels is not None and result.labels is not None:
        report["labels"] = {
            "attribute": label_name or "label",
            "shares": shares(np.asarray(result.labels), np.asarray(validation_labels)),
        }
    return report


def quality_lines(quality: dict[str, Any]) -> list[str]:
    """The report in plain lines: the fit, then one line per stratum (and label) with both shares."""
    lines = []
    fit = quality.get("validation_fit")
    if fit is not None:
        verdict = "closer to D_v than" if fit < 1 else "NO closer to D_v than"
        lines.append(
            f"validation fit {fit:.3f} (the summary is {verdict} {quality['size']} rows drawn at random from D_v's "
            f"distribution; below 1 is better), MMD² to D_v {quality['validation_mmd2']:.3g} at gamma {quality['gamma']:.4g}"
        )
    for key, title in (("strata", "stratum"), ("labels", "label")):
        part = quality.get(key)
        if not part:
            continue
        what = ",".join(part.get("attributes", [])) or part.get("attribute") or title
        lines.append(f"share of each {title} ({what}): summary vs D_v")
        for row in part["shares"]:
            lines.append(f"  {row['value']:<16} {100 * row['summary']:5.1f} %  vs {100 * row['validation']:5.1f} %")
    return lines
