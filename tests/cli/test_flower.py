"""`dpsumm flower` (dpsumm.cli.flower): the deployment commands it prints carry the run options and the label
purchase, --run hands the options and labels to a federation and checks its inputs first, user errors exit 2.
"""

from __future__ import annotations

import contextlib
import io
import json
import shlex
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dpsumm  # noqa: E402
from dpsumm.cli import main
from federation_data import (
    FLOWER_TWO_LABELLED_OWNERS,
    LABEL_SET,
    _data,
    _labelled_data,
    _labels_cli_flags,
    small_files,
)
from refusal import one_line_exit_2

RNG = np.random.default_rng(0)


VALIDATION = RNG.uniform(size=(20, 3))


def cli(argv):
    from dpsumm.cli import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        status = main(argv)
    return status, err.getvalue()


def test_cli_flower_refuses_a_bad_poll_interval(tmp_path):
    np.save(tmp_path / "v.npy", VALIDATION)
    for value in ("0", "nan", "-1", "0.001", "5", "inf"):
        status, err = cli(
            [
                "flower",
                "--owner",
                f"a={tmp_path / 'v.npy'}",
                "--consumer",
                str(tmp_path / "v.npy"),
                "--size",
                "5",
                "--insecure",
                "--poll-interval",
                value,
            ]
        )
        assert status == 2 and "--poll-interval" in err, err


def _run(args, capsys):
    code = main(args)
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def test_flower_commands_carry_the_run_options(tmp_path, capsys):
    np.save(tmp_path / "v.npy", np.zeros((4, 3)))
    code, out, err = _run(
        [
            *FLOWER_TWO_LABELLED_OWNERS,
            "--consumer",
            str(tmp_path / "v.npy"),
            "--size",
            "5",
            "--method",
            "paper",
            "--budget",
            "2",
            "--delta",
            "1e-5",
            "--validation-budget",
            "1",
            "--gamma",
            "median",
            "--seed-set",
            "40",
            "--dim",
            "64",
            "--insecure",
        ],
        capsys,
    )
    assert code == 0, err
    assert 'labels="/data/ya.npy"' in out and 'labels="/data/yb.npy"' in out
    for item in (
        'method="paper"',
        'gamma="median"',
        "budget-epsilon=2.0",
        "budget-delta=1e-05",
        "budget-validation-epsilon=1.0",
        "budget-validation-delta=1e-06",
        "seed-set=40",
        "dim=64",
    ):
        assert item in out, item


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--labels", "a=/y.npy"], "--labels must name every owner"),
        (["--method", "paper", "--validation-budget", "1"], "needs --budget"),
        (["--method", "paper", "--out", "x"], "--out applies to --run only"),
        (["--simulation"], "--simulation applies to --run only"),
        (["--simulation", "--run", "--node-auth"], "--node-auth and --poll-interval do not apply"),
        (["--method", "paper-greedy", "--budget", "1", "--validation-budget", "1"], "is not private"),
        (["--method", "paper", "--gamma", "0"], "--gamma must be a finite number > 0"),
        (["--method", "paper", "--validation-labels", "/yv.npy"], "--validation-labels applies only"),
        (["--purchase", "labels", "--label-set", "0,1", "--validation-labels", "/yv.npy"], "give the owners' labels"),
        (
            [
                "--purchase",
                "labels",
                "--label-set",
                "[0, 1",
                "--validation-labels",
                "/yv.npy",
                "--labels",
                "a=/ya.npy",
                "--labels",
                "b=/yb.npy",
            ],
            "--label-set is not a valid JSON list",
        ),
        (["--strata", "a=/sa.csv", "--strata", "b=/sb.csv"], "--strata applies only to a purchase by strata"),
        (["--validation-strata", "/sv.csv"], "--validation-strata applies only to a purchase by strata"),
        (["--seed-set", "-1"], "--seed-set must be a count of rows"),  # was: printed as the seed rows' file "/.../-1"
        (["--seed-set", "2.5"], "--seed-set must be a count of rows"),
        (["--superlink", "host:99999"], "--superlink must be HOST:PORT"),  # was: printed as the SuperLink's --port
        (["--superlink", "host"], "--superlink must be HOST:PORT"),
        (["--purchase", "strata", "--levels", "x,y", "--validation-strata", "/sv.csv"], "give --strata NAME=PATH"),
        (
            ["--purchase", "strata", "--levels", "x,y", "--strata", "a=/sa.csv", "--strata", "b=/sb.csv"],
            "give --validation-strata PATH",
        ),
    ],
)
def test_flower_user_errors_are_one_line_exit_2(tmp_path, capsys, extra, message):
    np.save(tmp_path / "v.npy", np.zeros((4, 3)))
    code, _, err = _run(
        [
            "flower",
            "--owner",
            "a=/a.npy",
            "--owner",
            "b=/b.npy",
            "--consumer",
            str(tmp_path / "v.npy"),
            "--size",
            "2",
            *extra,
        ],
        capsys,
    )
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and message in lines[0], err


