"""The nominations protocol's kernels: greedy selection and an owner's streaming nomination.

Checked against the numpy twins in ``dpsumm.reference`` (same indices on random data without near-ties,
scores and targets to 1e-9 or better), a hand-computed case, structural identities (C >= n is the full
greedy; block size and thread count do not change the result) and bad input.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import dpsumm
from dpsumm import reference as ref
from dpsumm.kernels import DEFAULT_CANDIDATE_FACTOR, Nomination, greedy_select, nominate


def random_hashes(n: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Hash-like rows (entries in +-sqrt(2/d)) and a target shaped like a mean of 30 of them."""
    rng = np.random.default_rng(seed)
    H = ((rng.random((n, d)) * 2 - 1) * np.sqrt(2 / d)).astype(np.float32)
    t = H[rng.choice(n, min(n, 30), replace=False)].astype(np.float64).mean(0)
    return H, t


def owner(n: int, f: int, dim: int, seed: int) -> tuple[np.ndarray, dpsumm.RFFHasher, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, f)).astype(np.float32)
    h = dpsumm.RFFHasher(f, dim=dim, gamma=0.5 / f, seed=seed)
    g = h.transform(rng.normal(loc=0.3, size=(60, f))).astype(np.float64).mean(0)
    return X, h, g


# --- greedy_select -----------------------------------------------------------------------------------


@pytest.mark.parametrize("n,d,k", [(1, 5, 1), (300, 7, 300), (2500, 140, 60), (900, 500, 40)])
def test_greedy_equals_numpy_reference(n, d, k):
    H, t = random_hashes(n, d, seed=n + d)
    idx, scores = greedy_select(H, t, k)
    want_idx, want_scores = ref.greedy_select(H, t, k)
    assert idx.dtype == np.int64 and scores.dtype == np.float64
    np.testing.assert_array_equal(idx, want_idx)
    np.testing.assert_allclose(scores, want_scores, rtol=0, atol=1e-9)


def test_greedy_with_taken_rows_equals_reference_and_never_picks_them():
    H, t = random_hashes(1000, 64, seed=1)
    taken = np.zeros(1000, dtype=bool)
    taken[np.random.default_rng(2).choice(1000, 400, replace=False)] = True
    idx, scores = greedy_select(H, t, 700, taken=taken)
    want_idx, want_scores = ref.greedy_select(H, t, 700, taken=taken)
    # Only 600 rows are open: the selection stops there.
    assert len(idx) == 600 and not taken[idx].any() and len(set(idx.tolist())) == 600
    np.testing.assert_array_equal(idx, want_idx)
    np.testing.assert_allclose(scores, want_scores, rtol=0, atol=1e-9)


def test_greedy_hand_computed_three_rows():
    # h0 = (1, 0), h1 = (0, 1), h2 = (0.5, 0.5); t = (0.6, 0.5).
    # Round 0: h.t = 0.6, 0.5, 0.55 -> row 0.
    # Round 1: h.t - h.h0 / 2 = -, 0.5 - 0, 0.55 - 0.25 -> row 1 (0.5).
    # Round 2: row 2: 0.55 - (0.5 + 0.5) / 3 = 0.21666...
    H = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]], dtype=np.float32)
    idx, scores = greedy_select(H, [0.6, 0.5], 3)
    assert idx.tolist() == [0, 1, 2]
    np.testing.assert_allclose(scores, [0.6, 0.5, 0.55 - 1 / 3], rtol=0, atol=1e-15)
    assert greedy_select(H, [0.6, 0.5], 0)[0].tolist() == []


def test_greedy_ties_go_to_the_lowest_index():
    H = np.ones((7, 3), dtype=np.float32)
    assert greedy_select(H, np.ones(3), 7)[0].tolist() == list(range(7))
    H, t = random_hashes(200, 16, seed=3)
    H[150] = H[20]
    idx = greedy_select(H, t, 200)[0].tolist()
    assert idx.index(20) < idx.index(150)


def test_greedy_minimises_the_hashed_mean_distance_better_than_random():
    # A property of the objective: the greedy mean of 50 rows is far closer to the target than a
    # random 50 rows (which would be ~ sqrt(2 / 50) away); 30 random draws, all worse.
    H, t = random_hashes(3000, 64, seed=4)
    idx, _ = greedy_select(H, t, 50)
    greedy_err = np.linalg.norm(H[idx].astype(np.float64).mean(0) - t)
    rng = np.random.default_rng(5)
    random_errs = [np.linalg.norm(H[rng.choice(3000, 50, replace=False)].astype(np.float64).mean(0) - t) for _ in range(30)]
    assert greedy_err < 0.5 * min(random_errs)


