"""Reliability (issue 13): bad input never crashes, hangs or slips through; noise never repeats after fork;
seeded runs are marked NOT private.

Every user error must be a :class:`dpsumm.InvalidParameterError` (a ``DpsummError``) whose ``argument``
names the user's argument, raised before any allocation the size of the bad input and before any noise.
"""

from __future__ import annotations

import json
import os
import pickle
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dpsumm
from dpsumm import datasets
from dpsumm.cli import main
from dpsumm.messages import Setup
from dpsumm.transport import InProcessTransport, PartyUnavailable

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

# Objects a confused caller might pass where a number is expected.
junk = st.one_of(
    st.none(), st.booleans(), st.text(max_size=3), st.lists(st.integers(), max_size=2),
    st.floats(allow_nan=True, allow_infinity=True), st.integers(min_value=-(2**80), max_value=2**80),
)


def _typed(fn, argument, also=()):
    """Call ``fn``: it either returns or raises InvalidParameterError naming ``argument`` (or one of ``also``)."""
    try:
        return fn()
    except dpsumm.InvalidParameterError as exc:
        if exc.argument in also:
            return exc
        assert exc.argument == argument, (exc.argument, str(exc))
        assert f"`{argument}`" in str(exc) or argument in str(exc)
        return exc


# ----------------------------------------------------------------------------------------- sizes and loops


@pytest.mark.parametrize(
    "call, argument",
    [
        (lambda: dpsumm.RFFHasher(3, dim=2**40), "dim"),
        (lambda: dpsumm.RFFHasher(2**62, dim=4), "n_features"),
        (lambda: dpsumm.RFFHasher(2**70, dim=4), "n_features"),
        (lambda: dpsumm.RFFHasher(2**20, dim=2**19), "dim"),
        (lambda: dpsumm.RFFHasher(3, dim=4, gamma=1e308), "gamma"),
        (lambda: dpsumm.privacy.ProductMWEM(2**40, 0.5), "dim"),
        (lambda: dpsumm.privacy.Csprng(1).uniform_array(10**11), "n"),
        (lambda: dpsumm.privacy.Csprng(1).uniform_array(-1), "n"),
        (lambda: dpsumm.privacy.ProductMWEM(3, 0.5, random_state=1).release([0, 0, 0], 5, 10**11, 1.0), "steps"),
        (lambda: dpsumm.privacy.ProductMWEM(3, 0.5, random_state=1).release([0, 0, 0], 5, 2**70, 1.0), "steps"),
        (lambda: dpsumm.privacy.ProductMWEM(3, 0.5, random_state=1).release([0, 0, 0], 2**70, 5, 1.0), "n_rows"),
        (lambda: dpsumm.privacy.ProductMWEM(3, 0.5, random_state=1).release("abc", 5, 5, 1.0), "column_sums"),
        (lambda: dpsumm.kernels.best_row(np.full((2, 4), np.nan, np.float32), np.ones(4, np.float32)), "hashes"),
        (lambda: dpsumm.accounting.theorem2_schedule(1.0, 1e-4, 200, 3, 140), "dim"),
    ],
    ids=["hasher-dim", "hasher-n_features", "hasher-n_features-2^70", "hasher-product", "hasher-gamma",
         "mwem-dim", "uniform_array-huge", "uniform_array-negative", "mwem-steps", "mwem-steps-2^70",
         "mwem-n_rows-2^70", "mwem-column_sums-str", "best_row-nan", "theorem2-seed-set"],
)
def test_absurd_sizes_are_typed_errors(call, argument):
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        call()
    assert e.value.argument == argument


def test_huge_gamma_or_huge_rows_never_give_nan_hashes():
    h = dpsumm.RFFHasher(3, dim=8, gamma=1e30)
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        h.transform(np.full((2, 3), 1e9))
    assert e.value.argument == "X"
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        dpsumm.RFFHasher(3, dim=8).transform(np.full((1, 3), 1e300))
    assert e.value.argument == "X" and "float32" in str(e.value)


