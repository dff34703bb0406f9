"""Interim numpy versions of kernels.greedy_select / kernels.nominate until the Rust kernels land."""
from __future__ import annotations
from dataclasses import dataclass
import numpy as np
from . import _core

@dataclass(frozen=True)
class Nomination:
    indices: np.ndarray
    hashes: np.ndarray
    target: np.ndarray
    n_candidates: int

def greedy_select(H, target, k, taken=None):
    H = np.ascontiguousarray(H, dtype=np.float32)
    taken = np.zeros(len(H), bool) if taken is None else np.array(taken, bool)
    S = np.zeros(H.shape[1]); picks = []; vals = []
    for q in range(k):
        v = (np.asarray(target, np.float64) - (q / (q + 1)) * (S / q if q else 0)).astype(np.float32)
        r = _core.best_row(H, v, taken)
        if r is None:
            break
        i = r[1]; taken[i] = True; picks.append(i); vals.append(r[0]); S += H[i]
    return np.array(picks, dtype=np.int64), np.array(vals)

def nominate(X, hasher, g, *, temperature, nominees, candidates=None):
    H = hasher.transform(X)
    s = H.astype(np.float64) @ np.asarray(g, np.float64)
    w = np.exp((s - s.max()) / temperature); w /= w.sum()
    t = w @ H.astype(np.float64)
    if candidates is not None and candidates < len(H):
        cand = np.sort(np.argsort(-s, kind="stable")[:candidates])
    else:
        cand = np.arange(len(H))
    picks, _ = greedy_select(H[cand], t, min(nominees, len(cand)))
    idx = cand[picks]
    return Nomination(idx, H[idx], t, len(cand))