# --- nominate ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [None, 5, 2**64 - 1])
@pytest.mark.parametrize("n,dim,T,M,C", [(4000, 64, 0.1, 20, 160), (3000, 140, 0.01, 10, 10), (2000, 32, 1.0, 25, 4000)])
def test_nominate_equals_numpy_reference(n, dim, T, M, C, seed):
    X, h, g = owner(n, 12, dim, seed=n)
    sampling = "top" if seed is None else "weighted"
    got = nominate(X, h, g, temperature=T, nominees=M, candidates=C, sampling=sampling, random_state=seed)
    H = h.transform(X)
    idx, hashes, target, nc = ref.nominate(H, g, T, M, C, sample_seed=seed)
    assert isinstance(got, Nomination)
    np.testing.assert_array_equal(got.indices, idx)
    np.testing.assert_array_equal(got.hashes, hashes)
    np.testing.assert_allclose(got.target, target, rtol=1e-12, atol=1e-15)
    assert got.n_candidates == nc == min(C, n)
    assert got.hashes.dtype == np.float32 and got.target.dtype == np.float64 and got.indices.dtype == np.int64


def test_all_candidates_is_the_greedy_over_every_row():
    X, h, g = owner(1500, 8, 48, seed=7)
    nom = nominate(X, h, g, temperature=0.2, nominees=30, candidates=1500)
    full, _ = greedy_select(h.transform(X), nom.target, 30)
    np.testing.assert_array_equal(nom.indices, full)
    # More candidates than rows is the same thing.
    np.testing.assert_array_equal(nominate(X, h, g, temperature=0.2, nominees=30, candidates=10**9).indices, full)


def test_block_size_and_layout_do_not_change_the_nomination():
    X, h, g = owner(5000, 10, 64, seed=8)
    base = nominate(X, h, g, temperature=0.05, nominees=20, candidates=100, random_state=3)
    for B in (1, 17, 1000, 65536):
        other = nominate(X, h, g, temperature=0.05, nominees=20, candidates=100, random_state=3, block_rows=B)
        np.testing.assert_array_equal(other.indices, base.indices)
        np.testing.assert_array_equal(other.hashes, base.hashes)
        np.testing.assert_allclose(other.target, base.target, rtol=1e-13, atol=1e-16)
    for variant in (np.asfortranarray(X), X.astype(np.float64), np.asfortranarray(X.astype(np.float64))):
        other = nominate(variant, h, g, temperature=0.05, nominees=20, candidates=100, random_state=3)
        np.testing.assert_array_equal(other.indices, base.indices)
        np.testing.assert_array_equal(other.target, base.target)


def test_nomination_does_not_depend_on_the_thread_count():
    script = (
        "import numpy as np, dpsumm, hashlib\n"
        "from dpsumm.kernels import nominate, greedy_select\n"
        "rng = np.random.default_rng(0)\n"
        "X = rng.normal(size=(60000, 8)).astype(np.float32)\n"
        "h = dpsumm.RFFHasher(8, dim=40, gamma=0.1, seed=0)\n"
        "g = h.transform(X[:50] + 0.5).astype(np.float64).mean(0)\n"
        "n = nominate(X, h, g, temperature=0.05, nominees=30, candidates=240, random_state=7)\n"
        "i, s = greedy_select(h.transform(X[:20000]), g, 50)\n"
        "print(hashlib.sha256(n.indices.tobytes() + n.hashes.tobytes() + n.target.tobytes() + i.tobytes() + s.tobytes()).hexdigest())\n"
    )
    digests = set()
    for threads in ("1", "2", "3"):
        env = dict(os.environ, RAYON_NUM_THREADS=threads)
        out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
        digests.add(out.stdout.strip())
    assert len(digests) == 1


def test_extreme_temperatures_are_numerically_safe():
    X, h, g = owner(3000, 6, 32, seed=9)
    H = h.transform(X).astype(np.float64)
    s = H @ g
    cold = nominate(X, h, g, temperature=1e-6, nominees=5, candidates=40)
    # The scores' top gap is far above 1e-6 * 700 here, so the weight is all on the best row.
    assert np.sort(s)[-1] - np.sort(s)[-2] > 1e-3
    np.testing.assert_allclose(cold.target, H[np.argmax(s)], rtol=0, atol=1e-12)
    hot = nominate(X, h, g, temperature=1e6, nominees=5, candidates=40)
    np.testing.assert_allclose(hot.target, H.mean(0), rtol=0, atol=1e-6)
    for nom in (cold, hot):
        assert np.isfinite(nom.target).all() and len(nom.indices) == 5