def test_summarize_refuses_rows_that_overflow_h1_before_any_noise():
    owners = [np.zeros((5, 3)), np.full((5, 3), 1e300)]
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        dpsumm.summarize(owners, np.zeros((4, 3)), 2, random_state=0, progress=False)
    assert e.value.argument == "owners"
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        dpsumm.summarize([np.zeros((5, 3))], np.zeros((4, 3)), 2, method=dpsumm.Nominations(dim=2 ** 40), progress=False)
    assert e.value.argument == "dim"


# ----------------------------------------------------------------------------------------- the CSPRNG


@FAST
@given(x=junk)
def test_samplers_take_only_valid_numbers(x):
    c = dpsumm.privacy.Csprng(1)
    for name, fn in [
        ("n", lambda: c.integers(x)),
        ("n", lambda: c.uniform_array(x)),
        ("x", lambda: c.bernoulli_exp(x)),
        ("scale", lambda: c.discrete_laplace(x)),
        ("scale", lambda: c.laplace(0.0, x)),
        ("value", lambda: c.laplace(x, 1.0)),
        ("granularity", lambda: c.laplace(0.0, 1.0, x)),
        ("epsilon", lambda: c.exponential_mechanism([0.0, 1.0], x, 1.0)),
        ("scores", lambda: c.exponential_mechanism(x, 1.0, 1.0)),
        ("label", lambda: c.derive(x)),
        ("seed", lambda: dpsumm.privacy.Csprng(x)),
    ]:
        # A tiny granularity makes scale / granularity too large: either argument may be named.
        out = _typed(fn, name, also=("scale",) if name == "granularity" else ())
        if x is None and name in ("seed", "granularity"):
            continue  # Csprng(None) is the OS-keyed generator; granularity=None the default grid
        if isinstance(x, (bool, str, list, type(None))) and not (name == "label" and isinstance(x, str)):
            if name == "scores" and isinstance(x, list) and x:
                continue  # a list of ints is a valid score vector
            assert isinstance(out, dpsumm.InvalidParameterError), (name, x, out)
        if isinstance(x, float) and not np.isfinite(x) and name not in ("label", "seed", "scores"):
            assert isinstance(out, dpsumm.InvalidParameterError), (name, x, out)


def test_laplace_scale_in_user_units_and_large_values():
    c = dpsumm.privacy.Csprng(1)
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        c.laplace(0, -1)
    assert e.value.argument == "scale" and "got -1" in str(e.value) and "1048576" not in str(e.value)
    # 1e10 on the default 2^-20 grid: k = 1e10 * 2^20 > 2^53, still computed exactly as k + z.
    draws = np.array([c.laplace(1e10, 1) for _ in range(200)])
    assert np.all(np.abs(draws - 1e10) < 30)  # P(|Lap(1)| > 30) = e^-30 per draw
    assert len(np.unique(draws)) > 20


def _draw_after_fork(c):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: draw and report, never return into pytest
        try:
            os.write(w, np.asarray(c.uniform_array(4)).tobytes())
        finally:
            os._exit(0)
    os.close(w)
    child = np.frombuffer(os.read(r, 64), dtype=np.float64)
    os.close(r)
    os.waitpid(pid, 0)
    return np.asarray(c.uniform_array(4)), child


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_os_keyed_stream_is_rekeyed_after_fork():
    parent, child = _draw_after_fork(dpsumm.privacy.Csprng())
    assert child.shape == (4,)
    assert not np.array_equal(parent, child)  # equal with probability 2^-212
    derived = dpsumm.privacy.Csprng().derive("owner")
    parent, child = _draw_after_fork(derived)
    assert not np.array_equal(parent, child)
    # A seeded stream is reproducible by design: both sides draw the same numbers (and it is NOT private).
    parent, child = _draw_after_fork(dpsumm.privacy.Csprng(5))
    np.testing.assert_array_equal(parent, child)


# ----------------------------------------------------------------------------------------- transport


class _Panicking:
    def handle(self, message):
        raise type("PanicException", (BaseException,), {})("called `Option::unwrap()` on a `None` value")


class _Interrupted:
    def handle(self, message):
        raise KeyboardInterrupt


