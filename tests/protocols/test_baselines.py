"""dpsumm.protocols.baselines: the exact and central greedy against their definitions, uniform shares, seed rows."""

from __future__ import annotations

import numpy as np

import dpsumm
from federation_data import blobs

KW = dict(gamma=0.3, progress=False)


def brute_force_central_greedy(owners, validation, size, hasher):
    """Greedy on J's hashed increment, written out: every candidate's score recomputed from scratch."""
    H = [hasher.transform(o).astype(np.float64) for o in owners]
    g = hasher.transform(validation).astype(np.float64).mean(0)
    chosen: list[tuple[int, int]] = []
    for _ in range(size):
        q = len(chosen)
        mean_s = np.mean([H[k][i] for k, i in chosen], axis=0) if chosen else np.zeros_like(g)
        best = None
        for k, Hk in enumerate(H):
            for i in range(len(Hk)):
                if (k, i) in chosen:
                    continue
                score = Hk[i] @ g - q / (q + 1) * (Hk[i] @ mean_s)
                if best is None or score > best[0] + 1e-12:
                    best = (score, k, i)
        chosen.append((best[1], best[2]))
    return chosen


def test_central_greedy_equals_brute_force():
    owners, validation = blobs(seed=7, K=3, n=25)
    res = dpsumm.summarize(owners, validation, 12, method=dpsumm.CentralGreedy(dim=64), **KW)
    hasher = res.hasher
    assert list(zip(res.owner.tolist(), res.index.tolist())) == brute_force_central_greedy(
        owners, validation, 12, hasher
    )
    assert res.privacy is None and res.accessed.total == sum(len(o) for o in owners)


def test_exact_and_central_greedy_keep_no_seed_rows_paper_greedy_does():
    owners, validation = blobs(seed=2)
    seed_rows = np.random.default_rng(0).uniform(-1, 3, size=(20, 5))
    a = dpsumm.summarize(owners, validation, 10, method=dpsumm.ExactGreedy(dim=64), seed_set=seed_rows, **KW)
    b = dpsumm.summarize(owners, validation, 10, method=dpsumm.ExactGreedy(dim=64), seed_set=seed_rows[:3], **KW)
    assert np.array_equal(a.index, b.index) and np.array_equal(a.owner, b.owner)  # the seed set plays no part
    c = dpsumm.summarize(owners, validation, 10, method=dpsumm.PaperGreedy(dim=64), seed_set=seed_rows, **KW)
    d = dpsumm.summarize(owners, validation, 10, method=dpsumm.PaperGreedy(dim=64), seed_set=seed_rows[:3], **KW)
    assert not (np.array_equal(c.index, d.index) and np.array_equal(c.owner, d.owner))


def blobs_protocol(seed=0, K=4, n=60, f=5):
    rng = np.random.default_rng(seed)
    owners = [rng.normal(loc=k * 0.7, scale=0.5, size=(n, f)) for k in range(K)]
    validation = rng.normal(loc=1.0, scale=0.5, size=(40, f))
    seed_set = rng.uniform(-1, 3, size=(20, f))
    return owners, validation, seed_set


def J(S, V, gamma):
    """The paper's objective (Eq. 3) up to a constant: -MMD^2(S, V) with the exact kernel."""
    return -dpsumm.reference.mmd2(S, V, gamma)


def test_exact_greedy_matches_its_definition():
    owners, validation, seed_set = blobs_protocol(K=3, n=30)
    res = dpsumm.summarize(owners, validation, 8, method="exact-greedy", gamma=0.3, progress=False)
    X = np.concatenate(owners)
    S: list[np.ndarray] = []  # exact greedy keeps no seed rows in the summary
    chosen = []
    for _ in range(8):
        gains = [(-np.inf if i in chosen else J(np.array(S + [X[i]]), validation, 0.3)) for i in range(len(X))]
        i = int(np.argmax(gains))
        chosen.append(i)
        S.append(X[i])
    got = [k * 30 + i for k, i in zip(res.owner, res.index)]
    assert got == chosen


def test_uniform_takes_equal_shares():
    owners, validation, seed_set = blobs_protocol(K=4, n=60)
    res = dpsumm.summarize(owners, validation, 42, method="uniform", seed_set=seed_set, random_state=3, progress=False)
    counts = np.bincount(res.owner, minlength=4)
    assert counts.sum() == 42 and counts.min() == 10 and counts.max() == 11
    assert len(set(zip(res.owner.tolist(), res.index.tolist()))) == 42
    # An owner with too few rows gives all it has; the rest is spread.
    small = [owners[0][:3]] + owners[1:]
    res = dpsumm.summarize(small, validation, 40, method="uniform", seed_set=seed_set, random_state=3, progress=False)
    assert np.bincount(res.owner, minlength=4)[0] == 3 and len(res) == 40
