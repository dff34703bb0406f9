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


def test_summarize_writes_summary_provenance_and_report(tmp_path, capsys):
    rng = np.random.default_rng(0)
    paths = []
    for k in range(3):
        p = tmp_path / f"owner{k}.npy"
        np.save(p, rng.normal(size=(40, 4)) + k)
        paths.append(str(p))
    np.savetxt(tmp_path / "val.csv", rng.normal(size=(20, 4)), delimiter=",")
    out = tmp_path / "out"
    code = main(
        [
            "summarize",
            "--owners",
            *paths,
            "--validation",
            str(tmp_path / "val.csv"),
            "--size",
            "6",
            "--out",
            str(out),
            "--method",
            "paper-greedy",
            "--random-state",
            "1",
            "--no-progress",
        ]
    )
    assert code == 0
    summary = np.load(out / "summary.npy")
    prov = np.loadtxt(out / "provenance.csv", delimiter=",", skiprows=1, dtype=int)
    assert summary.shape == (6, 4) and prov.shape == (6, 2)
    for row, (k, i) in zip(summary, prov):
        np.testing.assert_array_equal(row, np.load(paths[k])[i])
    report = json.loads((out / "report.json").read_text())
    assert report["accessed"]["total"] == 6


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
    code, text, err = _run(
        [
            "summarize",
            "--owners",
            *paths,
            "--labels",
            *label_paths,
            "--validation",
            str(tmp_path / "val.npy"),
            "--size",
            "5",
            "--out",
            str(out),
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
            "--no-progress",
        ],
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
    code, text, err = _run(
        [
            "summarize",
            "--owners",
            *paths,
            "--label-column",
            "-1",
            "--validation",
            str(tmp_path / "val.npy"),
            "--size",
            "6",
            "--out",
            str(out),
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
            "--no-progress",
            "--json",
        ],
        capsys,
    )
    assert code == 0, err
    report = json.loads(text)
    assert report == json.loads((out / "report.json").read_text())
    assert report["privacy"] is None and report["private"] is False and report["gamma"] == 0.5
    prov = np.loadtxt(out / "provenance.csv", delimiter=",", skiprows=1, dtype=int)
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
        [
            "summarize",
            "--owners",
            *paths,
            "--validation",
            str(tmp_path / "val.npy"),
            "--size",
            "4",
            "--out",
            str(out),
            "--method",
            "uniform",
            "--random-state",
            "0",
            "--gamma",
            "1",
            "--no-progress",
        ],
        capsys,
    )
    assert code == 0, err
    prov = np.loadtxt(out / "provenance.csv", delimiter=",", skiprows=1, dtype=int)
    for row, (k, i) in zip(np.load(out / "summary.npy"), prov):
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
            "--purchase-factor must be in [1, ",
        ),
        (
            ["--purchase", "quotas"],
            "--purchase must be one of 'nominees', 'labels', 'strata', 'direction', 'winners', got 'quotas'",
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
def test_summarize_user_errors_are_one_line_exit_2(tmp_path, capsys, extra, message):
    _, _, paths, _, _, _ = _files(tmp_path, n_owners=2)
    args = [
        "summarize",
        "--owners",
        *paths,
        "--validation",
        str(tmp_path / "val.npy"),
        "--size",
        "3",
        "--out",
        str(tmp_path / "out"),
        "--no-progress",
        *extra,
    ]
    code, _, err = _run(args, capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("dpsumm: error:") and message in lines[0], err
    assert not (tmp_path / "out").exists()  # refused before any work


def test_validation_only_budget_runs_nominations_and_is_spent(tmp_path, capsys):
    _, _, paths, _, _, _ = _files(tmp_path, n_owners=3, rows=40)
    out = tmp_path / "out"
    code, text, err = _run(
        [
            "summarize",
            "--owners",
            *paths,
            "--validation",
            str(tmp_path / "val.npy"),
            "--size",
            "5",
            "--out",
            str(out),
            "--validation-budget",
            "0.7",
            "--validation-delta",
            "1e-7",
            "--no-progress",
            "--json",
        ],
        capsys,
    )
    assert code == 0, err
    report = json.loads((out / "report.json").read_text())
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
    args = [
        "summarize",
        "--owners",
        *paths,
        "--validation",
        str(tmp_path / "v.csv"),
        "--size",
        "4",
        "--out",
        str(tmp_path / "out"),
        "--no-progress",
        "--method",
        "uniform",
    ]
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
    code, _, err = _run(
        [
            "summarize",
            "--owners",
            *paths,
            "--validation",
            str(tmp_path / "val.npy"),
            "--size",
            "5",
            "--out",
            str(out),
            "--budget",
            "0.9",
            "--validation-budget",
            "1",
            "--no-progress",
            "--json",
        ],
        capsys,
    )
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
    code, text, err = _run(
        [
            "summarize",
            "--owners",
            *paths,
            "--labels",
            *label_paths,
            "--validation",
            str(tmp_path / "val.npy"),
            "--validation-labels",
            str(tmp_path / "val-labels.csv"),
            "--size",
            "6",
            "--out",
            str(out),
            *purchase,
            "--label-set",
            "0,1,2",
            "--budget",
            "0.8",
            "--validation-budget",
            "0.9",
            "--dim",
            "32",
            "--random-state",
            "2",
            "--no-progress",
        ],
        capsys,
    )
    assert code == 0, err
    share = float(purchase[1]) if purchase[:1] == ["--sale-tilt-share"] else 0.0
    method = dpsumm.Nominations(dim=32, purchase=dpsumm.ByLabel(label_set=(0, 1, 2), sale_tilt_share=share))
    ref = dpsumm.summarize(
        [dpsumm.Owner(o, labels=y, name=f"owner-{k}") for k, (o, y) in enumerate(zip(owners, labels))],
        val,
        6,
        method,
        validation_labels=yv,
        privacy=dpsumm.Budget(0.8, 1e-6, 0.9, 1e-6),
        gamma="median",
        random_state=2,
        progress=False,
    )
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
    flags = [
        "--validation",
        str(tmp_path / "val.npy"),
        "--validation-labels",
        str(tmp_path / "wv.csv"),
        "--size",
        "6",
        "--label-set",
        "cat,dog,bird",
        "--budget",
        "0.8",
        "--validation-budget",
        "0.9",
        "--dim",
        "32",
        "--random-state",
        "2",
        "--no-progress",
    ]
    code, _, err = _run(
        ["summarize", "--owners", *paths, "--labels", *label_paths, "--out", str(tmp_path / "o1"), *flags], capsys
    )
    assert code == 0, err
    method = dpsumm.Nominations(dim=32, purchase=dpsumm.ByLabel(label_set=tuple(WORDS)))
    ref = dpsumm.summarize(
        [dpsumm.Owner(o, labels=w, name=f"owner-{k}") for k, (o, w) in enumerate(zip(owners, words))],
        val,
        6,
        method,
        validation_labels=WORDS[yv],
        privacy=dpsumm.Budget(0.8, 1e-6, 0.9, 1e-6),
        gamma="median",
        random_state=2,
        progress=False,
    )
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
        lines = ["f0,f1,species,f2,f3"] + [
            ",".join([*map(repr, map(float, x[:2])), wk, *map(repr, map(float, x[2:]))]) for x, wk in zip(o, w)
        ]
        (tmp_path / f"t{k}.csv").write_text("\n".join(lines) + "\n")
    code, _, err = _run(
        ["summarize", "--owners", *table_paths, "--label-column", "2", "--out", str(tmp_path / "o2"), *flags], capsys
    )
    assert code == 0, err
    np.testing.assert_array_equal(np.load(tmp_path / "o2" / "summary.npy"), ref.points)
    np.testing.assert_array_equal(np.load(tmp_path / "o2" / "labels.npy"), ref.labels)


def test_summarize_refuses_string_labels_it_cannot_use(tmp_path, capsys):
    """An object array (a pickle) of labels, an empty label, and string labels against a numeric label set: refused
    with a message naming the file or flag, before anything runs."""
    _, _, paths, label_paths, _, yv = _label_shift_files(tmp_path)
    base = [
        "summarize",
        "--owners",
        *paths,
        "--validation",
        str(tmp_path / "val.npy"),
        "--size",
        "6",
        "--out",
        str(tmp_path / "o"),
        "--budget",
        "0.8",
        "--validation-budget",
        "0.9",
        "--no-progress",
    ]
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


def world(seed, sizes=(120, 120, 120, 120), m=60, f=5):
    """Owners with labels 0..2 in different mixes and a consumer who wants labels 0 and 2."""
    rng = np.random.default_rng(seed)
    owners, labels = [], []
    for k, n in enumerate(sizes):
        mix = np.roll([0.6, 0.3, 0.1], k)
        y = rng.choice(3, size=n, p=mix)
        owners.append(rng.normal(loc=y[:, None] * 1.5, scale=0.5, size=(n, f)))
        labels.append(y)
    yv = rng.choice([0, 2], size=m, p=[0.3, 0.7])
    return owners, labels, rng.normal(loc=yv[:, None] * 1.5, scale=0.5, size=(m, f)), yv


def test_a_seeded_cli_run_says_not_private(tmp_path, capsys):
    from dpsumm.cli import main

    owners, labels, validation, yv = world(0, sizes=(60, 60, 60))
    args = []
    for k, o in enumerate(owners):
        np.save(tmp_path / f"o{k}.npy", o)
        args.append(str(tmp_path / f"o{k}.npy"))
    np.save(tmp_path / "v.npy", validation)
    extra = ["--purchase", "labels"]
    for k, y in enumerate(labels):
        np.save(tmp_path / f"y{k}.npy", y)
    np.save(tmp_path / "yv.npy", yv)
    extra += [
        "--label-set",
        "0,1,2",
        "--labels",
        *(str(tmp_path / f"y{k}.npy") for k in range(len(labels))),
        "--validation-labels",
        str(tmp_path / "yv.npy"),
    ]
    out = tmp_path / "out"
    code = main(
        [
            "summarize",
            "--owners",
            *args,
            "--validation",
            str(tmp_path / "v.npy"),
            "--size",
            "6",
            *extra,
            "--dim",
            "32",
            "--gamma",
            "0.3",
            "--random-state",
            "0",
            "--out",
            str(out),
            "--no-progress",
        ]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "NOT private" in captured.out + captured.err
    report = json.loads((out / "report.json").read_text())
    assert report["privacy"]["certification"]["status"] == "seeded: NOT private"


def _files_rel(tmp_path):
    rng = np.random.default_rng(0)
    paths = []
    for k in range(2):
        p = tmp_path / f"o{k}.npy"
        np.save(p, rng.normal(size=(20, 3)))
        paths.append(str(p))
    v = tmp_path / "v.npy"
    np.save(v, rng.normal(size=(8, 3)))
    return paths, str(v)


def _one_line_exit_2(code, capsys):
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("dpsumm: error:"), err
    return err[0]


def test_cli_out_is_checked_before_any_noise(tmp_path, capsys, monkeypatch):
    S = sys.modules["dpsumm.summarize"]

    def no_run(*a, **k):  # the run (and its noise) must never start
        raise AssertionError("summarize ran before --out was validated")

    monkeypatch.setattr(S, "summarize", no_run)
    owners, val = _files_rel(tmp_path)
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    line = _one_line_exit_2(
        main(
            [
                "summarize",
                "--owners",
                *owners,
                "--validation",
                val,
                "--size",
                "3",
                "--out",
                str(blocker / "sub"),
                "--no-progress",
            ]
        ),
        capsys,
    )
    assert "--out" in line
    line = _one_line_exit_2(
        main(["experiment", "digits", "--out", str(blocker), "--sizes", "5", "--repeats", "1"]), capsys
    )
    assert "--out" in line


def test_cli_summarize_reports_rows_and_marks_seeded(tmp_path, capsys):
    owners, val = _files_rel(tmp_path)
    out = tmp_path / "out"
    assert (
        main(
            [
                "summarize",
                "--owners",
                *owners,
                "--validation",
                val,
                "--size",
                "3",
                "--out",
                str(out),
                "--random-state",
                "0",
                "--no-progress",
            ]
        )
        == 0
    )
    captured = capsys.readouterr()
    assert "20 rows" in captured.out and "NOT private" in captured.out
    report = json.loads((out / "report.json").read_text())
    assert report["private"] is False and report["seeded"] is True and "NOT private" in report["warning"]
