"""Every marked number in README.md and every page of docs/ equals its results file (tests/docnumbers.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docnumbers import ROOT, NumbersError, documents, evaluate, format_like, matches, rewrite, scan, walk


@pytest.mark.parametrize("doc", documents(), ids=lambda p: str(p.relative_to(ROOT)))
def test_marked_numbers_match_their_files(doc: Path) -> None:
    bad = [rec.describe() for rec in scan(doc) if not rec.ok]
    assert not bad, "numbers that differ from their results file:\n" + "\n".join(bad)


def test_the_documents_mark_their_numbers() -> None:
    """The check is not vacuous: the README's measured figures are marked, and so are the site's (the README's
    former sections moved there with their markers; the generated results pages carry theirs)."""
    assert len(scan(ROOT / "README.md")) >= 30
    assert sum(len(scan(doc)) for doc in documents() if doc.name != "README.md") >= 3000
    assert len(scan(ROOT / "docs" / "results" / "testbeds.md")) >= 500


def test_checker_reads_paths_expressions_and_precision(tmp_path: Path) -> None:
    data = {
        "runs": [{"method": "a", "t": 1.672, "phases": {"x y": 0.5}}, {"method": "b", "t": 0.48}],
        "big": 4045.2,
        "tiny": 2.0977e-5,
    }
    (tmp_path / "r.json").write_text(json.dumps(data))
    assert walk(data, "runs[method=b].t") == 0.48 and walk(data, 'runs[0].phases["x y"]') == 0.5
    assert evaluate("100 * (r:runs[1].t / r:runs[0].t - 1)", {"r": data}) == pytest.approx(-71.29, abs=0.01)
    assert evaluate("mean(r:l) * 2", {"r": {"l": [1, 2]}}) == 3.0
    recs = [
        {"method": "a", "size": 5, "v": 1.0},
        {"method": "a", "size": 5, "v": 3.0},
        {"method": "a", "size": 6, "v": 9.0},
    ]
    assert evaluate("mean(r:[*method=a,size=5].v)", {"r": recs}) == 2.0
    assert evaluate("median(r:[*method=a].v)", {"r": recs}) == 3.0
    assert evaluate("median(r:[*method=a,size=5].v)", {"r": recs}) == 2.0
    assert evaluate("r:[method=a,size=6].v", {"r": recs}) == 9.0
    assert matches("1.67", 1.672) and not matches("1.68", 1.672) and matches("1.7", 1.672)
    assert matches("+4,045", 4045.2) and matches("−71", -71.29) and not matches("71", -71.29)
    assert matches("2.10e-5", 2.0977e-5) and not matches("2.2e-5", 2.0977e-5)
    doc = tmp_path / "doc.md"
    doc.write_text(
        "<!-- numbers: r = r.json -->\n"
        '| a | **1.67**<!--= r:runs[method=a].t --> s | 0.5<!--= r:runs[0].phases["x y"] --> |\n'
        "b took 0.50 s<!--= r:runs[method=b].t -->, c 3<!--= r:nope -->, d 1<!--= q:t -->.\n"
    )
    recs = scan(doc, root=tmp_path)
    assert [r.ok for r in recs] == [True, True, False, False, False]
    assert "0.48" in recs[2].describe() and "nothing at" in str(recs[3].error) and "not declared" in str(recs[4].error)
    with pytest.raises(NumbersError):
        evaluate("__import__('os')", {"r": data})


def test_rewrite_writes_each_stale_number_as_its_file_gives_it(tmp_path: Path) -> None:
    """``--rewrite`` replaces a number that no longer matches its file by the file's value, at the written
    precision, sign style and digit grouping; a matching number, an unmarked one and code spans stay as written."""
    (tmp_path / "r.json").write_text(json.dumps({"a": -49.6, "b": 2045.7, "c": 0.9934, "d": 3.2, "e": 46.2}))
    doc = tmp_path / "d.md"
    doc.write_text(
        "<!-- numbers: r = r.json -->\n"
        "x −53<!--= r:a --> % and +1,839<!--= r:b --> and 0.998<!--= r:c --> unmarked 7\n"
        "| -15<!--= r:d --> | +46<!--= r:e --> | `9<!--= r:d -->` |\n"
    )
    assert rewrite(doc, root=tmp_path) == 4
    assert doc.read_text() == (
        "<!-- numbers: r = r.json -->\n"
        "x −50<!--= r:a --> % and +2,046<!--= r:b --> and 0.993<!--= r:c --> unmarked 7\n"
        "| +3<!--= r:d --> | +46<!--= r:e --> | `9<!--= r:d -->` |\n"
    )
    assert all(rec.ok for rec in scan(doc, root=tmp_path))
    assert rewrite(doc, root=tmp_path) == 0
    assert format_like("2.10e-5", 3.456e-5) == "3.46e-5" and format_like("+0", -0.2) == "+0"


def test_a_table_block_checks_each_cell_it_names(tmp_path: Path) -> None:
    """Numbers tied from a block below a table: row and column counted from 1 below the header, the NTH number of
    the cell; a wrong number, a missing cell or a missing number fails."""
    (tmp_path / "r.json").write_text(json.dumps({"a": -2.04, "b": [1.0, 3.0], "c": 0.998}))
    doc = tmp_path / "doc.md"
    doc.write_text(
        "<!-- numbers: r = r.json -->\n"
        "| bed | value | eps |\n|---|---|---|\n"
        "| one | −2 % / +7 % | ε = 0.998 at δ = 1e-6 |\n"
        "| two | 2 | `5` 3 |\n"
        "<!-- numbers in the table above:\n"
        "1.2 = r:a\n1.2.2 = 7\n1.3 = r:c\n2.2 = mean(r:b)\n2.3 = 3\n1.2.2 = 8\n3.1 = 1\n1.1 = 1\n"
        "-->\n"
        "after 4<!--= 4 -->\n"
    )
    recs = scan(doc, root=tmp_path)
    assert [r.ok for r in recs] == [True, True, True, True, True, False, False, False, True]
    assert [r.written for r in recs[:5]] == ["−2", "+7", "0.998", "2", "3"]  # a code span holds no number
    assert "no cell 3.1" in str(recs[6].error) and "has no number 1" in str(recs[7].error)