def test_base_exception_in_a_party_is_contained_but_ctrl_c_is_not():
    t = InProcessTransport({"a": _Panicking(), "b": _Interrupted()})
    msg = Setup(n_features=1, dim=1, gamma=1.0, hash_seed=0, reveal="points")
    with pytest.raises(PartyUnavailable) as e:
        t.request("a", msg)
    assert "PanicException" in str(e.value)
    with pytest.raises(KeyboardInterrupt):
        t.request("b", msg)


# ----------------------------------------------------------------------------------------- files


def _write(tmp_path, name, content: bytes):
    p = tmp_path / name
    p.write_bytes(content)
    return p


def _npy_bytes(arr) -> bytes:
    import io

    b = io.BytesIO()
    np.save(b, arr, allow_pickle=True)
    return b.getvalue()


@pytest.mark.parametrize(
    "name, content",
    [
        ("corrupt.npy", b"this is not numpy"),
        ("truncated.npy", _npy_bytes(np.zeros((50, 4)))[:200]),
        ("object.npy", _npy_bytes(np.array([[1, "a"]], dtype=object))),
        ("pickled.npy", pickle.dumps({"rows": [1, 2]})),
        ("strings.npy", _npy_bytes(np.array([["a", "b"]]))),
        ("onedim.npy", _npy_bytes(np.zeros(4))),
        ("binary.csv", bytes(range(256)) * 4),
        ("nul.csv", b"1,2\n3,\x004\n"),
        ("ragged.csv", b"1,2,3\n4,5\n"),
        ("text.csv", b"a,b\nc,d\n"),
        ("empty.csv", b""),
        ("table.xlsx", b"1,2\n"),
    ],
)
def test_bad_files_are_typed_errors(tmp_path, name, content):
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        datasets.load_array(_write(tmp_path, name, content))
    assert e.value.argument == "path"


@pytest.mark.parametrize("path", [None, 3, b"x", True])
def test_load_array_path_type(path):
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        datasets.load_array(path)
    assert e.value.argument == "path"


@FAST
@given(blob=st.binary(max_size=300), suffix=st.sampled_from([".npy", ".csv"]))
def test_any_bytes_load_or_fail_typed(tmp_path_factory, blob, suffix):
    p = tmp_path_factory.mktemp("blob") / f"f{suffix}"
    p.write_bytes(blob)
    try:
        arr = datasets.load_array(p)
    except dpsumm.InvalidParameterError as exc:
        assert exc.argument == "path"
    else:
        assert arr.ndim == 2


def test_csv_header_forms(tmp_path):
    rows = np.arange(12, dtype=float).reshape(4, 3) / 7
    body = "\n".join(",".join(repr(float(v)) for v in r) for r in rows) + "\n"
    named = _write(tmp_path, "named.csv", ("x,y,z\n" + body).encode())
    pandas_like = _write(tmp_path, "pandas.csv", ("0,1,2\n" + body).encode())  # DataFrame(rows).to_csv(index=False)
    plain = _write(tmp_path, "plain.csv", body.encode())
    for p in (named, pandas_like, plain):
        t = datasets.read_table(p)
        assert t.n_rows == 4
        np.testing.assert_array_equal(t.data, rows)  # row i of the file is row i: provenance is not shifted
    assert datasets.read_table(named).header == ["x", "y", "z"]
    assert datasets.read_table(pandas_like).header == ["0", "1", "2"]
    assert datasets.read_table(plain).header is None
    # Explicit rules override auto.
    t = datasets.read_table(pandas_like, header=False)
    assert t.n_rows == 5 and t.header is None
    np.testing.assert_array_equal(t.data[0], [0, 1, 2])
    assert datasets.read_table(plain, header=True).n_rows == 3
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        datasets.read_table(named, header=False)
    assert e.value.argument == "path" and "header=True" in str(e.value)
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        datasets.read_table(plain, header="yes")
    assert e.value.argument == "header"


def test_csv_written_by_pandas_if_available(tmp_path):
    pd = pytest.importorskip("pandas")
    rows = np.random.default_rng(0).normal(size=(6, 3))
    p = tmp_path / "df.csv"
    pd.DataFrame(rows).to_csv(p, index=False)
    t = datasets.read_table(p)
    assert t.n_rows == 6
    np.testing.assert_allclose(t.data, rows, rtol=1e-15)


