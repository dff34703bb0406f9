"""The dpsumm command line: demo and summarize."""

from __future__ import annotations

import json

import numpy as np

from dpsumm.cli import main


def test_summarize_writes_summary_provenance_and_report(tmp_path, capsys):
    rng = np.random.default_rng(0)
    paths = []
    for k in range(3):
        p = tmp_path / f"owner{k}.npy"
        np.save(p, rng.normal(size=(40, 4)) + k)
        paths.append(str(p))
    np.savetxt(tmp_path / "val.csv", rng.normal(size=(20, 4)), delimiter=",")
    out = tmp_path / "out"
    code = main(["summarize", "--owners", *paths, "--validation", str(tmp_path / "val.csv"), "--size", "6",
                 "--out", str(out), "--method", "paper-greedy", "--random-state", "1", "--no-progress"])
    assert code == 0
    summary = np.load(out / "summary.npy")
    prov = np.loadtxt(out / "provenance.csv", delimiter=",", skiprows=1, dtype=int)
    assert summary.shape == (6, 4) and prov.shape == (6, 2)
    for row, (k, i) in zip(summary, prov):
        np.testing.assert_array_equal(row, np.load(paths[k])[i])
    report = json.loads((out / "report.json").read_text())
    assert report["accessed"]["total"] == 6


def test_user_error_is_one_line_and_exit_2(tmp_path, capsys):
    code = main(["summarize", "--owners", str(tmp_path / "missing.npy"), "--validation", "x.npy", "--size", "3",
                 "--out", str(tmp_path)])
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("dpsumm: error:")


# ---------------------------------------------------------------------------------------------- issue 14


import argparse
import shlex

import pytest

import dpsumm
from dpsumm.cli import build_parser


def _files(tmp_path, n_owners=3, rows=30, features=4, label_column=False, fmt="npy"):
    """Owner files (rows in [0, 1], labels = owner index), a validation file and a seed-set file."""
    rng = np.random.default_rng(0)
    owners, labels, paths, label_paths = [], [], [], []
    for k in range(n_owners):
        X = rng.uniform(size=(rows, features))
        y = np.full(rows, k)
        owners.append(X)
        labels.append(y)
        p = tmp_path / f"owner{k}.{fmt}"
        table = np.column_stack([X, y]) if label_column else X
        if fmt == "npy":
            np.save(p, table)
        elif fmt == "csv":
            np.savetxt(p, table, delimiter=",")
        else:
            import pyarrow as pa
            import pyarrow.parquet as pq

            pq.write_table(pa.table({f"c{j}": table[:, j] for j in range(table.shape[1])}), p)
        paths.append(str(p))
        lp = tmp_path / f"labels{k}.csv"
        np.savetxt(lp, y, delimiter=",", fmt="%d")
        label_paths.append(str(lp))
    val = rng.uniform(size=(20, features))
    np.save(tmp_path / "val.npy", val)
    seed = rng.uniform(size=(15, features))
    np.save(tmp_path / "seed.npy", seed)
    return owners, labels, paths, label_paths, val, seed


