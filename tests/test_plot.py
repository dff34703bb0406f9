"""dpsumm.plot: reading a run's report and drawing its quality."""

from __future__ import annotations

import json

import pytest

from dpsumm.errors import DataFileError, InvalidParameterError
from dpsumm.plot import draw_quality, read_report
from refusal import refused


def _report(size, purchase, east):
    return {
        "method": "nominations",
        "purchase": purchase,
        "quality": {
            "gamma": 1.0,
            "size": size,
            "validation_fit": 0.1,
            "validation_mmd2": 1.0 / size,
            "strata": {
                "attributes": ["region"],
                "shares": [
                    {"value": "east", "summary": east, "validation": 0.7},
                    {"value": "west", "summary": 1 - east, "validation": 0.3},
                ],
            },
            "labels": None,
            "projection": {"summary": [[0.0, 0.1]], "validation": [[0.1, 0.0], [0.2, 0.3]]},
        },
    }


def test_draw_quality_writes_an_image_of_several_runs(tmp_path):
    pytest.importorskip("matplotlib")
    reports = [_report(100, "strata", 0.7), _report(100, "nominees", 0.4), _report(50, "strata", 0.6)]
    out = draw_quality(reports, tmp_path / "q.png")
    assert out.read_bytes().startswith(b"\x89PNG")
    with pytest.raises(InvalidParameterError, match="at least one run"):
        draw_quality([], tmp_path / "x.png")


def test_read_report_names_what_to_give(tmp_path):
    with pytest.raises(DataFileError, match="--out directory of a dpsumm summarize run"):
        read_report(tmp_path / "missing")
    (tmp_path / "report.json").write_text(json.dumps({"method": "uniform"}))
    with pytest.raises(DataFileError, match="no quality report"):
        read_report(tmp_path)
    (tmp_path / "report.json").write_text(json.dumps(_report(10, None, 0.5)))
    assert read_report(tmp_path)["quality"]["size"] == 10


def _edited(change):
    report = _report(10, "strata", 0.5)
    change(report)
    return report


@pytest.mark.parametrize(
    "call, argument",
    [
        (lambda tmp: draw_quality([_edited(lambda r: r.pop("quality"))], tmp / "q.png"), "reports"),
        (lambda tmp: draw_quality([_edited(lambda r: r["quality"].update(size="10"))], tmp / "q.png"), "reports"),
        (
            lambda tmp: draw_quality(
                [_edited(lambda r: r["quality"]["strata"].update(shares=[{"value": 1}]))], tmp / "q.png"
            ),
            "reports",
        ),
        (
            lambda tmp: draw_quality(
                [_edited(lambda r: r["quality"].update(projection={"summary": [[0]]}))], tmp / "q.png"
            ),
            "reports",
        ),
        (lambda tmp: draw_quality(_report(10, None, 0.5), tmp / "q.png"), "reports"),
        (lambda tmp: draw_quality([_report(10, None, 0.5)], tmp / "q.png", names=["a", "b"]), "names"),
        (lambda tmp: draw_quality([_report(10, None, 0.5)], None), "path"),
        (lambda tmp: read_report(None), "runs"),
    ],
    ids=[
        "no-quality",
        "size-str",
        "share-value-int",
        "projection-pair",
        "reports-dict",
        "names-count",
        "path-none",
        "runs-none",
    ],
)
def test_a_hand_edited_report_or_bad_argument_is_refused_naming_it(call, argument, tmp_path):
    """A report.json edited by hand, or arguments of the wrong type, used to raise a KeyError, TypeError, IndexError or
    ValueError from deep in the drawing."""
    pytest.importorskip("matplotlib")
    refused(lambda: call(tmp_path), argument)
