"""Inputs that used to reach a Rust panic, an allocation abort or an hours-long scan in the compiled core
(the audit of rust/src): each is now a DpsummError naming the argument, or a valid result, at once.

Arrays that describe more values than memory holds cost numpy nothing: a zero-size array with a huge
other dimension (``np.empty((2**40, 0))``) or a broadcast view (``np.broadcast_to``, stride 0). A case
that used to abort the process runs in a child interpreter, so that a regression fails one test instead
of killing the run.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpsumm import DpsummError, InvalidParameterError, _core

#: Spawns processes (the inner loop skips them: pytest -m "not slow"; CI runs them).
pytestmark = pytest.mark.slow

CHILD_TIMEOUT = 120


def in_child(code: str) -> dict[str, object]:
    """Run `code` (which binds `call`, a zero-argument function) in a fresh interpreter; report how it ended."""
    src = (
        textwrap.dedent("""
        import json, time
        import numpy as np
        import dpsumm
        from dpsumm import _core, privacy
    """)
        + textwrap.dedent(code)
        + textwrap.dedent("""
        t0 = time.monotonic()
        try:
            out = call()
            res = {"ok": True, "shape": list(np.shape(out)) if out is not None else None}
        except BaseException as e:
            res = {"ok": False, "cls": type(e).__name__, "dpsumm": isinstance(e, dpsumm.DpsummError),
                   "argument": getattr(e, "argument", None), "msg": str(e)[:300]}
        res["seconds"] = time.monotonic() - t0
        print("RESULT " + json.dumps(res))
    """)
    )
    try:
        p = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True, timeout=CHILD_TIMEOUT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"no answer within {CHILD_TIMEOUT} s:\n{code}")
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")]
    assert p.returncode == 0 and lines, f"the child died (exit {p.returncode}):\n{p.stderr[-2000:]}"
    result: dict[str, object] = json.loads(lines[-1][len("RESULT ") :])
    return result


def refused_in_child(code: str, argument: str) -> None:
    res = in_child(code)
    assert not res["ok"], res
    assert res["dpsumm"] and res["cls"] == "InvalidParameterError", res
    assert res["argument"] == argument, res
    assert res["seconds"] < 30, res


def refused(call, argument: str) -> None:
    with pytest.raises(DpsummError) as info:
        call()
    assert isinstance(info.value, InvalidParameterError), info.value
    assert info.value.argument == argument, (info.value.argument, str(info.value))


def test_mwem_marginals_too_large_to_materialise():
    # dim = 2^20 and a grid of 2^20 + 1 points are each allowed; the (dim, |S|) marginals are 8 TiB.
    refused_in_child(
        """
        m = privacy.ProductMWEM(2**20, eta=2 / 2**20, random_state=0)
        call = lambda: m.marginals_
    """,
        "dim",
    )


def test_quantizer_on_zero_size_arrays_with_a_huge_dimension():
    res = in_child("call = lambda: privacy.stochastic_round(np.empty((2**40, 0)), 0.5, dpsumm.privacy.Csprng(0))")
    assert res["ok"] and res["shape"] == [2**40, 0], res
    res = in_child("call = lambda: privacy.quantize_column_sums(np.empty((2**40, 0)), 0.5, dpsumm.privacy.Csprng(0))")
    assert res["ok"] and res["shape"] == [0], res
    refused_in_child(
        "call = lambda: privacy.quantize_column_sums(np.empty((0, 2**45)), 0.5, dpsumm.privacy.Csprng(0))", "values"
    )
    refused_in_child(
        """
        v = np.broadcast_to(np.zeros((1, 1)), (2**44, 1))
        call = lambda: _core.stochastic_round(v, 0.5, _core.Csprng(0))
    """,
        "values",
    )


@pytest.mark.parametrize(
    "call,argument",
    [
        (
            "_core.mmd2(np.broadcast_to(np.zeros((1, 8), np.float32), (2**40, 8)), np.zeros((3, 8), np.float32), 1.0)",
            "A",
        ),
        ("_core.kernel_sum(np.zeros((3, 8)), np.broadcast_to(np.zeros((1, 8)), (2**40, 8)), 1.0)", "B"),
        ("_core.kernel_row_means(np.zeros((3, 8)), np.broadcast_to(np.zeros((1, 8)), (2**40, 8)), 1.0)", "B"),
        ("_core.kernel_sum(np.empty((2**40, 0), np.float32), np.empty((3, 0), np.float32), 1.0)", "A"),
        ("_core.mmd2(np.empty((3, 0), np.float32), np.empty((2**40, 0), np.float32), 1.0)", "A"),
        ("_core.row_dots(np.empty((2**45, 0), np.float32), np.empty(0, np.float32))", "hashes"),
        ("_core.Csprng(0).gaussian_on_grid(np.broadcast_to(np.zeros(1), (2**40,)), 1.0, 1.0)", "values"),
        (
            "_core.ProductMwem(4, 0.5, 'replace-one', _core.Csprng(0)).release(np.broadcast_to(np.zeros(1), (2**40,)), 10, 1, 1.0)",
            "column_sums",
        ),
        ("_core.Csprng(0).exponential_mechanism(np.broadcast_to(np.zeros(1), (2**40,)), 1.0, 1.0)", "scores"),
    ],
)
def test_core_copies_of_huge_views_are_refused(call, argument):
    refused_in_child(f"call = lambda: {call}", argument)


class LyingSequence:
    """A sequence whose len() is far beyond memory (pyo3 reserved len() slots: capacity overflow panic)."""

    def __len__(self) -> int:
        return 2**60

    def __getitem__(self, i: int) -> float:
        if i >= 3:
            raise IndexError(i)
        return 0.0


def test_exponential_mechanism_scores_with_a_lying_length():
    refused(lambda: _core.Csprng(0).exponential_mechanism(LyingSequence(), 1.0, 1.0), "scores")


def test_exponential_mechanism_scores_are_still_any_real_sequence():
    rng = _core.Csprng(0)
    for scores in ([0.0, 1.0], (0.0, 1.0), np.array([0.0, 1.0]), np.array([0, 1]), range(2)):
        assert rng.exponential_mechanism(scores, 1.0, 1.0) in (0, 1)
    for bad in ("01", {0: 1.0}, [0.0, "x"], np.zeros((2, 2)), iter([0.0, 1.0])):
        refused(lambda: rng.exponential_mechanism(bad, 1.0, 1.0), "scores")


def test_a_broadcast_bid_index_too_large_fails_at_once():
    # 2^50 rows of one broadcast row: the codes (2^52 bytes) cannot be allocated; the index used to scan
    # every value for max |h| before trying (hours).
    refused_in_child(
        """
        h = np.broadcast_to(np.zeros((1, 4), np.float32), (2**50, 4))
        call = lambda: _core.BidIndex.from_hashes(h)
    """,
        "X",
    )


def test_finite_max_abs_of_an_empty_array_with_a_huge_row_count_answers_at_once():
    res = in_child("call = lambda: _core.finite_max_abs(np.empty((2**50, 0), np.float32))")
    assert res["ok"] and res["seconds"] < 30, res


DIMS = st.one_of(st.integers(0, 40), st.integers(2**44, 2**46))


@settings(max_examples=40, deadline=None)
@given(
    rows=DIMS,
    cols=DIMS,
    which=st.sampled_from(
        [
            "stochastic_round",
            "quantize_column_sums",
            "row_dots",
            "mmd2",
            "kernel_row_means",
            "finite_max_abs",
            "row_digests",
        ]
    ),
)
def test_zero_size_arrays_give_a_result_or_a_named_error(rows, cols, which):
    """An array with no values (one dimension 0, the other anything) never panics or aborts the core."""
    if rows and cols:
        rows = 0 if rows > cols else rows
        cols = 0 if rows else cols
    shape = (rows, cols)
    x32 = np.empty(shape, np.float32)
    x64 = np.empty(shape, np.float64)
    calls = {
        "stochastic_round": lambda: _core.stochastic_round(x64, 0.5, _core.Csprng(0)),
        "quantize_column_sums": lambda: _core.quantize_column_sums(x32, 0.5, _core.Csprng(0)),
        "row_dots": lambda: _core.row_dots(
            x32, np.empty(cols, np.float32) if cols < 2**20 else np.empty(0, np.float32)
        ),
        "mmd2": lambda: _core.mmd2(x32, np.zeros((2, cols if cols < 64 else 1), np.float32), 1.0),
        "kernel_row_means": lambda: _core.kernel_row_means(
            x32, np.zeros((2, cols if cols < 64 else 1), np.float32), 1.0
        ),
        "finite_max_abs": lambda: _core.finite_max_abs(x32),
        "row_digests": lambda: _core.row_digests(x32),
    }
    try:
        out = calls[which]()
    except DpsummError as e:
        assert e.argument is not None, e
        return
    if which == "stochastic_round":
        assert out.shape == shape
    elif which == "quantize_column_sums":
        assert out.shape == (cols,) and not out.any()
    elif which == "finite_max_abs":
        assert out == 0.0


P = _core.RffProjection(3, 4, 1.0, 0)


X = np.zeros((5, 3), np.float32)


H = np.zeros((5, 4), np.float32)


T = np.zeros(4)


INT_ARGUMENTS = [
    ("n_features", lambda b: _core.RffProjection(b, 4, 1.0, 0)),
    ("dim", lambda b: _core.RffProjection(3, b, 1.0, 0)),
    ("threads", lambda b: P.transform(X, threads=b)),
    ("threads", lambda b: _core.finite_max_abs(X, threads=b)),
    ("threads", lambda b: _core.row_digests(H, threads=b)),
    ("index", lambda b: _core.BidIndex.from_hashes(H).mark_offered(b)),
    ("index", lambda b: _core.BidIndex.from_hashes(H).is_offered(b)),
    ("index", lambda b: _core.BidIndex.from_hashes(H).hash_row(b)),
    ("k", lambda b: _core.greedy_select(H, T, b)),
    ("k", lambda b: _core.stochastic_greedy_select(H, T, b, 1, 0)),
    ("sample_size", lambda b: _core.stochastic_greedy_select(H, T, 2, b, 0)),
    ("seed", lambda b: _core.stochastic_greedy_select(H, T, 2, 1, b)),
    ("q0", lambda b: _core.kernel_greedy(X, np.zeros(5), np.zeros(5), b, 1, 1.0)),
    ("k", lambda b: _core.kernel_greedy(X, np.zeros(5), np.zeros(5), 0, b, 1.0)),
    ("nominees", lambda b: _core.nominate(X, P, T, 1.0, b, 4)),
    ("candidates", lambda b: _core.nominate(X, P, T, 1.0, 2, b)),
    ("sample_seed", lambda b: _core.nominate(X, P, T, 1.0, 2, 4, sample_seed=b)),
    ("block_rows", lambda b: _core.nominate(X, P, T, 1.0, 2, 4, block_rows=b)),
    ("dim", lambda b: _core.ProductMwem(b, 0.5, "replace-one", _core.Csprng(0))),
    ("n_rows", lambda b: _core.ProductMwem(4, 0.5, "replace-one", _core.Csprng(0)).release(T, b, 1, 1.0)),
    ("steps", lambda b: _core.ProductMwem(4, 0.5, "replace-one", _core.Csprng(0)).release(T, 4, b, 1.0)),
    ("n_rows", lambda b: _core.ProductMwem(4, 0.5, "replace-one", _core.Csprng(0))._release_noiseless(T, b, 1)),
]


@pytest.mark.parametrize(
    "bad", [-1, -(2**70), 2**70, 2**200, -(2**200), 1.5, True, "3", None, np.float64(2.0)], ids=repr
)
@pytest.mark.parametrize("argument,call", INT_ARGUMENTS, ids=[f"{a}-{i}" for i, (a, _) in enumerate(INT_ARGUMENTS)])
def test_a_bad_integer_argument_is_a_named_error(argument, call, bad):
    if bad is None and argument in ("threads", "sample_seed"):
        call(bad)  # None is their default
        return
    if bad is None:
        # None for a required int: pyo3's argument conversion (a TypeError), as for any other type.
        with pytest.raises((TypeError, DpsummError)):
            call(bad)
        return
    refused(lambda: call(bad), argument)


def test_integer_arguments_still_accept_numpy_integers_and_the_full_seed_range():
    assert _core.greedy_select(H, T, np.int64(2))[0].tolist() == [0, 1]
    assert _core.stochastic_greedy_select(H, T, 2, 1, 2**64 - 1)[0].shape == (2,)
    assert len(_core.nominate(X, P, T, 1.0, np.int32(2), 4, sample_seed=2**64 - 1, block_rows=np.uint8(2))[0]) == 2
    assert _core.BidIndex.from_hashes(H).hash_row(np.int64(4)).shape == (4,)