def _run(args, capsys):
    code = main(args)
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def test_summarize_budget_run_prints_and_writes_the_whole_ledger(tmp_path, capsys):
    owners, labels, paths, label_paths, val, seed = _files(tmp_path)
    out = tmp_path / "out"
    code, text, err = _run(["summarize", "--owners", *paths, "--labels", *label_paths, "--validation",
                            str(tmp_path / "val.npy"), "--size", "5", "--out", str(out), "--method", "paper",
                            "--budget", "4", "--delta", "1e-4", "--validation-budget", "4", "--validation-delta", "1e-2",
                            "--seed-set", str(tmp_path / "seed.npy"), "--gamma", "median", "--dim", "16",
                            "--random-state", "1", "--no-progress"], capsys)
    assert code == 0, err
    # the same run through the API
    budget = dpsumm.Budget(4.0, 1e-4, 4.0, 1e-2)
    ref = dpsumm.summarize([dpsumm.Owner(o, labels=y, name=f'owner-{k}') for k, (o, y) in enumerate(zip(owners, labels))], val, 5, method=dpsumm.PaperProtocol(dim=16), privacy=budget, seed_set=seed, gamma='median', random_state=1, progress=False)
    np.testing.assert_array_equal(np.load(out / "summary.npy"), ref.points)
    np.testing.assert_array_equal(np.load(out / "labels.npy"), ref.labels)
    report = json.loads((out / "report.json").read_text())
    assert report["privacy"] == json.loads(json.dumps(ref.privacy.to_dict(1e-4, 1e-2)))
    assert len(report["privacy"]["entries"]) == len(ref.privacy.entries) > 0
    assert report["budget"] == {"epsilon": 4.0, "delta": 1e-4, "validation_epsilon": 4.0, "validation_delta": 1e-2}
    assert report["seeded"] is True and report["private"] is False and report["certified"] is False
    assert report["gamma"] == pytest.approx(dpsumm.median_gamma(seed))
    # printed: the table at the run's deltas, the notes, what each party saw, certified or not
    assert ref.privacy.table(1e-4, 1e-2) in text
    assert "one row of D_v" in text  # a neighbour relation, from the ledger's notes
    assert "validation saw:" in text and "owners saw:" in text
    assert "seeded run (--random-state): reproducible and NOT private." in text and "certified: NO" in text
    eps_v = ref.privacy.epsilon("validation", 1e-2)
    assert f"validation set: epsilon {eps_v:.4g} at delta 0.01" in text and eps_v <= 4.0 * 1.01


def test_summarize_json_label_column_seed_count_and_csv(tmp_path, capsys):
    owners, labels, paths, _, val, _ = _files(tmp_path, label_column=True, fmt="csv")
    out = tmp_path / "out"
    code, text, err = _run(["summarize", "--owners", *paths, "--label-column", "-1", "--validation",
                            str(tmp_path / "val.npy"), "--size", "6", "--out", str(out), "--method", "paper-greedy",
                            "--seed-set", "7", "--gamma", "0.5", "--dim", "16", "--random-state", "2", "--no-progress",
                            "--json"], capsys)
    assert code == 0, err
    report = json.loads(text)
    assert report == json.loads((out / "report.json").read_text())
    assert report["privacy"] is None and report["private"] is False and report["gamma"] == 0.5
    prov = np.loadtxt(out / "provenance.csv", delimiter=",", skiprows=1, dtype=int)
    got_labels = np.load(out / "labels.npy")
    np.testing.assert_array_equal(got_labels, prov[:, 0])  # label = owner index by construction
    for row, (k, i) in zip(np.load(out / "summary.npy"), prov):
        np.testing.assert_allclose(row, owners[k][i])  # the label column is not a feature
    ref = dpsumm.summarize(owners, val, 6, method=dpsumm.PaperGreedy(dim=16), seed_set=7, gamma=0.5, random_state=2, progress=False)
    np.testing.assert_array_equal(prov[:, 1], ref.index)


def test_summarize_reads_parquet(tmp_path, capsys):
    owners, _, paths, _, val, _ = _files(tmp_path, fmt="parquet")
    out = tmp_path / "out"
    code, _, err = _run(["summarize", "--owners", *paths, "--validation", str(tmp_path / "val.npy"), "--size", "4",
                         "--out", str(out), "--method", "uniform", "--random-state", "0", "--gamma", "1",
                         "--no-progress"], capsys)
    assert code == 0, err
    prov = np.loadtxt(out / "provenance.csv", delimiter=",", skiprows=1, dtype=int)
    for row, (k, i) in zip(np.load(out / "summary.npy"), prov):
        np.testing.assert_array_equal(row, owners[k][i])


