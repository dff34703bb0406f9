"""`dpsumm demo` (dpsumm.cli.demo): runs, prints its table, writes outside the working tree by default."""

from __future__ import annotations

import json

from dpsumm.cli import main


def test_cli_demo(tmp_path, capsys, recwarn):
    assert (
        main(["demo", "--sizes", "10", "20", "--repeats", "1", "--out", str(tmp_path), "--json", "--no-progress"]) == 0
    )
    rows = json.loads(capsys.readouterr().out)
    assert {r["method"] for r in rows} == {"nominations", "central-greedy", "paper", "uniform"}
    nom = [r for r in rows if r["method"] == "nominations"]
    # the default a user gets: the direction purchase (owners' one release in two parts, certified at <= 1)
    assert all(r["purchase"] == "direction" and 0 < r["epsilon_owners"] <= 1.0 for r in nom)
    # its cells are keyed on the split's public seed rows, not on rows drawn in the box (which would warn)
    assert not [w for w in recwarn if "seed_set" in str(w.message)]
    assert all(r["delta_validation"] == 1e-6 and 0.9 < r["epsilon_validation"] <= 1.0 for r in nom)
    # the population view: MMD² to the consumer's held-out rows, for every method
    assert all(isinstance(r["mmd2_population"], float) for r in rows)
    assert (tmp_path / "mmd_increase.png").exists()


def test_cli_demo_text_output_dir_and_rows(tmp_path, monkeypatch, capsys):
    """The demo writes outside the working tree by default (the cache directory, printed), lists today's method
    first, says what each row is and that it is seeded by default; `paper`, not the old name `private`."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    assert main(["demo", "--sizes", "10", "--repeats", "1", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert (tmp_path / "cache" / "dpsumm" / "demo" / "results.json").exists()
    assert not (tmp_path / "dpsumm-demo").exists()
    assert str(tmp_path / "cache" / "dpsumm" / "demo") in out
    table = out[out.index("size ") : out.index("rows:")]
    methods = [line.split()[1] for line in table.splitlines()[2:] if line.strip()]
    assert methods[0] == "nominations" and "MMD² (D_v) vs central greedy (%)" in table
    assert "MMD² (held-out rows)" in table
    assert "seeded, by default (--random-state 0)" in out and "private," not in out
    assert "  uniform: NOT private baseline" in out
