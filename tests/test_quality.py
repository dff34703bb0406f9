"""dpsumm.quality: the consumer's view of a run (fit, shares beside D_v's, projection)."""

from __future__ import annotations

import numpy as np
import pytest

import dpsumm
from dpsumm.errors import InvalidParameterError
from dpsumm.quality import MAX_PROJECTED, projection, quality_lines, quality_report, shares
from refusal import refused


def test_shares_count_each_value_and_join_attributes():
    out = shares([np.array(["a", "a", "b"]), np.array([1, 1, 2])], [np.array(["a", "b"]), np.array([1, 2])])
    assert out == [
        {"value": "a/1", "summary": 2 / 3, "validation": 0.5},
        {"value": "b/2", "summary": 1 / 3, "validation": 0.5},
    ]
    only_v = shares(np.array([], dtype=str), np.array(["x", "x", "y"]))
    assert only_v == [
        {"value": "x", "summary": 0.0, "validation": 2 / 3},
        {"value": "y", "summary": 0.0, "validation": 1 / 3},
    ]
    with pytest.raises(InvalidParameterError, match="validation"):
        shares(np.array(["a"]), np.array([], dtype=str))


def test_projection_keeps_at_most_the_cap_and_centres_on_validation():
    rng = np.random.default_rng(0)
    val = rng.normal(size=(3 * MAX_PROJECTED, 4)) * [5, 1, 0.1, 0.1]
    proj = projection(val[:10], val)
    assert len(proj["validation"]) <= MAX_PROJECTED and len(proj["summary"]) == 10
    v = np.asarray(proj["validation"])
    assert abs(v[:, 0].mean()) < 0.5 and v[:, 0].std() > 3 * v[:, 1].std()  # the first axis is the widest


def test_quality_report_of_a_run_matches_the_metrics():
    rng = np.random.default_rng(1)
    owners = [dpsumm.Owner(rng.random((80, 2)), labels=rng.integers(0, 2, 80)) for _ in range(3)]
    val, yv = rng.random((40, 2)), rng.integers(0, 2, 40)
    res = dpsumm.summarize(owners, val, 12, progress=False, random_state=0)
    strata_s, strata_v = [np.array(["e"] * 6 + ["w"] * 6)], [np.array(["e"] * 30 + ["w"] * 10)]
    q = quality_report(
        res, val, summary_strata=strata_s, validation_strata=strata_v, strata_names=["region"], validation_labels=yv
    )
    assert q["gamma"] == res.gamma and q["size"] == 12
    assert q["validation_fit"] == pytest.approx(dpsumm.metrics.validation_fit(res.points, val, res.gamma))
    assert q["validation_mmd2"] == pytest.approx(dpsumm.kernels.mmd2(res.points, val, res.gamma))
    assert q["strata"]["shares"][0] == {"value": "e", "summary": 0.5, "validation": 0.75}
    assert {r["value"] for r in q["labels"]["shares"]} <= {"0", "1"}
    lines = quality_lines(q)
    assert lines[0].startswith("validation fit") and "share of each stratum (region)" in lines[1]
    assert any("e" in line and "50.0 %" in line and "75.0 %" in line for line in lines)


def _run():
    rng = np.random.default_rng(1)
    owners = [dpsumm.Owner(rng.random((30, 2))) for _ in range(2)]
    val = rng.random((20, 2))
    return dpsumm.summarize(owners, val, 4, progress=False, random_state=0), val


@pytest.mark.parametrize(
    "call, argument",
    [
        (lambda res, val: shares(None, np.array(["a"])), "summary"),
        (lambda res, val: shares(np.array(["a"]), 3), "validation"),
        (lambda res, val: shares([np.array(["a", "b"]), np.array([1])], np.array(["a"])), "summary"),
        (lambda res, val: projection(val[:2], val[:, :1]), "summary"),
        (lambda res, val: projection(val[:2], np.full((3, 2), np.nan)), "validation"),
        (lambda res, val: projection(val[:2].astype(complex), val), "summary"),
        (lambda res, val: projection(val[:2], val * 1e300), "validation"),
        (lambda res, val: quality_report({"points": val}, val), "result"),
        (lambda res, val: quality_report(res, val[:, :1]), "validation"),
    ],
    ids=[
        "summary-none",
        "validation-int",
        "ragged-columns",
        "widths",
        "nan",
        "complex",
        "beyond-float32",
        "result-dict",
        "validation-width",
    ],
)
def test_bad_input_is_refused_naming_the_argument(call, argument):
    """Each used to raise a TypeError, IndexError, AttributeError, numpy's AxisError or LinAlgError, a ComplexWarning
    or a numpy RuntimeWarning."""
    res, val = _run()
    refused(lambda: call(res, val), argument)
