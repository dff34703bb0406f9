"""dpsumm.cli._common: the command line's shared pieces (the parser that raises, the output-directory check,
the seeded-run note, the method legend, JSON-ready values)."""

from __future__ import annotations

import math
import os

import pytest

from dpsumm.cli import _common
from dpsumm.errors import InvalidParameterError


def test_the_parser_raises_a_usage_error_instead_of_exiting():
    parser = _common.Parser(prog="x")
    parser.add_argument("--n", type=int)
    with pytest.raises(_common.UsageError, match="invalid int value"):
        parser.parse_args(["--n", "many"])


def test_writable_dir_proves_the_directory_and_leaves_no_trace(tmp_path):
    target = tmp_path / "a" / "b"
    assert _common.writable_dir(str(target), "--out") == target
    assert not (tmp_path / "a").exists()  # made for the check, removed again
    existing = tmp_path / "here"
    existing.mkdir()
    assert _common.writable_dir(str(existing), "--out") == existing and existing.is_dir()
    assert list(existing.iterdir()) == []


def test_writable_dir_names_the_option(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(InvalidParameterError, match="exists and is not a directory") as info:
        _common.writable_dir(str(f), "--out")
    assert info.value.argument == "out"
    if os.geteuid() != 0:  # root may write anywhere
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o500)
        try:
            with pytest.raises(InvalidParameterError, match="cannot write") as info:
                _common.writable_dir(str(ro / "sub"), "--out-dir")
            assert info.value.argument == "out-dir"
        finally:
            ro.chmod(0o700)


def test_header_arg_and_the_default_output_dir(monkeypatch, tmp_path):
    assert [_common.header_arg(x) for x in ("auto", "yes", "no")] == ["auto", True, False]
    with pytest.raises(KeyError):
        _common.header_arg("maybe")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert _common.default_output_dir("demo") == tmp_path / "dpsumm" / "demo"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert _common.default_output_dir("demo").parts[-3:] == (".cache", "dpsumm", "demo")


def test_the_seeded_note_says_not_private_and_how_the_seed_was_chosen():
    by_default = _common.seeded_note(0, 0)
    chosen = _common.seeded_note(5, 0)
    assert by_default.startswith("NOT private") and "by default (--random-state 0)" in by_default
    assert "--random-state 5" in chosen and "by default" not in chosen


def test_the_method_legend_lists_each_method_once_with_its_description():
    legend = _common.method_legend(["uniform", "nominations", "uniform"]).splitlines()
    assert len(legend) == 2
    assert {line.split(":")[0].strip() for line in legend} == {"uniform", "nominations"}
    for line in legend:
        name = line.split(":")[0].strip()
        assert line.endswith(_common.METHOD_ROWS[name])
    assert set(_common.METHOD_ROWS) >= {"nominations", "paper", "pfds", "uniform"}


def test_jsonable_turns_infinities_into_null_at_any_depth():
    assert _common.jsonable({"a": math.inf, "b": [1.0, -math.inf, (2, math.inf)], "c": "x"}) == {
        "a": None,
        "b": [1.0, None, [2, None]],
        "c": "x",
    }
    assert math.isnan(_common.jsonable(math.nan))  # NaN is not an infinity: kept as is