def test_flower_commands_carry_the_label_purchase(tmp_path, capsys):
    """The printed deployment: the consumer's SuperNode gets its labels, the run config the label set in a form
    `flwr run --run-config` reads back (checked with Flower's own parser when it is installed)."""
    np.save(tmp_path / "v.npy", np.zeros((4, 3)))
    args = [
        *FLOWER_TWO_LABELLED_OWNERS,
        "--consumer",
        str(tmp_path / "v.npy"),
        "--validation-labels",
        "/data/yv.npy",
        "--size",
        "5",
        "--purchase",
        "labels",
        "--insecure",
    ]
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

        assert FlowerRunConfig.from_run_config(parsed).method.purchase.label_set == dpsumm.methods.parse_label_set(
            label_set
        )


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
    base = [
        "flower",
        "--owner",
        f"a={tmp_path / 'a.npy'}",
        "--consumer",
        str(tmp_path / "v.npy"),
        "--size",
        "2",
        "--insecure",
    ]
    # the release without noise belongs to the purchase by nominees (the default, by cells, buys on the exact kernel)
    for extra, asked in (([], False), (["--purchase", "nominees", "--validation-release", "exact"], True)):
        code, out, err = _run([*base, *extra], capsys)
        assert code == 0, err
        assert ("allow-exact-release=true" in out) == asked
    seen = {}

    class Federation:
        def __init__(self, workdir, owners, consumer, **kw):
            seen.update(kw)
            raise RuntimeError("stop here")

    monkeypatch.setattr(flower_pkg, "LocalFederation", Federation)
    # the release without noise belongs to the purchase by nominees (the default, by cells, buys on the exact kernel)
    for extra, asked in (([], False), (["--purchase", "nominees", "--validation-release", "exact"], True)):
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
    code, _, err = _run(
        [
            "flower",
            "--owner",
            f"a={tmp_path / 'a.npy'}",
            "--owner",
            f"b={tmp_path / 'b.npy'}",
            "--labels",
            f"a={tmp_path / 'ya.npy'}",
            "--labels",
            f"b={tmp_path / 'yb.npy'}",
            "--consumer",
            str(tmp_path / "v.npy"),
            "--validation-labels",
            str(tmp_path / "yv.npy"),
            "--size",
            "2",
            "--purchase",
            "labels",
            "--label-set",
            "0,1",
            "--insecure",
            "--run",
            "--workdir",
            str(tmp_path / "fed"),
        ],
        capsys,
    )
    assert code == 2 and "--validation-labels must hold one label per validation row (4)" in err, err
    assert not (tmp_path / "fed").exists()


flwr = pytest.importorskip("flwr", reason="Flower is not installed: pip install 'dpsumm[flower]' (flwr==1.41.0)")


N_FEATURES, DIM, T_INIT = 5, 64, 300


SEED_SET, RANDOM_STATE = 20, 7


