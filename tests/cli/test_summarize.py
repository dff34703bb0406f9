"""`dpsumm summarize` (dpsumm.cli.summarize): the files it writes, the ledger it prints, the readers it takes
(JSON label columns, CSV, parquet, pandas indexes, string labels), the label purchase equal to the API, and
seeded runs marked not private.
"""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

import dpsumm
from dpsumm.cli import main
from federation_data import label_shift_files, small_files
from refusal import one_line_exit_2


def summarize_args(owners, validation, size, out, *flags):
    """`dpsumm summarize` of the owner files and the validation file, a summary of ``size`` rows written to
    ``out``, no progress bar, then ``flags``."""
    return [
        "summarize",
        "--owners",
        *owners,
        "--validation",
        str(validation),
        "--size",
        str(size),
        "--out",
        str(out),
        "--no-progress",
        *flags,
    ]


def report_of(out):
    """The report.json a run wrote to ``out``."""
    return json.loads((out / "report.json").read_text())


def provenance_of(out):
    """The (owner, index) rows of the provenance.csv a run wrote to ``out``."""
    return np.loadtxt(out / "provenance.csv", delimiter=",", skiprows=1, dtype=int)


def test_summarize_writes_summary_provenance_and_report(tmp_path, capsys):
    rng = np.random.default_rng(0)
    paths = []
    for k in range(3):
        p = tmp_path / f"owner{k}.npy"
        np.save(p, rng.normal(size=(40, 4)) + k)
        paths.append(str(p))
    np.savetxt(tmp_path / "val.csv", rng.normal(size=(20, 4)), delimiter=",")
    out = tmp_path / "out"
    code = main(summarize_args(paths, tmp_path / "val.csv", 6, out, "--method", "paper-greedy", "--random-state", "1"))
    assert code == 0
    summary = np.load(out / "summary.npy")
    prov = provenance_of(out)
    assert summary.shape == (6, 4) and prov.shape == (6, 2)
    for row, (k, i) in zip(summary, prov):
        np.testing.assert_array_equal(row, np.load(paths[k])[i])
    assert report_of(out)["accessed"]["total"] == 6


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


def _run_three_owners(tmp_path, out, *flags, capsys):
    """`dpsumm summarize --json` of a summary of 5 rows from three owner files of 40 rows (default method), then
    ``flags``: ``(code, stdout, stderr)``."""
    _, _, paths, _, _, _ = _files(tmp_path, n_owners=3, rows=40)
    return _run(summarize_args(paths, tmp_path / "val.npy", 5, out, "--json", *flags), capsys)


def test_summarize_budget_run_prints_and_writes_the_whole_ledger(tmp_path, capsys):
    owners, labels, paths, label_paths, val, seed = _files(tmp_path)
    out = tmp_path / "out"
    code, text, err = _run(
        summarize_args(
            paths,
            tmp_path / "val.npy",
            5,
            out,
            "--labels",
            *label_paths,
            "--method",
            "paper",
            "--budget",
            "4",
            "--delta",
            "1e-4",
            "--validation-budget",
            "4",
            "--validation-delta",
            "1e-2",
            "--seed-set",
            str(tmp_path / "seed.npy"),
            "--gamma",
            "median",
            "--dim",
            "16",
            "--random-state",
            "1",
        ),
        capsys,
    )
    assert code == 0, err
    # the same run through the API
    budget = dpsumm.Budget(4.0, 1e-4, 4.0, 1e-2)
    ref = dpsumm.summarize(
        [dpsumm.Owner(o, labels=y, name=f"owner-{k}") for k, (o, y) in enumerate(zip(owners, labels))],
        val,
        5,
        method=dpsumm.PaperProtocol(dim=16),
        privacy=budget,
        seed_set=seed,
        gamma="median",
        random_state=1,
        progress=False,
    )
    np.testing.assert_array_equal(np.load(out / "summary.npy"), ref.points)
    np.testing.assert_array_equal(np.load(out / "labels.npy"), ref.labels)
    report = report_of(out)
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
    code, text, err = _run(
        summarize_args(
            paths,
            tmp_path / "val.npy",
            6,
            out,
            "--label-column",
            "-1",
            "--method",
            "paper-greedy",
            "--seed-set",
            "7",
            "--gamma",
            "0.5",
            "--dim",
            "16",
            "--random-state",
            "2",
            "--json",
        ),
        capsys,
    )
    assert code == 0, err
    report = json.loads(text)
    assert report == report_of(out)
    assert report["privacy"] is None and report["private"] is False and report["gamma"] == 0.5
    prov = provenance_of(out)
    got_labels = np.load(out / "labels.npy")
    np.testing.assert_array_equal(got_labels, prov[:, 0])  # label = owner index by construction
    for row, (k, i) in zip(np.load(out / "summary.npy"), prov):
        np.testing.assert_allclose(row, owners[k][i])  # the label column is not a feature
    ref = dpsumm.summarize(
        owners, val, 6, method=dpsumm.PaperGreedy(dim=16), seed_set=7, gamma=0.5, random_state=2, progress=False
    )
    np.testing.assert_array_equal(prov[:, 1], ref.index)