@pytest.mark.parametrize(
    "call, argument",
    [
        (lambda: datasets.covariate_shift(n_features=0), "n_features"),
        (lambda: datasets.covariate_shift(shift=float("nan")), "shift"),
        (lambda: datasets.covariate_shift(rows_per_owner=10**12), "rows_per_owner"),
        (lambda: datasets.covariate_shift(n_owners="3"), "n_owners"),
        (lambda: datasets.label_split((np.zeros((4, 2)), np.zeros(4)), (np.zeros((4, 2)), np.zeros(4)), seed_set_size=-1),
         "seed_set_size"),
        (lambda: datasets.label_split(None, None), "train"),
    ],
)
def test_dataset_generators_validate(call, argument):
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        call()
    assert e.value.argument == argument


# ----------------------------------------------------------------------------------------- summarize API


@FAST
@given(
    arg=st.sampled_from(["size", "dim", "gamma", "hash_seed", "feature_range", "seed_set", "progress", "random_state"]),
    value=junk,
)
def test_summarize_arguments(arg, value):
    rng = np.random.default_rng(0)
    owners = [rng.normal(size=(10, 3)) for _ in range(2)]
    kwargs = {"size": 3, "method": "paper-greedy", "progress": False, "random_state": 0, arg: value}
    size = kwargs.pop("size")
    try:
        res = dpsumm.summarize(owners, rng.normal(size=(5, 3)), size, **kwargs)
    except dpsumm.InvalidParameterError as exc:
        assert exc.argument == arg, (exc.argument, str(exc))
    else:
        assert len(res) == size


def test_seeded_runs_are_marked_not_private():
    rng = np.random.default_rng(0)
    owners = [rng.normal(size=(20, 3)) for _ in range(2)]
    res = dpsumm.summarize(owners, rng.normal(size=(8, 3)), 4, random_state=0, progress=False, seed_set=5)
    assert res.seeded and not res.private
    assert "NOT private" in repr(res)
    assert res.privacy.seeded and "NOT private" in res.privacy.table()
    assert res.privacy.to_dict()["private"] is False
    res = dpsumm.summarize(owners, rng.normal(size=(8, 3)), 4, progress=False, seed_set=5)
    assert not res.seeded and res.private and "NOT" not in repr(res)
    assert "NOT private" not in res.privacy.table()


# ----------------------------------------------------------------------------------------- CLI


def _files(tmp_path):
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
    owners, val = _files(tmp_path)
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    line = _one_line_exit_2(main(["summarize", "--owners", *owners, "--validation", val, "--size", "3",
                                  "--out", str(blocker / "sub"), "--no-progress"]), capsys)
    assert "--out" in line
    line = _one_line_exit_2(main(["experiment", "digits", "--out", str(blocker), "--sizes", "5", "--repeats", "1"]), capsys)
    assert "--out" in line