def test_fewer_rows_than_nominees_and_default_candidates():
    X, h, g = owner(4, 3, 8, seed=10)
    nom = nominate(X, h, g, temperature=0.1, nominees=9)
    assert sorted(nom.indices.tolist()) == [0, 1, 2, 3] and nom.n_candidates == 4 and nom.hashes.shape == (4, 8)
    X, h, g = owner(1000, 3, 8, seed=11)
    assert nominate(X, h, g, temperature=0.1, nominees=9).n_candidates == DEFAULT_CANDIDATE_FACTOR * 9


def test_nomination_is_frozen():
    X, h, g = owner(50, 3, 8, seed=12)
    nom = nominate(X, h, g, temperature=0.1, nominees=3)
    with pytest.raises(AttributeError):
        nom.n_candidates = 7  # type: ignore[misc]


# --- bad input ---------------------------------------------------------------------------------------

_X, _H, _G = owner(30, 4, 8, seed=13)
_GOOD = {"temperature": 0.1, "nominees": 3, "candidates": 6}

_bad_nominate = st.sampled_from([
    ("X", lambda: (np.zeros((30, 5), np.float32), _H, _G, _GOOD)),
    ("X", lambda: (np.zeros((0, 4), np.float32), _H, _G, _GOOD)),
    ("X", lambda: (np.zeros(4, np.float32), _H, _G, _GOOD)),
    ("X", lambda: (np.array([["a"] * 4]), _H, _G, _GOOD)),
    ("X", lambda: (np.where(np.arange(120).reshape(30, 4) == 77, np.nan, _X), _H, _G, _GOOD)),
    ("X", lambda: (np.full((30, 4), 1e300), _H, _G, _GOOD)),
    ("hasher", lambda: (_X, "not a hasher", _G, _GOOD)),
    ("g_tilde", lambda: (_X, _H, _G[:7], _GOOD)),
    ("g_tilde", lambda: (_X, _H, np.full(8, np.inf), _GOOD)),
    ("g_tilde", lambda: (_X, _H, ["x"] * 8, _GOOD)),
    ("temperature", lambda: (_X, _H, _G, {**_GOOD, "temperature": 0.0})),
    ("temperature", lambda: (_X, _H, _G, {**_GOOD, "temperature": -1.0})),
    ("temperature", lambda: (_X, _H, _G, {**_GOOD, "temperature": float("nan")})),
    ("temperature", lambda: (_X, _H, _G, {**_GOOD, "temperature": "hot"})),
    ("nominees", lambda: (_X, _H, _G, {**_GOOD, "nominees": 0})),
    ("nominees", lambda: (_X, _H, _G, {**_GOOD, "nominees": 2.5})),
    ("nominees", lambda: (_X, _H, _G, {**_GOOD, "nominees": True})),
    ("candidates", lambda: (_X, _H, _G, {**_GOOD, "candidates": 2})),
    ("candidates", lambda: (_X, _H, _G, {**_GOOD, "candidates": 2**70})),
    ("block_rows", lambda: (_X, _H, _G, {**_GOOD, "block_rows": 0})),
    ("block_rows", lambda: (_X, _H, _G, {**_GOOD, "block_rows": 2**17})),
    ("sampling", lambda: (_X, _H, _G, {**_GOOD, "sampling": "random"})),
    ("random_state", lambda: (_X, _H, _G, {**_GOOD, "random_state": -1})),
    ("random_state", lambda: (_X, _H, _G, {**_GOOD, "random_state": 2**64})),
    ("random_state", lambda: (_X, _H, _G, {**_GOOD, "random_state": 1.5})),
])


@given(_bad_nominate)
def test_nominate_bad_input_names_the_argument(case):
    name, make = case
    X, h, g, kw = make()
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        nominate(X, h, g, **kw)
    assert e.value.argument == name


@given(
    n=st.integers(0, 20),
    d=st.integers(0, 6),
    k=st.one_of(st.integers(-5, -1), st.floats(allow_nan=True), st.just(True)),
)
def test_greedy_bad_k_is_rejected(n, d, k):
    H = np.zeros((n, max(d, 1)), np.float32)
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        greedy_select(H, np.zeros(max(d, 1)), k)
    assert e.value.argument == "k"