@pytest.mark.parametrize("extra, message", [
    (["--method", "paper-greedy", "--budget", "1", "--validation-budget", "1"], "is not private"),
    (["--method", "paper", "--budget", "1"], "--budget needs --validation-budget"),
    (["--method", "paper", "--validation-budget", "1"], "needs --budget"),
    (["--method", "paper", "--purchase", "winners"], "--purchase does not apply to method 'paper'"),
    (["--method", "uniform", "--nominees", "3"], "--nominees does not apply to method 'uniform'"),
    (["--method", "paper", "--gamma", "wide"], "--gamma must be a number or 'median'"),
    (["--method", "paper", "--gamma", "-1"], "--gamma must be a finite number > 0"),
    (["--method", "paper", "--labels", "a.csv"], "--labels needs one file per owner"),
    (["--method", "paper", "--label-column", "9"], "--label-column 9 is out of range"),
    (["--method", "bogus"], "invalid choice"),
    (["--method", "paper", "--size", "0"], "size"),
    (["--method", "paper", "--budget", "-1", "--validation-budget", "1"], "--budget"),
    (["--method", "paper", "--seed-set", "missing.npy"], "file not found"),
    # purchase="labels": the label set and the validation labels, refused naming the flag before any file is read
    (["--purchase", "labels", "--label-set", "0,,1", "--validation-labels", "y.npy"], "--label-set has an empty label"),
    (["--purchase", "labels", "--label-set", "[0, 1", "--validation-labels", "y.npy"], "--label-set is not a valid JSON"),
    (["--purchase", "labels", "--label-set", "0,1,0", "--validation-labels", "y.npy"], "--label-set repeats a label"),
    (["--purchase", "labels", "--label-set", "0,cat", "--validation-labels", "y.npy"], "--label-set mixes strings"),
    (["--purchase", "labels", "--validation-labels", "y.npy"], "ByLabel needs --label-set"),
    (["--purchase", "winners", "--label-set", "0,1"], "--label-set does not apply to purchase 'winners'"),
    (["--purchase", "labels", "--label-set", "0,1", "--purchase-factor", "0.5", "--validation-labels", "y.npy"],
     "--purchase-factor must be in [1, "),
    (["--purchase", "quotas"], "--purchase must be one of 'nominees', 'labels', 'winners', got 'quotas'"),  # removed
    (["--tilt-rounds", "2"], "unrecognized arguments: --tilt-rounds"),  # the quota purchase's flag: removed
    (["--method", "paper", "--label-set", "0,1"], "--label-set does not apply to method 'paper'"),
    (["--method", "paper", "--validation-labels", "y.npy"], "--validation-labels applies only to --method nominations"),
    (["--purchase", "winners", "--validation-labels", "y.npy"], "not to --method nominations --purchase winners"),
    (["--purchase", "labels", "--label-set", "0,1"], "give --validation-labels"),
    (["--purchase", "labels", "--label-set", "0,1", "--validation-labels", "y.npy"], "give the owners' labels"),
])
def test_summarize_user_errors_are_one_line_exit_2(tmp_path, capsys, extra, message):
    _, _, paths, _, _, _ = _files(tmp_path, n_owners=2)
    args = ["summarize", "--owners", *paths, "--validation", str(tmp_path / "val.npy"), "--size", "3", "--out",
            str(tmp_path / "out"), "--no-progress", *extra]
    code, _, err = _run(args, capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("dpsumm: error:") and message in lines[0], err
    assert not (tmp_path / "out").exists()  # refused before any work


def test_version_and_defaults(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out.strip() == f"dpsumm {dpsumm.__version__}"
    args = build_parser().parse_args(["summarize", "--owners", "a", "--validation", "v", "--size", "1", "--out", "o"])
    assert args.method == "nominations" and args.gamma == "median"


def test_every_option_has_help():
    parser = build_parser()
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    missing = [f"{name} {opt.option_strings}" for name, p in subs.choices.items() for opt in p._actions
               if opt.option_strings and not opt.help]
    assert missing == []
    assert all(a.help for a in parser._actions if a.option_strings)


def test_flower_commands_carry_the_run_options(tmp_path, capsys):
    np.save(tmp_path / "v.npy", np.zeros((4, 3)))
    code, out, err = _run(["flower", "--owner", "a=/data/a.npy", "--owner", "b=/data/b.npy", "--labels", "a=/data/ya.npy",
                           "--labels", "b=/data/yb.npy", "--consumer", str(tmp_path / "v.npy"), "--size", "5",
                           "--method", "paper", "--budget", "2", "--delta", "1e-5", "--validation-budget", "1",
                           "--gamma", "median", "--seed-set", "40", "--dim", "64", "--insecure"], capsys)
    assert code == 0, err
    assert 'labels="/data/ya.npy"' in out and 'labels="/data/yb.npy"' in out
    for item in ('method="paper"', 'gamma="median"', "budget-epsilon=2.0", "budget-delta=1e-05",
                 "budget-validation-epsilon=1.0", "budget-validation-delta=1e-06", "seed-set=40", "dim=64"):
        assert item in out, item


@pytest.mark.parametrize("extra, message", [
    (["--labels", "a=/y.npy"], "--labels must name every owner"),
    (["--method", "paper", "--validation-budget", "1"], "needs --budget"),
    (["--method", "paper", "--out", "x"], "--out applies to --run only"),
    (["--method", "paper-greedy", "--budget", "1", "--validation-budget", "1"], "is not private"),
    (["--method", "paper", "--gamma", "0"], "--gamma must be a finite number > 0"),
    (["--method", "paper", "--validation-labels", "/yv.npy"], "--validation-labels applies only"),
    (["--purchase", "labels", "--label-set", "0,1", "--validation-labels", "/yv.npy"], "give the owners' labels"),
    (["--purchase", "labels", "--label-set", "[0, 1", "--validation-labels", "/yv.npy", "--labels", "a=/ya.npy",
      "--labels", "b=/yb.npy"], "--label-set is not a valid JSON list"),
])
def test_flower_user_errors_are_one_line_exit_2(tmp_path, capsys, extra, message):
    np.save(tmp_path / "v.npy", np.zeros((4, 3)))
    code, _, err = _run(["flower", "--owner", "a=/a.npy", "--owner", "b=/b.npy", "--consumer",
                         str(tmp_path / "v.npy"), "--size", "2", *extra], capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and message in lines[0], err


def _dpsumm_env():
    """The environment for a `python -m dpsumm` subprocess that imports the same dpsumm as this test."""
    import os
    from pathlib import Path

    import dpsumm

    env = dict(os.environ)
    env["PYTHONPATH"] = str(Path(dpsumm.__file__).resolve().parents[1]) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def test_closed_pipe_is_not_a_traceback():
    """`dpsumm account --json | head -1`: the reader closes the pipe early; no traceback, SIGPIPE's status."""
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-m", "dpsumm", "account", "--schedule", "paper", "--size", "500",
                             "--owners", "5", "--delta", "1e-4", "--validation-delta", "0.01", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_dpsumm_env())
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # what `head` does once it has its lines; here before any write, so every write fails
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141
    assert "Traceback" not in err and "BrokenPipeError" not in err, err


def test_degenerate_kernel_warning_is_printed_once():
    """A DegenerateKernelWarning reaches stderr once (the warning), not twice (warning and log record)."""
    import subprocess
    import sys

    code = ("import numpy as np, dpsumm\n"
            "X = np.random.default_rng(0).uniform(0, 16, size=(50, 8))\n"
            "dpsumm.preprocessing.check_kernel(X, 0.1)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_dpsumm_env(), timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("is degenerate") == 1, done.stderr


def test_validation_only_budget_runs_nominations_and_is_spent(tmp_path, capsys):
    _, _, paths, _, _, _ = _files(tmp_path, n_owners=3, rows=40)
    out = tmp_path / "out"
    code, text, err = _run(["summarize", "--owners", *paths, "--validation", str(tmp_path / "val.npy"), "--size", "5",
                            "--out", str(out), "--validation-budget", "0.7", "--validation-delta", "1e-7",
                            "--no-progress", "--json"], capsys)
    assert code == 0, err
    report = json.loads((out / "report.json").read_text())
    assert report["budget"]["validation_epsilon"] == 0.7 and report["budget"]["epsilon"] is None
    assert report["method"] == "nominations"


@pytest.mark.parametrize("extra, message", [
    (["--delta", "2"], "--delta"),
    (["--validation-budget", "1", "--validation-delta", "0"], "--validation-delta"),
    (["--nominees", "1"], "--nominees"),  # 1 x 2 owners < size 5: the plan is checked before any file is read
])
def test_bad_budget_and_plan_flags_fail_before_any_file_is_read(tmp_path, capsys, extra, message):
    code, _, err = _run(["summarize", "--owners", "missing0.npy", "missing1.npy", "--validation", "missing.npy",
                         "--size", "5", "--out", str(tmp_path / "out"), "--no-progress", *extra], capsys)
    assert code == 2 and message in err and "missing" not in err, err


def test_index_flag_reads_a_pandas_index_column_as_the_user_says(tmp_path, capsys):
    rng = np.random.default_rng(1)
    paths = []
    for k in range(2):
        X = rng.uniform(size=(30, 3))
        p = tmp_path / f"o{k}.csv"
        np.savetxt(p, np.column_stack([np.arange(30), X]), delimiter=",")  # headerless row numbers first
        paths.append(str(p))
    np.savetxt(tmp_path / "v.csv", np.column_stack([np.arange(20), rng.uniform(size=(20, 3))]), delimiter=",")
    args = ["summarize", "--owners", *paths, "--validation", str(tmp_path / "v.csv"), "--size", "4", "--out",
            str(tmp_path / "out"), "--no-progress", "--method", "uniform"]
    code, _, err = _run(args, capsys)
    assert code == 2 and "--index yes" in err
    code, _, err = _run([*args, "--index", "yes"], capsys)
    assert code == 0, err
    assert np.load(tmp_path / "out" / "summary.npy").shape == (4, 3)


def test_a_budget_is_a_cap_for_a_purchase_without_owners_releases(tmp_path, capsys):
    """`--budget` with the default purchase (Nominees: the owners release nothing): the run is not refused, the
    report keeps the budget given, and the ledger spends nothing of the owners' epsilon."""
    _, _, paths, _, _, _ = _files(tmp_path, n_owners=3, rows=40)
    out = tmp_path / "out"
    code, _, err = _run(["summarize", "--owners", *paths, "--validation", str(tmp_path / "val.npy"), "--size", "5",
                         "--out", str(out), "--budget", "0.9", "--validation-budget", "1", "--no-progress", "--json"],
                        capsys)
    assert code == 0, err
    report = json.loads((out / "report.json").read_text())
    assert report["budget"]["epsilon"] == 0.9 and report["method"] == "nominations"
    ledger = dpsumm.accounting.Ledger.from_dict(report["privacy"])
    assert ledger.events("owners") == [] and ledger.epsilon("owners", 1e-6) == 0.0
    assert 0 < ledger.epsilon("validation", 1e-6) <= 1.0


def _label_shift_files(tmp_path):
    """Three owners holding labels 0, 1, 2 in different mixes (labels in one-column CSV files, features in [0, 1]
    following the label); the consumer wants mostly label 2 and some label 0."""
    rng = np.random.default_rng(4)
    owners, labels, paths, label_paths = [], [], [], []
    for k, mix in enumerate([(0.6, 0.3, 0.1), (0.2, 0.7, 0.1), (0.1, 0.3, 0.6)]):
        y = rng.choice(3, size=40, p=mix)
        X = np.clip(rng.normal(loc=0.2 + 0.3 * y[:, None], scale=0.1, size=(40, 4)), 0, 1)
        owners.append(X)
        labels.append(y)
        paths.append(str(tmp_path / f"owner{k}.npy"))
        np.save(paths[-1], X)
        label_paths.append(str(tmp_path / f"labels{k}.csv"))
        np.savetxt(label_paths[-1], y, delimiter=",", fmt="%d")
    yv = rng.choice([0, 2], size=30, p=[0.3, 0.7])
    val = np.clip(rng.normal(loc=0.2 + 0.3 * yv[:, None], scale=0.1, size=(30, 4)), 0, 1)
    np.save(tmp_path / "val.npy", val)
    np.savetxt(tmp_path / "val-labels.csv", yv, delimiter=",", fmt="%d")
    return owners, labels, paths, label_paths, val, yv


@pytest.mark.parametrize("purchase", [["--purchase", "labels"], [], ["--sale-tilt-share", "0.3"]])
def test_summarize_purchase_labels_equals_the_api(tmp_path, capsys, purchase):
    """`dpsumm summarize --purchase labels --label-set 0,1,2 --validation-labels PATH` (or without --purchase: the
    default with a label set; or with the tilt of the sales, `--sale-tilt-share 0.3`): the same summary, labels and
    ledger as dpsumm.summarize with the same seed; every party certified (apart from the seed), owners' budget
    spent."""
    owners, labels, paths, label_paths, val, yv = _label_shift_files(tmp_path)
    out = tmp_path / "out"
    code, text, err = _run(["summarize", "--owners", *paths, "--labels", *label_paths, "--validation",
                            str(tmp_path / "val.npy"), "--validation-labels", str(tmp_path / "val-labels.csv"),
                            "--size", "6", "--out", str(out), *purchase, "--label-set", "0,1,2",
                            "--budget", "0.8", "--validation-budget", "0.9", "--dim", "32", "--random-state", "2",
                            "--no-progress"], capsys)
    assert code == 0, err
    share = float(purchase[1]) if purchase[:1] == ["--sale-tilt-share"] else 0.0
    method = dpsumm.Nominations(dim=32, purchase=dpsumm.ByLabel(label_set=(0, 1, 2), sale_tilt_share=share))
    ref = dpsumm.summarize([dpsumm.Owner(o, labels=y, name=f"owner-{k}") for k, (o, y) in enumerate(zip(owners, labels))],
                           val, 6, method, validation_labels=yv, privacy=dpsumm.Budget(0.8, 1e-6, 0.9, 1e-6),
                           gamma="median", random_state=2, progress=False)
    np.testing.assert_array_equal(np.load(out / "summary.npy"), ref.points)
    np.testing.assert_array_equal(np.load(out / "labels.npy"), ref.labels)
    assert len(ref) == 6 and ref.accessed.total <= 3 * 6
    report = json.loads((out / "report.json").read_text())
    assert report["privacy"] == json.loads(json.dumps(ref.privacy.to_dict(1e-6, 1e-6)))
    assert report["accessed"]["total"] == ref.accessed.total
    assert ref.privacy.epsilon("owners", 1e-6) <= 0.8 and ref.privacy.epsilon("validation", 1e-6) <= 0.9
    assert len(ref.privacy.events("validation")) == (2 if share else 1)
    assert "label" in text and "certified: NO (seeded run)" in text


WORDS = np.array(["cat", "dog", "bird"])


def test_summarize_string_labels_from_files_equals_the_api(tmp_path, capsys):
    """String labels from every file form the readers take (issue 43): owner 0's labels in a .npy of strings, owner
    1's in a CSV column of words under the header `label`, owner 2's in a headerless CSV of words, the validation
    labels in a CSV of words; `dpsumm summarize --label-set cat,dog,bird` gives the same summary, labels and ledger as
    dpsumm.summarize with the same string labels and seed. The same owners again with the words as a label column of
    their CSV files (`--label-column 2`): the same summary."""
    owners, labels, paths, _, val, yv = _label_shift_files(tmp_path)
    words = [WORDS[y] for y in labels]
    label_paths = [str(tmp_path / "w0.npy"), str(tmp_path / "w1.csv"), str(tmp_path / "w2.csv")]
    np.save(label_paths[0], words[0])
    (tmp_path / "w1.csv").write_text("label\n" + "\n".join(words[1]) + "\n")
    (tmp_path / "w2.csv").write_text("\n".join(f" {w}" for w in words[2]) + "\n")  # spaces around a label are dropped
    (tmp_path / "wv.csv").write_text("class\n" + "\n".join(WORDS[yv]) + "\n")
    flags = ["--validation", str(tmp_path / "val.npy"), "--validation-labels", str(tmp_path / "wv.csv"), "--size", "6",
             "--label-set", "cat,dog,bird", "--budget", "0.8", "--validation-budget", "0.9", "--dim", "32",
             "--random-state", "2", "--no-progress"]
    code, _, err = _run(["summarize", "--owners", *paths, "--labels", *label_paths, "--out", str(tmp_path / "o1"),
                         *flags], capsys)
    assert code == 0, err
    method = dpsumm.Nominations(dim=32, purchase="labels", label_set=tuple(WORDS))
    ref = dpsumm.summarize([dpsumm.Owner(o, labels=w, name=f"owner-{k}") for k, (o, w) in enumerate(zip(owners, words))],
                           val, 6, method, validation_labels=WORDS[yv], privacy=dpsumm.Budget(0.8, 1e-6, 0.9, 1e-6),
                           gamma="median", random_state=2, progress=False)
    np.testing.assert_array_equal(np.load(tmp_path / "o1" / "summary.npy"), ref.points)
    got = np.load(tmp_path / "o1" / "labels.npy")  # never a pickle
    assert got.dtype.kind == "U" and set(got) <= set(WORDS)
    np.testing.assert_array_equal(got, ref.labels)
    report = json.loads((tmp_path / "o1" / "report.json").read_text())
    assert report["privacy"] == json.loads(json.dumps(ref.privacy.to_dict(1e-6, 1e-6)))
    # the words as a column of each owner's CSV file
    table_paths = []
    for k, (o, w) in enumerate(zip(owners, words)):
        table_paths.append(str(tmp_path / f"t{k}.csv"))
        lines = ["f0,f1,species,f2,f3"] + [",".join([*map(repr, map(float, x[:2])), wk, *map(repr, map(float, x[2:]))])
                                          for x, wk in zip(o, w)]
        (tmp_path / f"t{k}.csv").write_text("\n".join(lines) + "\n")
    code, _, err = _run(["summarize", "--owners", *table_paths, "--label-column", "2", "--out",
                         str(tmp_path / "o2"), *flags], capsys)
    assert code == 0, err
    np.testing.assert_array_equal(np.load(tmp_path / "o2" / "summary.npy"), ref.points)
    np.testing.assert_array_equal(np.load(tmp_path / "o2" / "labels.npy"), ref.labels)


def test_summarize_refuses_string_labels_it_cannot_use(tmp_path, capsys):
    """An object array (a pickle) of labels, an empty label, and string labels against a numeric label set: refused
    with a message naming the file or flag, before anything runs."""
    _, _, paths, label_paths, _, yv = _label_shift_files(tmp_path)
    base = ["summarize", "--owners", *paths, "--validation", str(tmp_path / "val.npy"), "--size", "6", "--out",
            str(tmp_path / "o"), "--budget", "0.8", "--validation-budget", "0.9", "--no-progress"]
    np.save(tmp_path / "obj.npy", np.array(list(WORDS[yv]), dtype=object), allow_pickle=True)
    np.save(tmp_path / "hole.npy", np.array(["cat"] * 29 + [""]))
    (tmp_path / "words.csv").write_text("\n".join(WORDS[yv]) + "\n")
    for vlabels, set_, match in [("obj.npy", "cat,dog,bird", "pickled"), ("hole.npy", "cat,dog,bird", "empty label"),
                                 ("words.csv", "0,1,2", "strings")]:
        code, _, err = _run([*base, "--labels", *label_paths, "--validation-labels", str(tmp_path / vlabels),
                             "--label-set", set_], capsys)
        assert code != 0 and match in err, (vlabels, err)
        assert not (tmp_path / "o" / "summary.npy").exists()


def test_the_sale_tilt_share_flag_is_refused_for_a_purchase_without_labels(tmp_path, capsys):
    """`--sale-tilt-share` with `--purchase nominees`: refused before anything runs, naming the flag."""
    owners, labels, paths, label_paths, val, yv = _label_shift_files(tmp_path)
    code, text, err = _run(["summarize", "--owners", *paths, "--validation", str(tmp_path / "val.npy"), "--size", "6",
                            "--out", str(tmp_path / "out"), "--purchase", "nominees", "--sale-tilt-share", "0.3",
                            "--random-state", "2",
                            "--no-progress"], capsys)
    assert code == 2 and "--sale-tilt-share does not apply to purchase 'nominees'" in err and "ByLabel" in err


def test_flower_commands_carry_the_label_purchase(tmp_path, capsys):
    """The printed deployment: the consumer's SuperNode gets its labels, the run config the label set in a form
    `flwr run --run-config` reads back (checked with Flower's own parser when it is installed)."""
    np.save(tmp_path / "v.npy", np.zeros((4, 3)))
    args = ["flower", "--owner", "a=/data/a.npy", "--owner", "b=/data/b.npy", "--labels", "a=/data/ya.npy",
            "--labels", "b=/data/yb.npy", "--consumer", str(tmp_path / "v.npy"), "--validation-labels", "/data/yv.npy",
            "--size", "5", "--purchase", "labels", "--insecure"]
    for label_set, want in (("0, 1,2", "0,1,2"), ('["cat", "dog"]', '["cat","dog"]')):
        code, out, err = _run([*args, "--label-set", label_set], capsys)
        assert code == 0, err
        consumer = next(line for line in out.splitlines() if 'role="consumer"' in line)
        assert 'labels="/data/yv.npy"' in consumer
        run = next(line for line in out.splitlines() if line.startswith("flwr run "))
        overrides = shlex.split(run)[shlex.split(run).index("--run-config") + 1]
        assert 'purchase="labels"' in overrides
        flwr_config = pytest.importorskip("flwr.common.config")
        parsed = flwr_config.parse_config_args([overrides])
        assert parsed["label-set"] == want
        from dpsumm.flower.config import FlowerRunConfig

        assert FlowerRunConfig.from_run_config(parsed).method.purchase.label_set == dpsumm.methods.parse_label_set(label_set)


def test_flower_asks_the_consumers_operator_for_a_release_without_noise(tmp_path, capsys, monkeypatch):
    """Issue 43: `--validation-release exact` is documented as what it is (no noise, NOT private, the consumer's
    node must allow it); the printed deployment tells the consumer's operator what to add, and `--run` (every node
    started here, by their one operator) allows it on the consumer's node only when the flags ask for it."""
    import dpsumm.flower as flower_pkg
    from dpsumm.cli.run_options import METHOD_FLAGS

    assert "NOT private" in METHOD_FLAGS["validation_release"][2]
    assert "allow-exact-release=true" in METHOD_FLAGS["validation_release"][2]
    np.save(tmp_path / "v.npy", np.zeros((4, 3)))
    np.save(tmp_path / "a.npy", np.zeros((4, 3)))
    base = ["flower", "--owner", f"a={tmp_path / 'a.npy'}", "--consumer", str(tmp_path / "v.npy"), "--size", "2",
            "--insecure"]
    for extra, asked in (([], False), (["--validation-release", "exact"], True)):
        code, out, err = _run([*base, *extra], capsys)
        assert code == 0, err
        assert ("allow-exact-release=true" in out) == asked
    seen = {}

    class Federation:
        def __init__(self, workdir, owners, consumer, **kw):
            seen.update(kw)
            raise RuntimeError("stop here")

    monkeypatch.setattr(flower_pkg, "LocalFederation", Federation)
    for extra, asked in (([], False), (["--validation-release", "exact"], True)):
        seen.clear()
        with pytest.raises(RuntimeError, match="stop here"):
            main([*base, *extra, "--run"])
        assert seen["allow_exact_release"] is asked


def test_flower_run_checks_the_validation_labels_before_starting(tmp_path, capsys):
    """`dpsumm flower --run`: a validation labels file that does not match the validation rows is refused before any
    process starts."""
    for name in ("a", "b"):
        np.save(tmp_path / f"{name}.npy", np.zeros((5, 3)))
        np.save(tmp_path / f"y{name}.npy", np.zeros(5, dtype=int))
    np.save(tmp_path / "v.npy", np.zeros((4, 3)))
    np.save(tmp_path / "yv.npy", np.zeros(3, dtype=int))
    code, _, err = _run(["flower", "--owner", f"a={tmp_path / 'a.npy'}", "--owner", f"b={tmp_path / 'b.npy'}",
                         "--labels", f"a={tmp_path / 'ya.npy'}", "--labels", f"b={tmp_path / 'yb.npy'}",
                         "--consumer", str(tmp_path / "v.npy"), "--validation-labels", str(tmp_path / "yv.npy"),
                         "--size", "2", "--purchase", "labels", "--label-set", "0,1", "--insecure", "--run",
                         "--workdir", str(tmp_path / "fed")], capsys)
    assert code == 2 and "--validation-labels must hold one label per validation row (4)" in err, err
    assert not (tmp_path / "fed").exists()