def test_cli_summarize_reports_rows_and_marks_seeded(tmp_path, capsys):
    owners, val = _files(tmp_path)
    out = tmp_path / "out"
    assert main(["summarize", "--owners", *owners, "--validation", val, "--size", "3", "--out", str(out),
                 "--random-state", "0", "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert "20 rows" in captured.out and "NOT private" in captured.out
    report = json.loads((out / "report.json").read_text())
    assert report["private"] is False and report["seeded"] is True and "NOT private" in report["warning"]


def test_cli_flower_missing_owner_file_exits_2(tmp_path, capsys):
    pytest.importorskip("flwr")
    _, val = _files(tmp_path)
    line = _one_line_exit_2(main(["flower", "--owner", f"a={tmp_path / 'missing.npy'}", "--consumer", val,
                                  "--size", "2", "--run", "--insecure"]), capsys)
    assert "missing.npy" in line


@FAST
@given(
    option=st.sampled_from(["--size", "--dim", "--gamma", "--random-state"]),
    value=st.sampled_from(["-1", "0", "nan", "inf", "1e400", "x", "2e30", str(2**70), "-0", "1.5"]),
)
def test_cli_bad_numbers_are_one_line_exit_2(tmp_path_factory, option, value):
    tmp = tmp_path_factory.mktemp("cli")
    owners, val = _files(tmp)
    args = {"--size": "3", "--dim": "16", "--gamma": "0.1", "--random-state": "0", option: value}
    argv = ["summarize", "--owners", *owners, "--validation", val, "--out", str(tmp / "out"), "--no-progress",
            "--method", "paper-greedy"]
    for k, v in args.items():
        argv += [k, v]
    import contextlib
    import io

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(argv)
    if code != 0:
        lines = [ln for ln in err.getvalue().strip().splitlines() if not ln.startswith("read ")]
        assert code == 2 and len(lines) == 1 and lines[0].startswith("dpsumm: error:"), (code, err.getvalue())


def test_cli_account_huge_schedule_answers_without_the_pld(capsys):
    # 3.2e7 MWEM steps (dim 100,000): the PLD would not fit in memory; the tight accountant leaves that
    # candidate out and answers with RDP / Theorem 7 (sound), in seconds.
    assert main(["account", "--size", "5", "--owners", "2", "--dim", "100000", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    tight = out["validation"]["tight"]
    assert tight is not None and 0 < tight <= out["validation"]["kov"]


@pytest.mark.parametrize(
    "argv, argument",
    [
        (["account", "--schedule", "theorem2", "--size", "200", "--owners", "3", "--epsilon", "1"], "seed set"),
        (["account", "--size", "5", "--owners", "2", "--dim", str(2**40)], "dim"),
        (["account", "--size", str(2**70), "--owners", "2"], "size"),
    ],
    ids=["theorem2-seed-set", "dim-cap", "size-cap"],
)
def test_cli_account_absurd_schedules_fail_fast(argv, argument, capsys):
    # Each of these ran for minutes or was killed for memory before the caps; now one line, exit 2.
    line = _one_line_exit_2(main(argv), capsys)
    assert argument in line


class _Slow:
    """Records which thread answered and how many parties were inside handle() at once."""

    def __init__(self, log):
        self.log = log

    def handle(self, message):
        import threading
        import time

        self.log["inside"] += 1
        self.log["peak"] = max(self.log["peak"], self.log["inside"])
        time.sleep(0.05)
        self.log["inside"] -= 1
        self.log["threads"].add(threading.get_ident())
        return message


def test_in_process_parties_answer_concurrently_with_the_same_replies():
    log = {"inside": 0, "peak": 0, "threads": set()}
    msg = Setup(n_features=1, dim=1, gamma=1.0, hash_seed=0, reveal="points")
    parties = {f"p{k}": _Slow(log) for k in range(4)}
    parties["bad"] = _Panicking()
    t = InProcessTransport(parties, max_workers=4)
    out = t.request_many({name: msg for name in reversed(list(parties))})
    assert list(out) == list(reversed(list(parties)))  # keyed in the order asked
    assert isinstance(out["bad"], PartyUnavailable) and all(out[f"p{k}"] is msg for k in range(4))
    assert log["peak"] >= 2 and len(log["threads"]) >= 2
    t.close()
    with pytest.raises(KeyboardInterrupt):  # Ctrl-C inside a party is not contained, from any thread
        InProcessTransport({"p0": _Slow(log), "int": _Interrupted()}, max_workers=2).request_many({"p0": msg, "int": msg})
    serial = InProcessTransport(parties, max_workers=1)
    log["peak"] = 0
    assert list(serial.request_many({name: msg for name in parties})) == list(parties)
    assert log["peak"] == 1
    for bad in (0, -1, 1.5, True):
        with pytest.raises(dpsumm.InvalidParameterError):
            InProcessTransport(parties, max_workers=bad)


def test_summarize_reads_each_owners_rows_once_for_its_input_checks(monkeypatch):
    # Finiteness and the hashing bound come from one parallel read of each owner's rows (issue 22: no second
    # pass over the input for checks).
    from dpsumm import _validation

    rng = np.random.default_rng(0)
    owners = [rng.random((500, 6)).astype(np.float32) for _ in range(3)]
    reads: list[int] = []
    real = _validation._core.finite_max_abs

    def counting(arr, *args, **kwargs):
        reads.extend(k for k, o in enumerate(owners) if np.shares_memory(arr, o))
        return real(arr, *args, **kwargs)

    monkeypatch.setattr(_validation._core, "finite_max_abs", counting)
    dpsumm.summarize(owners, rng.random((40, 6)), 10, gamma=0.5, random_state=0, progress=False)
    assert sorted(reads) == [0, 1, 2]
    # A value beyond float32 is still refused, naming the owners, from that one read.
    big = [o.astype(np.float64) for o in owners]
    big[1][3, 2] = 1e39
    with pytest.raises(dpsumm.InvalidParameterError, match="float32") as info:
        dpsumm.summarize(big, rng.random((40, 6)), 10, gamma=0.5, random_state=0, progress=False)
    assert info.value.argument == "owners"


# ----------------------------------------------------------------------------------------- issue 43: older items


@FAST
@given(count=st.one_of(st.integers(max_value=-1), st.integers(min_value=2**40), st.booleans()),
       method=st.sampled_from(["nominations", "uniform", "central-greedy", "paper"]))
def test_a_seed_set_count_no_run_could_use_is_refused_even_when_no_seed_row_is_drawn(count, method):
    """Was: `seed_set=-5` accepted with nominations at a fixed gamma (no seed row drawn, the count never looked at)."""
    rng = np.random.default_rng(0)
    with pytest.raises(dpsumm.InvalidParameterError) as err:
        dpsumm.summarize([rng.random((50, 3)), rng.random((50, 3))], rng.random((20, 3)), 4, method, seed_set=count,
                         gamma=0.5, progress=False)
    assert err.value.argument == "seed_set"


def test_the_default_validation_delta_fits_a_large_validation_set():
    """Was: with no budget, the default delta_v = 1e-6 refused a validation set of 10^6 rows (1e-6 >= 1/|D_v|). The
    default is now 0.01/|D_v| there (1e-8), the release calibrated and recorded at it; small sets keep 1e-6."""
    from dpsumm.protocols.nominations.method import default_validation_budget

    rng = np.random.default_rng(0)
    owners = [rng.random((100, 2)), rng.random((100, 2))]
    res = dpsumm.summarize(owners, rng.random((1_000_000, 2), dtype=np.float32), 5, dpsumm.Nominations(dim=16),
                           random_state=0, progress=False)
    assert len(res) == 5 and res.privacy.to_dict()["delta"]["validation"] == pytest.approx(1e-8)
    assert res.privacy.epsilon("validation", 1e-8) <= 1.0
    assert default_validation_budget(30).validation_delta == 1e-6
    assert default_validation_budget(10_000).validation_delta == 1e-6
    assert default_validation_budget(20_000).validation_delta == pytest.approx(0.01 / 20_000)
    assert default_validation_budget(None).validation_delta == 1e-6


@pytest.mark.parametrize("delta", ["0.9", "0.05", "0.034"])
def test_a_reporting_validation_delta_at_or_above_one_over_the_rows_is_refused(tmp_path, capsys, delta):
    """Was: `--validation-delta 0.9` with no budget accepted for reporting, printing epsilon 0. With 30 validation
    rows, a delta >= 1/30 is refused naming the flag, before anything runs; 0.01 is taken."""
    rng = np.random.default_rng(0)
    for k in range(2):
        np.save(tmp_path / f"o{k}.npy", rng.random((40, 3)))
    np.save(tmp_path / "v.npy", rng.random((30, 3)))
    base = ["summarize", "--owners", str(tmp_path / "o0.npy"), str(tmp_path / "o1.npy"), "--validation",
            str(tmp_path / "v.npy"), "--size", "4", "--dim", "16", "--no-progress"]
    assert main([*base, "--out", str(tmp_path / "bad"), "--validation-delta", delta]) == 2
    err = capsys.readouterr().err
    assert "--validation-delta" in err and "1/|D_v|" in err
    assert not (tmp_path / "bad" / "summary.npy").exists()
    assert main([*base, "--out", str(tmp_path / "ok"), "--validation-delta", "0.01"]) == 0