def test_summarize_reads_parquet(tmp_path, capsys):
    owners, _, paths, _, val, _ = _files(tmp_path, fmt="parquet")
    out = tmp_path / "out"
    code, _, err = _run(
        summarize_args(
            paths, tmp_path / "val.npy", 4, out, "--method", "uniform", "--random-state", "0", "--gamma", "1"
        ),
        capsys,
    )
    assert code == 0, err
    for row, (k, i) in zip(np.load(out / "summary.npy"), provenance_of(out)):
        np.testing.assert_array_equal(row, owners[k][i])


@pytest.mark.parametrize(
    "extra, message",
    [
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
        (
            ["--purchase", "labels", "--label-set", "0,,1", "--validation-labels", "y.npy"],
            "--label-set has an empty label",
        ),
        (
            ["--purchase", "labels", "--label-set", "[0, 1", "--validation-labels", "y.npy"],
            "--label-set is not a valid JSON",
        ),
        (
            ["--purchase", "labels", "--label-set", "0,1,0", "--validation-labels", "y.npy"],
            "--label-set repeats a label",
        ),
        (["--purchase", "labels", "--label-set", "0,cat", "--validation-labels", "y.npy"], "--label-set mixes strings"),
        (["--purchase", "labels", "--validation-labels", "y.npy"], "ByLabel needs --label-set"),
        (["--purchase", "winners", "--label-set", "0,1"], "--label-set does not apply to purchase 'winners'"),
        (
            ["--purchase", "labels", "--label-set", "0,1", "--purchase-factor", "0.5", "--validation-labels", "y.npy"],
            "--purchase-factor must be a number in [1, ",
        ),
        (
            ["--purchase", "quotas"],
            "--purchase must be one of 'direction', 'nominees', 'labels', 'strata', 'winners', got 'quotas'",
        ),  # removed
        (["--tilt-rounds", "2"], "unrecognized arguments: --tilt-rounds"),  # the quota purchase's flag: removed
        (["--method", "paper", "--label-set", "0,1"], "--label-set does not apply to method 'paper'"),
        (
            ["--method", "paper", "--validation-labels", "y.npy"],
            "--validation-labels applies only to --method nominations",
        ),
        (["--purchase", "winners", "--validation-labels", "y.npy"], "not to --method nominations --purchase winners"),
        (["--purchase", "labels", "--label-set", "0,1"], "give --validation-labels"),
        (["--purchase", "labels", "--label-set", "0,1", "--validation-labels", "y.npy"], "give the owners' labels"),
    ],
)
def test_summarize_user_errors_areone_line_exit_2(tmp_path, capsys, extra, message):
    _, _, paths, _, _, _ = _files(tmp_path, n_owners=2)
    code, _, err = _run(summarize_args(paths, tmp_path / "val.npy", 3, tmp_path / "out", *extra), capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("dpsumm: error:") and message in lines[0], err
    assert not (tmp_path / "out").exists()  # refused before any work


def test_validation_only_budget_runs_nominations_and_is_spent(tmp_path, capsys):
    out = tmp_path / "out"
    code, text, err = _run_three_owners(
        tmp_path, out, "--validation-budget", "0.7", "--validation-delta", "1e-7", capsys=capsys
    )
    assert code == 0, err
    report = report_of(out)
    assert report["budget"]["validation_epsilon"] == 0.7 and report["budget"]["epsilon"] is None
    assert report["method"] == "nominations"


def test_index_flag_reads_a_pandas_index_column_as_the_user_says(tmp_path, capsys):
    rng = np.random.default_rng(1)
    paths = []
    for k in range(2):
        X = rng.uniform(size=(30, 3))
        p = tmp_path / f"o{k}.csv"
        np.savetxt(p, np.column_stack([np.arange(30), X]), delimiter=",")  # headerless row numbers first
        paths.append(str(p))
    np.savetxt(tmp_path / "v.csv", np.column_stack([np.arange(20), rng.uniform(size=(20, 3))]), delimiter=",")
    args = summarize_args(paths, tmp_path / "v.csv", 4, tmp_path / "out", "--method", "uniform")
    code, _, err = _run(args, capsys)
    assert code == 2 and "--index yes" in err
    code, _, err = _run([*args, "--index", "yes"], capsys)
    assert code == 0, err
    assert np.load(tmp_path / "out" / "summary.npy").shape == (4, 3)


def test_a_budget_is_a_cap_for_a_purchase_without_owners_releases(tmp_path, capsys):
    """`--budget` with the nominees purchase (the owners release nothing): the run is not refused, the report keeps
    the budget given, and the ledger spends nothing of the owners' epsilon."""
    out = tmp_path / "out"
    code, _, err = _run_three_owners(
        tmp_path, out, "--purchase", "nominees", "--budget", "0.9", "--validation-budget", "1", capsys=capsys
    )
    assert code == 0, err
    report = report_of(out)
    assert report["budget"]["epsilon"] == 0.9 and report["method"] == "nominations"
    ledger = dpsumm.accounting.Ledger.from_dict(report["privacy"])
    assert ledger.events("owners") == [] and ledger.epsilon("owners", 1e-6) == 0.0
    assert 0 < ledger.epsilon("validation", 1e-6) <= 1.0


#: The label runs' flags after the files: a summary of 6 rows, the budgets, d = 32 and the seed.
LABEL_RUN_FLAGS = ["--budget", "0.8", "--validation-budget", "0.9", "--dim", "32", "--random-state", "2"]


def label_run_reference(owners, labels, val, yv, label_set, share=0.0, purchase=dpsumm.ByLabel):
    """The API run a label run of the CLI (``LABEL_RUN_FLAGS``, 6 rows, the median gamma) must equal."""
    return dpsumm.summarize(
        [dpsumm.Owner(o, labels=y, name=f"owner-{k}") for k, (o, y) in enumerate(zip(owners, labels))],
        val,
        6,
        dpsumm.Nominations(dim=32, purchase=purchase(label_set=label_set, sale_tilt_share=share)),
        validation_labels=yv,
        privacy=dpsumm.Budget(0.8, 1e-6, 0.9, 1e-6),
        gamma="median",
        random_state=2,
        progress=False,
    )


@pytest.mark.parametrize("purchase", [["--purchase", "labels"], [], ["--sale-tilt-share", "0.3"]])
def test_summarize_purchase_labels_equals_the_api(tmp_path, capsys, purchase):
    """`dpsumm summarize --purchase labels --label-set 0,1,2 --validation-labels PATH` (or without --purchase: the
    default, ByDirection, crossed with the label set; or with the tilt of the sales, `--sale-tilt-share 0.3`): the
    same summary, labels and
    ledger as dpsumm.summarize with the same seed; every party certified (apart from the seed), owners' budget
    spent."""
    owners, labels, paths, label_paths, val, yv = label_shift_files(tmp_path)
    out = tmp_path / "out"
    code, text, err = _run(
        summarize_args(
            paths,
            tmp_path / "val.npy",
            6,
            out,
            "--labels",
            *label_paths,
            "--validation-labels",
            str(tmp_path / "val-labels.csv"),
            *purchase,
            "--label-set",
            "0,1,2",
            *LABEL_RUN_FLAGS,
        ),
        capsys,
    )
    assert code == 0, err
    share = float(purchase[1]) if purchase[:1] == ["--sale-tilt-share"] else 0.0
    cls = dpsumm.ByLabel if purchase[:2] == ["--purchase", "labels"] else dpsumm.ByDirection
    ref = label_run_reference(owners, labels, val, yv, (0, 1, 2), share, cls)
    np.testing.assert_array_equal(np.load(out / "summary.npy"), ref.points)
    np.testing.assert_array_equal(np.load(out / "labels.npy"), ref.labels)
    assert len(ref) == 6 and ref.accessed.total <= 3 * 6
    report = report_of(out)
    assert report["privacy"] == json.loads(json.dumps(ref.privacy.to_dict(1e-6, 1e-6)))
    assert report["accessed"]["total"] == ref.accessed.total
    assert ref.privacy.epsilon("owners", 1e-6) <= 0.8 and ref.privacy.epsilon("validation", 1e-6) <= 0.9
    # ByDirection's direction release, when the consumer makes it (its histogram can pay for bins), is one more event
    direction = sum("clipped" in getattr(e, "releases", "") for e in ref.privacy.events("validation"))
    assert direction <= (cls is dpsumm.ByDirection)
    assert len(ref.privacy.events("validation")) == (2 if share else 1) + direction
    assert "label" in text and "certified: NO (seeded run)" in text


WORDS = np.array(["cat", "dog", "bird"])


def test_summarize_string_labels_from_files_equals_the_api(tmp_path, capsys):
    """String labels from every file form the readers take (issue 43): owner 0's labels in a .npy of strings, owner
    1's in a CSV column of words under the header `label`, owner 2's in a headerless CSV of words, the validation
    labels in a CSV of words; `dpsumm summarize --label-set cat,dog,bird` (the default purchase crossed with the
    labels) gives the same summary, labels and ledger as dpsumm.summarize with the same string labels and seed. The
    same owners again with the words as a label column of their CSV files (`--label-column 2`): the same summary."""
    owners, labels, paths, _, val, yv = label_shift_files(tmp_path)
    words = [WORDS[y] for y in labels]
    label_paths = [str(tmp_path / "w0.npy"), str(tmp_path / "w1.csv"), str(tmp_path / "w2.csv")]
    np.save(label_paths[0], words[0])
    (tmp_path / "w1.csv").write_text("label\n" + "\n".join(words[1]) + "\n")
    (tmp_path / "w2.csv").write_text("\n".join(f" {w}" for w in words[2]) + "\n")  # spaces around a label are dropped
    (tmp_path / "wv.csv").write_text("class\n" + "\n".join(WORDS[yv]) + "\n")
    flags = ["--validation-labels", str(tmp_path / "wv.csv"), "--label-set", "cat,dog,bird", *LABEL_RUN_FLAGS]
    code, _, err = _run(
        summarize_args(paths, tmp_path / "val.npy", 6, tmp_path / "o1", "--labels", *label_paths, *flags), capsys
    )
    assert code == 0, err
    ref = label_run_reference(owners, words, val, WORDS[yv], tuple(WORDS), purchase=dpsumm.ByDirection)  # the default
    np.testing.assert_array_equal(np.load(tmp_path / "o1" / "summary.npy"), ref.points)
    got = np.load(tmp_path / "o1" / "labels.npy")  # never a pickle
    assert got.dtype.kind == "U" and set(got) <= set(WORDS)
    np.testing.assert_array_equal(got, ref.labels)
    report = report_of(tmp_path / "o1")
    assert report["privacy"] == json.loads(json.dumps(ref.privacy.to_dict(1e-6, 1e-6)))
    # the words as a column of each owner's CSV file
    table_paths = []
    for k, (o, w) in enumerate(zip(owners, words)):
        table_paths.append(str(tmp_path / f"t{k}.csv"))
        lines = ["f0,f1,species,f2,f3"] + [
            ",".join([*map(repr, map(float, x[:2])), wk, *map(repr, map(float, x[2:]))]) for x, wk in zip(o, w)
        ]
        (tmp_path / f"t{k}.csv").write_text("\n".join(lines) + "\n")
    code, _, err = _run(
        summarize_args(table_paths, tmp_path / "val.npy", 6, tmp_path / "o2", "--label-column", "2", *flags), capsys
    )
    assert code == 0, err
    np.testing.assert_array_equal(np.load(tmp_path / "o2" / "summary.npy"), ref.points)
    np.testing.assert_array_equal(np.load(tmp_path / "o2" / "labels.npy"), ref.labels)


def test_summarize_refuses_string_labels_it_cannot_use(tmp_path, capsys):
    """An object array (a pickle) of labels, an empty label, and string labels against a numeric label set: refused
    with a message naming the file or flag, before anything runs."""
    _, _, paths, label_paths, _, yv = label_shift_files(tmp_path)
    base = summarize_args(
        paths, tmp_path / "val.npy", 6, tmp_path / "o", "--budget", "0.8", "--validation-budget", "0.9"
    )
    np.save(tmp_path / "obj.npy", np.array(list(WORDS[yv]), dtype=object), allow_pickle=True)
    np.save(tmp_path / "hole.npy", np.array(["cat"] * 29 + [""]))
    (tmp_path / "words.csv").write_text("\n".join(WORDS[yv]) + "\n")
    for vlabels, set_, match in [
        ("obj.npy", "cat,dog,bird", "pickled"),
        ("hole.npy", "cat,dog,bird", "empty label"),
        ("words.csv", "0,1,2", "strings"),
    ]:
        code, _, err = _run(
            [*base, "--labels", *label_paths, "--validation-labels", str(tmp_path / vlabels), "--label-set", set_],
            capsys,
        )
        assert code != 0 and match in err, (vlabels, err)
        assert not (tmp_path / "o" / "summary.npy").exists()


def test_a_seeded_cli_run_says_not_private(tmp_path, capsys):
    _, _, paths, label_paths, _, _ = label_shift_files(tmp_path)
    out = tmp_path / "out"
    code = main(
        summarize_args(
            paths,
            tmp_path / "val.npy",
            6,
            out,
            "--purchase",
            "labels",
            "--label-set",
            "0,1,2",
            "--labels",
            *label_paths,
            "--validation-labels",
            str(tmp_path / "val-labels.csv"),
            "--dim",
            "32",
            "--gamma",
            "0.3",
            "--random-state",
            "0",
        )
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "NOT private" in captured.out + captured.err
    assert report_of(out)["privacy"]["certification"]["status"] == "seeded: NOT private"


def test_cli_out_is_checked_before_any_noise(tmp_path, capsys, monkeypatch):
    S = sys.modules["dpsumm.summarize"]

    def no_run(*a, **k):  # the run (and its noise) must never start
        raise AssertionError("summarize ran before --out was validated")

    monkeypatch.setattr(S, "summarize", no_run)
    owners, val = small_files(tmp_path)
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    line = one_line_exit_2(main(summarize_args(owners, val, 3, blocker / "sub")), capsys)
    assert "--out" in line
    line = one_line_exit_2(
        main(["experiment", "digits", "--out", str(blocker), "--sizes", "5", "--repeats", "1"]), capsys
    )
    assert "--out" in line


def test_cli_summarize_reports_rows_and_marks_seeded(tmp_path, capsys):
    owners, val = small_files(tmp_path)
    out = tmp_path / "out"
    assert main(summarize_args(owners, val, 3, out, "--random-state", "0")) == 0
    captured = capsys.readouterr()
    assert "20 rows" in captured.out and "NOT private" in captured.out
    report = report_of(out)
    assert report["private"] is False and report["seeded"] is True and "NOT private" in report["warning"]


def test_summarize_streams_a_parquet_file_by_column_name_and_scaled(tmp_path, capsys, monkeypatch):
    """A single .parquet owner file with --label-column and --scale is read in record batches (never whole) and
    scaled at every read: the summary, labels and provenance of the API run on the rows scaled in memory."""
    pq = pytest.importorskip("pyarrow.parquet")
    owners, labels, paths, _, val, _ = _files(tmp_path, rows=60, label_column=True, fmt="parquet")
    monkeypatch.setattr(pq, "read_table", lambda *a, **k: pytest.fail("the table was read whole"))
    out = tmp_path / "out"
    flags = ("--label-column", "-1", "--scale", "0:1.5", "--random-state", "2", "--json")
    code, _, err = _run(summarize_args(paths, tmp_path / "val.npy", 6, out, *flags), capsys)
    assert code == 0, err
    scale = lambda X: dpsumm.scale_to_unit(X, 0.0, 1.5)  # noqa: E731
    ref = dpsumm.summarize(
        [
            dpsumm.Owner(scale(X), labels=y.astype(float), name=f"owner-{k}")
            for k, (X, y) in enumerate(zip(owners, labels))
        ],
        scale(val),
        6,
        random_state=2,
        progress=False,
    )
    prov = provenance_of(out)
    np.testing.assert_array_equal(prov[:, 0], ref.owner)
    np.testing.assert_array_equal(prov[:, 1], ref.index)
    assert np.load(out / "summary.npy").tobytes() == ref.points.tobytes()
    np.testing.assert_array_equal(np.load(out / "labels.npy"), ref.labels)