def test_cli_prints_deployment_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from dpsumm.cli import main

    np.save(tmp_path / "v.npy", np.zeros((4, 3)))
    code = main(
        [
            "flower",
            "--owner",
            "a=/data/a.npy",
            "--owner",
            "b=/data/b.npy",
            "--consumer",
            str(tmp_path / "v.npy"),
            "--size",
            "5",
            "--superlink",
            "link.example.org:9093",
            "--node-auth",
            "--method",
            "paper",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "flower-superlink --host 0.0.0.0 --port 9093" in out and "--enable-supernode-auth" in out
    assert out.count("flower-supernode --superlink link.example.org:9093") == 3
    assert "flwr supernode register keys/a.key.pub dpsumm --name a" in out
    assert "n-features=3" in out and "owners=2" in out
    # The paper's default schedule spends t_init x 0.01 on D_v, above the consumer node's default cap of 4: the
    # printed deployment says what its operator would add.
    assert "above its node's default caps" in out and "max-epsilon=" in out
    assert main(["flower", "--owner", "bad", "--consumer", "x.npy", "--size", "1"]) == 2
    assert "NAME=PATH" in capsys.readouterr().err


def test_cli_flower_run_end_to_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`dpsumm flower ... --run` as docs/flower.md's quick start runs it (nominations, the default gamma='median',
    TLS, separate processes), with the owners' labels files, a seed-set file, --delta/--validation-delta, --output
    and --out, every path relative (the ServerApp runs in another directory: each is resolved): exit 0, the same
    summary and labels as in process for the same seed, the ledger printed and written whole into report.json, the
    run reported NOT private (seeded)."""
    from dpsumm.cli import main

    owners, validation, paths, vpath = _data(tmp_path, n_owners=2, rows=30)
    for k, name in enumerate(owners):
        np.save(tmp_path / f"{name}-labels.npy", np.full(30, k))
    seed = np.random.default_rng(5).normal(loc=0.5, scale=0.5, size=(12, N_FEATURES))
    np.save(tmp_path / "seed.npy", seed)
    monkeypatch.chdir(tmp_path)
    args = [
        "flower",
        *(a for n in paths for a in ("--owner", f"{n}={n}.npy")),
        *(a for n in paths for a in ("--labels", f"{n}={n}-labels.npy")),
        "--consumer",
        "validation.npy",
        "--size",
        "4",
        "--seed-set",
        "seed.npy",
        "--output",
        "result.npz",
        "--out",
        "out",
        "--dim",
        str(DIM),
        "--delta",
        "1e-4",
        "--validation-delta",
        "1e-2",
        "--random-state",
        "3",
        "--poll-interval",
        "0.1",
        "--run",
    ]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "one row of D_v" in text and "certified: NO (seeded run)" in text
    ref = dpsumm.summarize(
        [dpsumm.Owner(a, labels=np.full(30, k), name=n) for k, (n, a) in enumerate(owners.items())],
        validation,
        4,
        method=dpsumm.Nominations(dim=DIM),
        seed_set=seed,
        gamma="median",
        random_state=3,
        progress=False,
    )
    assert f"exchanges: {ref.extra['exchanges']}" in text  # the default purchase's exchanges, as in process
    res = dpsumm.flower.load_result(tmp_path / "result.npz")
    assert res.method == ref.method == "nominations"
    np.testing.assert_array_equal(res.points, ref.points)
    np.testing.assert_array_equal(res.owner, ref.owner)
    np.testing.assert_array_equal(res.labels, ref.labels)
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "summary.npy"), ref.points)
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "labels.npy"), ref.labels)
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["privacy"] == json.loads(json.dumps(ref.privacy.to_dict(1e-4, 1e-2)))
    assert report["seeded"] is True and report["certified"] is False


def test_cli_flower_run_hands_the_labels_to_the_federation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`dpsumm flower --run --purchase labels --labels NAME=PATH --validation-labels PATH` (no processes: the
    federation is a stand-in that records what the CLI gives it): every owner's labels file and the consumer's go to
    the federation's nodes, the run config is the one `_flower_run_config` builds from the same flags (the one
    test_flower_labels_equal_in_process runs on real SuperNodes), a seeded run is allowed and reported NOT private,
    and the result is written to --output."""
    import dpsumm.flower as flower_pkg
    from dpsumm.cli import build_parser, main
    from dpsumm.cli.flower import _flower_run_config

    owners, labels, validation, yv, paths, label_paths, vpath, ypath = _labelled_data(tmp_path)
    method = dpsumm.Nominations(dim=DIM, purchase=dpsumm.ByLabel(label_set=LABEL_SET))
    ref = dpsumm.summarize(
        [dpsumm.Owner(a, labels=labels[n], name=n) for n, a in owners.items()],
        validation,
        6,
        method,
        validation_labels=yv,
        gamma="median",
        random_state=RANDOM_STATE,
        progress=False,
    )
    seen: dict[str, object] = {}

    class Federation:
        def __init__(self, workdir: Path, owners_: dict[str, str], consumer: str, **kw: object) -> None:
            seen.update(owners=dict(owners_), consumer=consumer, **kw)
            self.port, self.pids = 0, {}

        def start(self) -> None:
            seen["started"] = True

        def run(self, run_config: dict[str, object]) -> dpsumm.SummaryResult:
            seen["run_config"] = run_config
            return ref

        def close(self) -> None:
            seen["closed"] = True

    monkeypatch.setattr(flower_pkg, "LocalFederation", Federation)
    flags = [*_labels_cli_flags(paths, label_paths, vpath, ypath), "--insecure", "--poll-interval", "0.1"]
    assert main([*flags, "--run", "--output", str(tmp_path / "result.npz")]) == 0, capsys.readouterr().err
    assert "certified: NO (seeded run)" in capsys.readouterr().out
    assert seen["owners"] == {n: str(p) for n, p in paths.items()} and seen["consumer"] == str(vpath)
    assert seen["labels"] == {n: str(p) for n, p in label_paths.items()} and seen["consumer_labels"] == str(ypath)
    assert seen["allow_seeded"] is True and seen["node_poll_interval"] == 0.1 and seen["tls"] is False
    assert seen["started"] and seen["closed"]
    expected = _flower_run_config(build_parser().parse_args(flags), n_owners=len(owners), n_features=N_FEATURES)
    expected["owner-rows"] = ",".join(f"{n}={len(owners[n])}" for n in paths)  # the public sizes, read here
    assert seen["run_config"] == expected and expected["purchase"] == "labels"
    res = dpsumm.flower.load_result(tmp_path / "result.npz")
    np.testing.assert_array_equal(res.points, ref.points)
    np.testing.assert_array_equal(res.labels, ref.labels)


def test_cli_flower_missing_owner_file_exits_2(tmp_path, capsys):
    pytest.importorskip("flwr")
    _, val = small_files(tmp_path)
    line = one_line_exit_2(
        main(
            [
                "flower",
                "--owner",
                f"a={tmp_path / 'missing.npy'}",
                "--consumer",
                val,
                "--size",
                "2",
                "--run",
                "--insecure",
            ]
        ),
        capsys,
    )
    assert "missing.npy" in line


def test_flower_run_checks_the_strata_files_before_starting(tmp_path, capsys):
    """With --run every strata file is read and checked against --levels before any process starts; the error names
    the owner's flag (not --owners)."""
    for name in ("a", "b", "v"):
        np.save(tmp_path / f"{name}.npy", np.random.default_rng(0).random((6, 3)))
    (tmp_path / "sa.csv").write_text("g\nx\ny\nx\ny\nx\ny\n")
    (tmp_path / "sb.csv").write_text("g\nx\nz\nx\ny\nx\n")  # five rows for six
    (tmp_path / "sv.csv").write_text("g\nx\nx\nx\nx\nx\nx\n")
    code, _, err = _run(
        [
            "flower", "--owner", f"a={tmp_path / 'a.npy'}", "--owner", f"b={tmp_path / 'b.npy'}",
            "--consumer", str(tmp_path / "v.npy"), "--size", "2", "--run", "--purchase", "strata", "--levels", "x,y",
            "--strata", f"a={tmp_path / 'sa.csv'}", "--strata", f"b={tmp_path / 'sb.csv'}",
            "--validation-strata", str(tmp_path / "sv.csv"), "--out", str(tmp_path / "out"),
        ],
        capsys,
    )  # fmt: skip
    assert code == 2 and "--strata b" in err and "--owners" not in err, err
    assert not (tmp_path / "out").exists()


def _buyer_tables(tmp_path: Path) -> tuple[list[Path], Path]:
    """Three owners' CSV tables and the consumer's, as a buyer has them: unscaled numbers, a text stratum, a label."""
    rng = np.random.default_rng(12)
    regions = np.array(["east", "west"])

    def table(path: Path, rows: int, west: float) -> Path:
        region = regions[(rng.uniform(size=rows) < west).astype(int)]
        age = rng.uniform(18, 90, rows) + 10 * (region == "west")
        income = rng.uniform(0, 200000, rows)
        outcome = np.where(income > 100000, "high", "low")
        lines = ["age,income,region,outcome"] + [
            f"{a:.1f},{i:.0f},{r},{o}" for a, i, r, o in zip(age, income, region, outcome)
        ]
        path.write_text("\n".join(lines) + "\n")
        return path

    owners = [table(tmp_path / f"owner{k}.csv", 60, 0.2 + 0.2 * k) for k in range(3)]
    return owners, table(tmp_path / "validation.csv", 40, 0.8)


def test_printed_flower_nodes_read_the_buyers_tables_as_summarize_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], task_identity: None
) -> None:
    """`dpsumm flower` with --features, --label-column NAME, --strata-columns and --scale: the node configs it prints
    carry them, and the printed run over the ClientApp's handlers (the printed node and run configs, no process
    spawned; each node's operator allows the seeded run) buys the same summary as `dpsumm summarize` with the same
    flags: every node reads and scales its table by the same code."""
    pytest.importorskip("flwr")
    from flwr.common.config import parse_config_args

    from dpsumm.flower.config import FlowerRunConfig
    from dpsumm.flower.server_app import run_summary
    from node_grid import NodeGrid

    owners, validation = _buyer_tables(tmp_path)
    table_flags = [
        "--features",
        "age,income",
        "--label-column",
        "outcome",
        "--strata-columns",
        "region",
        "--scale",
        "age=18:100,income=0:200000",
    ]
    run_flags = ["--purchase", "strata", "--levels", "east,west", "--size", "6", "--random-state", "3"]
    owner_flags = [a for k, p in enumerate(owners) for a in ("--owner", f"owner-{k}={p}")]
    flags = [*owner_flags, "--consumer", str(validation), *table_flags, *run_flags, "--insecure"]
    assert main(["flower", *flags, "--owner-rows", "owner-0=60,owner-1=60,owner-2=60"]) == 0
    printed = capsys.readouterr().out
    nodes: dict[int, dict[str, object]] = {}
    run_config: dict[str, object] = {}
    for line in printed.splitlines():
        words = shlex.split(line) if not line.startswith("#") else []
        if words[:1] == ["flower-supernode"]:
            cfg = parse_config_args([words[words.index("--node-config") + 1]])
            assert {k: cfg[k] for k in ("features", "label-column", "strata-columns", "scale")} == {
                "features": "age,income",
                "label-column": "outcome",
                "strata-columns": "region",
                "scale": "age=18:100,income=0:200000",
            }
            nodes[len(nodes) + 1] = {**cfg, "allow-seeded": True}
        if words[:2] == ["flwr", "run"]:
            run_config = parse_config_args([words[words.index("--run-config") + 1]])
    assert len(nodes) == 4 and run_config["owner-rows"] == "owner-0=60,owner-1=60,owner-2=60"
    run_config.update({"output": "", "node-wait": 5.0})
    flower = run_summary(NodeGrid(nodes, run_config), FlowerRunConfig.from_run_config(run_config))  # type: ignore[arg-type]
    out = tmp_path / "out"
    assert main(["summarize", "--owners", *map(str, owners), "--validation", str(validation), *table_flags,
                 *run_flags, "--out", str(out), "--no-progress"]) == 0, capsys.readouterr().err  # fmt: skip
    np.testing.assert_array_equal(flower.points, np.load(out / "summary.npy"))
    assert flower.points is not None and flower.points.max() <= 1.0  # the nodes' rows were scaled


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    flag=st.sampled_from(["--owner-rows", "--scale", "--features", "--label-column", "--strata-columns"]),
    value=st.one_of(
        st.text(max_size=16).filter(lambda t: not t.startswith("-")),
        st.sampled_from(["seed", "0:1", "age=0:1", "owner-0=60", "age", "region", "outcome", "1", "a=b=c", ",,"]),
    ),
)
def test_dpsumm_flower_table_flags_are_accepted_or_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str, value: str
) -> None:
    """`dpsumm flower` (printing the deployment) with any value of the flags that read the tables by column name, scale
    them, or give the owners' public sizes: it prints the commands (exit 0) or refuses in one line (exit 2), before
    any node is started; never a traceback."""
    owners, validation = _buyer_tables(tmp_path)
    argv = ["flower", "--owner", f"owner-0={owners[0]}", "--consumer", str(validation), "--size", "5", "--insecure"]
    if flag != "--features":
        argv += ["--features", "age,income"]
    if flag != "--label-column":
        argv += ["--label-column", "outcome"]
    code = main([*argv, flag, value])
    if code != 0:
        one_line_exit_2(code, capsys)
    capsys.readouterr()


def test_node_wait_reaches_the_run_config_only_when_given() -> None:
    """`--node-wait` (the Simulation Engine's hundreds of hellos take minutes) sets run config `node-wait`; without
    it the run config keeps the app's own default."""
    from dpsumm.cli import build_parser
    from dpsumm.cli.flower import _flower_run_config

    base = ["flower", "--owner", "a=/a.npy", "--consumer", "/v.npy", "--n-features", "3", "--size", "5"]
    assert _flower_run_config(build_parser().parse_args([*base, "--node-wait", "900"]), 1, 3)["node-wait"] == 900.0
    assert "node-wait" not in _flower_run_config(build_parser().parse_args(base), 1, 3)