@given(st.data())
def test_greedy_bad_arrays_name_the_argument(data):
    n = data.draw(st.integers(1, 12))
    d = data.draw(st.integers(1, 6))
    H = np.random.default_rng(n * 7 + d).random((n, d)).astype(np.float32)
    t = np.zeros(d)
    kind = data.draw(st.sampled_from(["nan_hash", "inf_target", "target_len", "hash_1d", "hash_str", "no_cols",
                                       "taken_len", "taken_dtype"]))
    if kind == "nan_hash":
        H[data.draw(st.integers(0, n - 1)), data.draw(st.integers(0, d - 1))] = np.nan
        args, name = (H, t, 1, None), "hashes"
    elif kind == "inf_target":
        t[data.draw(st.integers(0, d - 1))] = data.draw(st.sampled_from([np.inf, -np.inf, np.nan]))
        args, name = (H, t, 1, None), "target"
    elif kind == "target_len":
        args, name = (H, np.zeros(d + data.draw(st.integers(1, 3))), 1, None), "target"
    elif kind == "hash_1d":
        args, name = (H.ravel(), t, 1, None), "hashes"
    elif kind == "hash_str":
        args, name = (H.astype(str), t, 1, None), "hashes"
    elif kind == "no_cols":
        args, name = (np.zeros((n, 0), np.float32), np.zeros(0), 1, None), "hashes"
    elif kind == "taken_len":
        args, name = (H, t, 1, np.zeros(n + 1, bool)), "taken"
    else:
        args, name = (H, t, 1, np.zeros(n, np.int64)), "taken"
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        greedy_select(*args)
    assert e.value.argument == name


def test_results_depend_only_on_the_inputs():
    # Two calls, same bytes (no hidden state between calls).
    X, h, g = owner(2000, 5, 16, seed=14)
    a = nominate(X, h, g, temperature=0.1, nominees=7, candidates=50, random_state=1)
    b = nominate(X, h, g, temperature=0.1, nominees=7, candidates=50, random_state=1)
    digest = lambda n: hashlib.sha256(n.indices.tobytes() + n.hashes.tobytes() + n.target.tobytes()).hexdigest()  # noqa: E731
    assert digest(a) == digest(b)


def test_weighted_candidates_are_a_sample_proportional_to_the_weights():
    # One candidate from 3 rows over 3000 seeds: row i is picked with probability w_i / sum w, where
    # w = exp(s / T). Chi-square goodness of fit at the 0.1 % level (2 degrees of freedom: 13.8).
    X, h, g = owner(3, 4, 16, seed=15)
    H = h.transform(X).astype(np.float64)
    T = float(np.ptp(H @ g))  # weights between 1 and e: every row is likely enough
    w = np.exp((H @ g - (H @ g).max()) / T)
    p = w / w.sum()
    assert p.min() > 0.05  # every cell has an expected count above 150
    counts = np.zeros(3)
    for seed in range(3000):
        nom = nominate(X, h, g, temperature=T, nominees=1, candidates=1, random_state=seed)
        counts[nom.indices[0]] += 1
    chi2 = float((((counts - 3000 * p) ** 2) / (3000 * p)).sum())
    assert chi2 < 13.8, (counts, 3000 * p)


def test_top_sampling_keeps_the_best_scores():
    X, h, g = owner(2000, 6, 32, seed=16)
    s = h.transform(X).astype(np.float64) @ g
    nom = nominate(X, h, g, temperature=0.1, nominees=10, candidates=10, sampling="top")
    assert sorted(nom.indices.tolist()) == sorted(np.argsort(-s)[:10].tolist())


# ------------------------------------------------------------------------- stochastic greedy (issue 15)

from dpsumm.kernels import stochastic_greedy_select, stochastic_sample_size  # noqa: E402


@pytest.mark.parametrize("n,d,k,s,seed", [(300, 16, 40, 7, 0), (1000, 64, 100, 25, 2**64 - 1), (50, 8, 80, 3, 12345)])
def test_stochastic_greedy_equals_numpy_reference(n, d, k, s, seed):
    H, t = random_hashes(n, d, seed=n)
    idx, scores = stochastic_greedy_select(H, t, k, s, random_state=seed)
    ridx, rscores = ref.stochastic_greedy_select(H, t, k, s, seed)
    np.testing.assert_array_equal(idx, ridx)
    np.testing.assert_allclose(scores, rscores, rtol=1e-10, atol=1e-12)
    assert len(idx) == min(k, n) and len(set(idx.tolist())) == len(idx)


def test_stochastic_greedy_sampling_every_row_is_the_exact_greedy():
    H, t = random_hashes(800, 32, seed=3)
    exact, escores = greedy_select(H, t, 60)
    idx, scores = stochastic_greedy_select(H, t, 60, 800, random_state=9)
    np.testing.assert_array_equal(idx, exact)
    np.testing.assert_allclose(scores, escores, rtol=1e-10, atol=1e-12)


def test_stochastic_greedy_is_deterministic_and_depends_on_the_seed():
    H, t = random_hashes(2000, 24, seed=4)
    a = stochastic_greedy_select(H, t, 100, 20, random_state=1)
    b = stochastic_greedy_select(H, t, 100, 20, random_state=1)
    c = stochastic_greedy_select(H, t, 100, 20, random_state=2)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert not np.array_equal(a[0], c[0])


@pytest.mark.parametrize("seed", [None, 7])
@pytest.mark.parametrize("factor", [0.5, 3.0])
def test_nominate_with_stochastic_greedy_equals_numpy_reference(seed, factor):
    X, h, g = owner(3000, 12, 64, seed=21)
    sampling = "top" if seed is None else "weighted"
    got = nominate(X, h, g, temperature=0.1, nominees=40, candidates=320, sampling=sampling, random_state=seed,
                   greedy_sample_factor=factor)
    idx, hashes, target, nc = ref.nominate(h.transform(X), g, 0.1, 40, 320, sample_seed=seed, greedy_sample_factor=factor)
    np.testing.assert_array_equal(got.indices, idx)
    np.testing.assert_array_equal(got.hashes, hashes)
    assert got.n_candidates == nc == 320


def test_stochastic_sample_size_hand_cases():
    assert stochastic_sample_size(8000, 2000, 8.0) == 32  # the default at size 1000: C/M = 4, r = 8
    assert stochastic_sample_size(8000, 2000, np.log(100)) == 19  # Mirzasoleiman et al.'s eps = 0.01
    assert stochastic_sample_size(10, 20, 3.0) == 3  # M capped at n: n/min(M, n) = 1
    assert stochastic_sample_size(10, 5, 9.0) == 10  # capped at n
    assert stochastic_sample_size(0, 5, 1.0) == 0
    assert ref.stochastic_sample_size(8000, 2000, 8.0) == 32


@pytest.mark.parametrize("kw, arg", [
    (dict(sample_size=0), "sample_size"), (dict(sample_size=-3), "sample_size"), (dict(k=-1), "k"),
    (dict(random_state=-1), "random_state"), (dict(random_state=2**64), "random_state"),
    (dict(random_state=1.5), "random_state"), (dict(target=np.full(16, np.nan)), "target"),
])
def test_stochastic_greedy_bad_input_names_the_argument(kw, arg):
    H, t = random_hashes(30, 16, seed=1)
    args = dict(hashes=H, target=t, k=5, sample_size=4, random_state=0)
    args.update(kw)
    with pytest.raises(dpsumm.DpsummError) as info:
        stochastic_greedy_select(**args)
    assert info.value.argument == arg


@given(st.one_of(st.floats(max_value=0.0), st.just(float("nan")), st.just(float("inf")), st.just(True)))
def test_nominate_bad_greedy_sample_factor_is_rejected(factor):
    X, h, g = owner(50, 4, 8, seed=2)
    with pytest.raises(dpsumm.DpsummError) as info:
        nominate(X, h, g, temperature=0.1, nominees=5, greedy_sample_factor=factor)
    assert info.value.argument == "greedy_sample_factor"


# ------------------------------------------------------------------ the exact-kernel greedy (rust/src/kernel_greedy.rs)


@pytest.mark.parametrize("n,f,q0,k", [(500, 6, 0, 40), (400, 64, 3, 60), (300, 300, 0, 30)])
def test_exact_kernel_greedy_equals_numpy_reference(n, f, q0, k):
    """The Rust greedy picks the numpy twin's rows, and its gains agree to float64 rounding; 64 and 300 features
    take the two dot-product paths (four rows at a time, one at a time)."""
    from dpsumm import _core

    rng = np.random.default_rng(n + f)
    X = rng.random((n, f), dtype=np.float32)
    V = rng.random((50, f), dtype=np.float32)
    gamma = 1.0 / f
    kv = ref.kernel_row_means(X, V, gamma)
    ks0 = ref.kernel_row_means(X, V[:q0], gamma) * q0 if q0 else np.zeros(n)
    idx, vals = _core.kernel_greedy(X, np.ascontiguousarray(kv), np.ascontiguousarray(ks0), q0, k, gamma)
    ridx, rvals = ref.kernel_greedy(X, kv, ks0, q0, k, gamma)
    assert list(idx) == list(ridx)
    np.testing.assert_allclose(vals, rvals, rtol=0, atol=1e-12)
