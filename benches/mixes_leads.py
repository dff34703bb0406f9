"""Leads for closing the MNIST mixes without public attributes: cell rules other than
one score along the consumer's witness, measured on the pool as ``benches/testbeds_pool.py`` counts it.

A prototype, not a dpsumm purchase: it replays a cell purchase's arithmetic in one process, with every release drawn
from the library's CSPRNG samplers at its calibration (``dpsumm.privacy``: the owners' counts and hash sums at the
owners' ``(1, 1e-6)``; the consumer's releases at shares of ``epsilon_v = 1``), the library's own post-processing
(``owner_groups``, ``label_cells``, ``quotas_with_reserve``) and the aggregator's exact-kernel greedy over the 3p
rows bought. What it leaves out: the owners' herding inside a cell (sales are uniform inside a cell), the merging of
bins, the protocol's messages. Rules (``--rules``):

* ``witness``: the direction purchase's rule (``ByDirection()``: the consumer's clipped kernel mean in 256 random
  features at the seed rows' median gamma, ``epsilon_v / 2``; 12 bins of the score); the replica, to compare with
  the library's own figures in ``pool-mixes``.
* ``witness[dim=D,e=E,bins=B]``: the witness in ``D`` random features instead of ``KERNEL_DIM`` (its noise's norm
  grows as ``sqrt(D)``), at ``E epsilon_v`` (default 0.5), ``B`` bins (default 12).
* ``seedcentres[k=K,b=B,e=E]``: keys from the public seed rows alone: a row's nearest of ``K`` k-means centres of
  the seed rows in the witness features (the lowest inertia of ``SEED_KMEANS_RESTARTS`` k-means++ starts; no
  budget), crossed with ``B`` bins of the witness at ``E epsilon_v`` (default 0.5) when ``B > 1``; the histogram
  spends the rest (all of ``epsilon_v`` when ``B = 1``).
* ``centres[r=R,k=J,rounds=T]``: the consumer's own DP centres in a low-dimensional public space: the 256 random
  features projected on the top ``R`` principal directions of the centred public seed rows; ``J`` public centres
  from k-means of the seed rows in that space start ``T`` Lloyd rounds over ``D_v`` (each round the consumer
  releases its clipped per-centre sums and counts, L2 sensitivity ``sqrt(4 C^2 + 2)`` under replace-one, discrete
  Gaussian at ``epsilon_v / (2 T)``, ``delta_v / T``); a row's key is its nearest centre among the consumer's moved
  centres (those whose released count reaches 3 sigma; their distance corrected for the noise's ``E ||z||^2``) and
  the fixed public seed centres. The histogram spends the other ``epsilon_v / 2``. ``r=0``: the whole 256-feature
  space (no projection).
* ``twodir[b1=B1,b2=B2,span2=LO:HI,e=E]``: two released directions (:func:`twodir_rule`), ``E epsilon_v`` each
  (default 0.25), the histogram the rest.
* ``fisher[lam=L]``: the released witness whitened by the public seed rows' covariance (:func:`fisher_rule`).
* ``...+per-key-centres``: the owners release their hash sums per key (:func:`purchase`).
* ``...+exact-directions``: a ceiling, NOT private: the directions released at epsilon 100 (their noise negligible),
  the histogram and the owners' releases as in the private rule: what the consumer's noise costs.
* ``centres+witness[...]``: the consumer's centres crossed with 3 bins of the witness score (``epsilon_v / 4``
  each to the witness and the centres).
* ``logistic[r=R,lam=L]``: a density-ratio score: a DP logistic regression of the consumer's rows against the
  public seed rows (objective perturbation, ``dpsumm.dp_erm``, ``epsilon_v / 2``) in the seed rows' top-``R``
  principal space of the witness features; 12 bins of its score (:func:`logistic_rule`).
  ``logistic-own[r=R,a=A,lam=L]``: the same in the owners' principal space (:func:`owner_pca_map`).
* ``adaptive[fine=F,bins=B,e1=E]``: bins that adapt to the consumer's released histogram over ``F`` fine bins of
  the witness score (``E epsilon_v``; :func:`adaptive_rule`).
* ``ownpcs[r=R,a=A,e=E,bins=B,b2=B2]``: the witness (and with ``b2 > 1`` a second direction as ``twodir``'s) in the
  top-``R`` principal space of the owners' pooled second moment, released by the owners inside their one release
  at weight ``A`` (``a=0``: the exact matrix, a ceiling, NOT private; :func:`owner_pca_map`).
* ``ownercentres[k=K,b=B,rounds=T,share=S]``: keys from ``K`` centres of the owners' pooled rows (``rounds=0``:
  exact k-means, a ceiling, NOT private; ``T > 0``: federated DP Lloyd rounds at ``S`` of the owners' budget;
  :func:`owner_centre_keys`), crossed with ``B`` witness bins when ``B > 1``.
* ``boughtcentres[u=U,k=K,b=B]``: keys from ``K`` k-means centres of ``U p`` rows bought first, uniformly at random
  over the owners' rows (no release: rows sold; :func:`bought_centre_keys`); the other ``(3 - U) p`` rows bought by
  these cells (crossed with ``B`` witness bins when ``B > 1``; else the histogram spends all of ``epsilon_v``).
* ``witnesscentres[u=U,k=K]``: two stages: the witness purchase of ``U p`` rows (direction ``epsilon_v / 2``,
  histogram ``epsilon_v / 4``, the owners' release at half their budget), then keys from ``K`` k-means centres of
  the rows it bought, a histogram at ``epsilon_v / 4`` and the other ``(3 - U) p`` rows by those cells (the owners'
  second release at the other half).
* ``...+groups=resolution``: the owners grouped as ``ByDirection`` groups them (at the seed rows' resolution when
  the histogram can pay for the groups); ``...+groups=one``: every owner in one group (the cells are the keys
  alone, each bought from the owners in proportion to their released counts of it). Default: every pair the
  groups' test passes joins.

Seeded: reproducible and NOT private. Writes ``--out/leads-TAG.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import re
import sys
import time
import warnings
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import testbeds  # noqa: E402
import testbeds_pool  # noqa: E402
from dpsumm import accounting  # noqa: E402
from dpsumm.hashing import RFFHasher  # noqa: E402
from dpsumm.kernels import exact_greedy  # noqa: E402
from dpsumm.metrics import offdiagonal_kernel_mean, population_mmd2  # noqa: E402
from dpsumm.preprocessing import median_gamma  # noqa: E402
from dpsumm.privacy import (  # noqa: E402
    check_random_state,
    count_release_event,  # noqa: E402
    gaussian_mean_release,
    gaussian_on_grid,
    laplace_count_release,
)
from dpsumm.protocols.nominations.by_direction import (  # noqa: E402
    KERNEL_DIM,
    bin_edges,
    clipped_mean,
    direction_sensitivity,
    kernel_gamma,
    public_geometry,
)
from dpsumm.protocols.nominations.cell_messages import owner_release_calibration  # noqa: E402
from dpsumm.protocols.nominations.cells import (  # noqa: E402
    CELL_DIM,
    label_cells,
    owner_groups,
    quotas_with_reserve,
    seed_split_distance,
)

DELTA = 1e-6
EPS_V = 1.0
OWNER_EPS = 1.0
#: The directions' epsilon in the ``+exact-directions`` ceiling (noise negligible against the rows' spread).
NOISELESS_EPS = 100.0
#: k-means++ starts over the public seed rows (the one of lowest inertia is kept).
SEED_KMEANS_RESTARTS = 10
#: A cell's per-key centre is used when its noise's expected norm is at most this (else its owners' whole means).
PER_KEY_NOISE = 0.1


@dataclass
class Ctx:
    """One repeat of one bed: the split, the public seed rows, the spaces, the exact greedy's figure."""

    bd: testbeds.BedData
    gamma: float
    p: int
    owners: list[np.ndarray]
    val: np.ndarray
    seed: np.ndarray
    wanted: np.ndarray
    F_owners: list[np.ndarray]  # 256 random features at the seed rows' median gamma (the witness space)
    F_val: np.ndarray
    F_seed: np.ndarray
    H_sums: np.ndarray  # each owner's exact sum of the cells' 64-d h1
    H_owners: list[np.ndarray]  # every owner row's 64-d h1 (for per-key sums)
    H_val: np.ndarray
    H_seed: np.ndarray  # the seed rows' 64-d h1 (the owner groups' resolution, as the library's)
    exact_pop: float
    exact_wanted: int
    held_term: float
    repeat: int


def make_ctx(bed: str, repeat: int, p: int, data: str | None) -> Ctx:
    bd = testbeds.load_bed_data(bed, repeat, data)
    s = bd.split
    gamma = float(median_gamma(s.seed_set))
    owners = [np.ascontiguousarray(o, np.float32) for o in s.owners]
    val = np.ascontiguousarray(s.validation, np.float32)
    seed = np.ascontiguousarray(s.seed_set, np.float32)
    nf = val.shape[1]
    fmap = RFFHasher(nf, dim=KERNEL_DIM, gamma=kernel_gamma(seed), seed=f"direction:leads-{repeat}")
    hmap = RFFHasher(nf, dim=CELL_DIM, gamma=gamma, seed=f"cells:leads-{repeat}")
    F_owners = [np.asarray(fmap.transform(o), np.float64) for o in owners]
    H_owners = [np.asarray(hmap.transform(o), np.float64) for o in owners]
    held_term = offdiagonal_kernel_mean(s.test, gamma)
    ex, _ = exact_greedy(owners, val, np.zeros((0, nf), np.float32), p, gamma)
    pts = np.asarray([owners[k][i] for k, i in ex])
    wanted = testbeds_pool.wanted_components(bd)
    exact_wanted = sum(int(np.isin(bd.owner_cells[k][i], wanted)) for k, i in ex)
    return Ctx(
        bd=bd,
        gamma=gamma,
        p=p,
        owners=owners,
        val=val,
        seed=seed,
        wanted=wanted,
        F_owners=F_owners,
        F_val=np.asarray(fmap.transform(val), np.float64),
        F_seed=np.asarray(fmap.transform(seed), np.float64),
        H_sums=np.array([h.sum(0) for h in H_owners]),
        H_owners=H_owners,
        H_val=np.asarray(hmap.transform(val), np.float64),
        H_seed=np.asarray(hmap.transform(seed), np.float64),
        exact_pop=float(population_mmd2(pts, s.test, gamma, held_out_term=held_term)),
        exact_wanted=exact_wanted,
        held_term=held_term,
        repeat=repeat,
    )


# ------------------------------------------------------------------------------------------------ cell rules


def witness_rule(ctx: Ctx, rng: Any, eps: float, bins: int) -> tuple[list[np.ndarray], np.ndarray, int]:
    """ByDirection()'s keys: the bin of each row's score along the consumer's released kernel mean."""
    centre, clip = public_geometry(ctx.F_seed, "kernel")
    n = len(ctx.F_val)
    cal = accounting.calibrate_gaussian(eps, DELTA, sensitivity=direction_sensitivity(clip, n), dim=ctx.F_val.shape[1])
    noisy = gaussian_mean_release(clipped_mean(ctx.F_val, centre, clip), cal, rng)
    w = noisy / max(float(np.linalg.norm(noisy)), 1e-300)
    edges = bin_edges(ctx.F_seed, centre, w, bins)

    def key(F: np.ndarray) -> np.ndarray:
        return np.searchsorted(edges, (F - centre) @ w, side="right").astype(np.int64)

    return [key(F) for F in ctx.F_owners], key(ctx.F_val), bins


def witness_dim_rule(ctx: Ctx, rng: Any, eps: float, bins: int, dim: int) -> tuple[list[np.ndarray], np.ndarray, int]:
    """The witness in ``dim`` random features (instead of ``KERNEL_DIM``): the direction's noise norm grows as
    ``sqrt(dim)``, the witness's own norm does not."""
    if dim == KERNEL_DIM:
        return witness_rule(ctx, rng, eps, bins)
    fmap = RFFHasher(ctx.val.shape[1], dim=dim, gamma=kernel_gamma(ctx.seed), seed=f"direction:leads-{ctx.repeat}")
    sub = dataclasses.replace(
        ctx,
        F_owners=[np.asarray(fmap.transform(o), np.float64) for o in ctx.owners],
        F_val=np.asarray(fmap.transform(ctx.val), np.float64),
        F_seed=np.asarray(fmap.transform(ctx.seed), np.float64),
    )
    return witness_rule(sub, rng, eps, bins)


def _crossed_with_witness(
    ctx: Ctx, rng: Any, dir_eps: Any, ko: list[np.ndarray], kv: np.ndarray, L: int, b: int
) -> tuple[list[np.ndarray], np.ndarray, int, float]:
    """Keys crossed with ``b`` bins of the witness at half of ``epsilon_v`` when ``b > 1`` (the histogram then spends
    the other half), else unchanged with all of ``epsilon_v`` on the histogram."""
    if b <= 1:
        return ko, kv, L, EPS_V
    wo, wv, _ = witness_rule(ctx, rng, dir_eps(EPS_V / 2), b)
    return [a * b + w for a, w in zip(ko, wo)], kv * b + wv, L * b, EPS_V / 2


def _best_kmeans(X: np.ndarray, k: int, repeat: int) -> np.ndarray:
    """The lowest-inertia centres of ``SEED_KMEANS_RESTARTS`` k-means++ starts over ``X`` (post-processing)."""
    best, C = math.inf, np.zeros((0, X.shape[1]))
    for t in range(SEED_KMEANS_RESTARTS):
        Ct = _kmeans(X, k, 1000 * t + repeat)
        inertia = float(np.min(((X[:, None, :] - Ct[None]) ** 2).sum(-1), 1).sum())
        if inertia < best:
            best, C = inertia, Ct
    return C


def seed_centre_keys(ctx: Ctx, k: int) -> tuple[list[np.ndarray], np.ndarray, int]:
    """Public keys from the seed rows alone (no budget): a row's nearest of ``k`` k-means centres of the public seed
    rows in the witness features."""
    C = _best_kmeans(ctx.F_seed, k, ctx.repeat)
    cc = (C * C).sum(1)

    def key(F: np.ndarray) -> np.ndarray:
        return np.argmin(cc[None] - 2 * F @ C.T, 1).astype(np.int64)

    return [key(F) for F in ctx.F_owners], key(ctx.F_val), k


def _kmeans(X: np.ndarray, k: int, seed: int, iters: int = 50) -> np.ndarray:
    """Plain Lloyd from k-means++ (numpy RNG: public rows only, no privacy noise)."""
    g = np.random.default_rng(seed)
    C = [X[g.integers(len(X))]]
    for _ in range(1, k):
        d = np.min(((X[:, None, :] - np.asarray(C)[None]) ** 2).sum(-1), 1)
        C.append(X[g.choice(len(X), p=d / d.sum())])
    C = np.asarray(C)
    for _ in range(iters):
        a = np.argmin(((X[:, None, :] - C[None]) ** 2).sum(-1), 1)
        C = np.array([X[a == j].mean(0) if (a == j).any() else C[j] for j in range(k)])
    return C


def centres_rule(
    ctx: Ctx, rng: Any, eps: float, r: int, k: int, rounds: int
) -> tuple[list[np.ndarray], np.ndarray, int, dict[str, Any]]:
    """The consumer's DP centres in the seed rows' top-``r`` principal space of the witness features."""
    mu = ctx.F_seed.mean(0)
    if r == 0:  # the whole witness space
        U = np.eye(ctx.F_seed.shape[1])
        r = U.shape[1]
    else:
        _, _, Vt = np.linalg.svd(ctx.F_seed - mu, full_matrices=False)
        U = Vt[:r].T

    def proj(F: np.ndarray) -> np.ndarray:
        out: np.ndarray = (F - mu) @ U
        return out

    S = proj(ctx.F_seed)
    clip = float(np.quantile(np.linalg.norm(S, axis=1), 0.5))
    seed_centres = _kmeans(S, k, 1000 + ctx.repeat)
    V = proj(ctx.F_val)
    nv = np.linalg.norm(V, axis=1)
    Vc = V * np.minimum(1.0, clip / np.maximum(nv, 1e-300))[:, None]
    C = seed_centres.copy()
    bias = np.zeros(k)
    keep = np.zeros(k, bool)
    sens = math.sqrt(4 * clip**2 + 2)
    for _ in range(rounds):
        a = np.argmin(((Vc[:, None, :] - C[None]) ** 2).sum(-1) - bias[None], 1)
        sums = np.array([Vc[a == j].sum(0) for j in range(k)])
        cnt = np.bincount(a, minlength=k).astype(np.float64)
        cal = accounting.calibrate_gaussian(eps / rounds, DELTA / rounds, sensitivity=sens, dim=k * (r + 1))
        noisy = np.asarray(
            gaussian_on_grid(np.concatenate([sums.ravel(), cnt]), cal.sigma, cal.granularity, rng), np.float64
        )
        ns, nc = noisy[: k * r].reshape(k, r), noisy[k * r :]
        keep = nc >= 3 * cal.sigma
        C = np.where(keep[:, None], ns / np.maximum(nc, 1.0)[:, None], seed_centres)
        bias = np.where(keep, r * cal.sigma**2 / np.maximum(nc, 1.0) ** 2, 0.0)
    # keys: the consumer's moved centres (kept) first, then every public seed centre
    allC = np.concatenate([C[keep], seed_centres])
    allb = np.concatenate([bias[keep], np.zeros(k)])

    def key(F: np.ndarray) -> np.ndarray:
        X = proj(F)
        d = (X * X).sum(1)[:, None] - 2 * X @ allC.T + (allC * allC).sum(1)[None] - allb[None]
        return np.argmin(d, 1).astype(np.int64)

    return [key(F) for F in ctx.F_owners], key(ctx.F_val), len(allC), {"moved_centres": int(keep.sum())}


def _binned(ctx: Ctx, score_seed: np.ndarray, score: Any, bins: int) -> tuple[list[np.ndarray], np.ndarray, int]:
    """Keys: the bin of a score among ``bins - 1`` edges at the seed rows' score mean + t sd (EDGE_SPAN)."""
    sd = float(score_seed.std()) or 1e-12
    edges = float(score_seed.mean()) + sd * np.linspace(-2.0, 8.0, bins - 1)

    def key(F: np.ndarray) -> np.ndarray:
        return np.searchsorted(edges, score(F), side="right").astype(np.int64)

    return [key(F) for F in ctx.F_owners], key(ctx.F_val), bins


def fisher_rule(ctx: Ctx, rng: Any, eps: float, lam: float, bins: int) -> tuple[list[np.ndarray], np.ndarray, int]:
    """The released witness whitened by the public seed rows' covariance (a kernel Fisher discriminant):
    ``w = (Sigma_S + lam tr(Sigma_S)/d I)^-1 m~``; post-processing of the one release."""
    centre, clip = public_geometry(ctx.F_seed, "kernel")
    n, d = len(ctx.F_val), ctx.F_seed.shape[1]
    cal = accounting.calibrate_gaussian(eps, DELTA, sensitivity=direction_sensitivity(clip, n), dim=d)
    noisy = gaussian_mean_release(clipped_mean(ctx.F_val, centre, clip), cal, rng)
    S = np.cov((ctx.F_seed - centre).T)
    w = np.linalg.solve(S + lam * np.trace(S) / d * np.eye(d), noisy)
    w /= np.linalg.norm(w)
    return _binned(ctx, (ctx.F_seed - centre) @ w, lambda F: (F - centre) @ w, bins)


def logistic_rule(
    ctx: Ctx, rng: Any, eps: float, r: int, lam: float, bins: int, pm: Any = None
) -> tuple[list[np.ndarray], np.ndarray, int]:
    """A DP classifier of the consumer's rows (+1) against the public seed rows (-1): L2-regularised logistic
    regression by objective perturbation (dpsumm.dp_erm, epsilon-DP under replace-one) in the seed rows' top-``r``
    principal space of the witness features (rows scaled into the unit ball, a constant feature for the bias)."""
    from dpsumm.dp_erm import objective_perturbation

    pm = pca_map(ctx, r) if pm is None else pm
    scale = float(np.quantile(np.linalg.norm(pm(ctx.F_seed) - pm(ctx.F_seed).mean(0), axis=1), 0.9)) * 2.0
    mu_s = pm(ctx.F_seed).mean(0)

    def feats(F: np.ndarray) -> np.ndarray:
        X = (pm(F) - mu_s) / scale
        X *= np.minimum(1.0, 1.0 / np.maximum(np.linalg.norm(X, axis=1), 1e-300))[:, None]
        return np.hstack([X, np.ones((len(X), 1))]) / math.sqrt(2.0)

    Z = np.vstack([feats(ctx.F_val), feats(ctx.F_seed)])
    y = np.concatenate([np.ones(len(ctx.F_val)), -np.ones(len(ctx.F_seed))])
    f = objective_perturbation(Z, y, eps, lam=lam, random_state=rng)
    return _binned(ctx, feats(ctx.F_seed) @ f, lambda F: feats(F) @ f, bins)


def seed_pc_keys(ctx: Ctx, k: int, b: int) -> tuple[list[np.ndarray], np.ndarray, int]:
    """Public keys from the seed rows alone (no budget): the bins of a row's projections on the seed rows' top ``k``
    principal directions of the witness features, ``b`` bins each at the seed projections' quantiles."""
    mu = ctx.F_seed.mean(0)
    _, _, Vt = np.linalg.svd(ctx.F_seed - mu, full_matrices=False)
    U = Vt[:k].T
    S = (ctx.F_seed - mu) @ U
    edges = [np.quantile(S[:, i], np.linspace(0, 1, b + 1)[1:-1]) for i in range(k)]

    def key(F: np.ndarray) -> np.ndarray:
        X = (F - mu) @ U
        out = np.zeros(len(F), np.int64)
        for i in range(k):
            out = out * b + np.searchsorted(edges[i], X[:, i], side="right")
        return out

    return [key(F) for F in ctx.F_owners], key(ctx.F_val), b**k


def owner_pca_map(ctx: Ctx, rng: Any, r: int, a: float) -> tuple[Any, float]:
    """The witness features centred on the seed rows' mean and projected on the top ``r`` eigenvectors of the
    owners' pooled second moment ``sum_k sum_i F_ki F_ki^T / N`` (the owners hold every digit, the public seed rows
    none of the wanted ones). Each owner releases ``a sum_i F_i F_i^T`` (its upper triangle) in its one release,
    jointly with its counts and hash sums: replace-one moves it by at most ``a (||F||^2 + ||F'||^2) <= 4 a`` in
    Frobenius norm (random Fourier features have ``||F||^2 <= 2``), so the joint L2 sensitivity is ``sqrt(10 +
    16 a^2)`` and every part's noise is calibrated to it (returned as the extra sensitivity ``4 a``); the pooled
    matrix carries the sum of the K owners' noises, ``sqrt(K) sigma / a`` per entry. ``a = 0``: the exact matrix, a
    ceiling (NOT private)."""
    K = len(ctx.F_owners)
    d = ctx.F_seed.shape[1]
    N = float(sum(len(F) for F in ctx.F_owners))
    S = sum(F.T @ F for F in ctx.F_owners)
    extra = 4.0 * a
    if a > 0:
        L = 12  # the keys of the release's other part (the calibration's dimension only sets its grid)
        base = math.sqrt(10.0 + extra**2)
        cal = accounting.calibrate_gaussian(
            OWNER_EPS, DELTA, sensitivity=base * (1 + 2.0**-9), dim=L + CELL_DIM + d * (d + 1) // 2
        )
        iu = np.triu_indices(d)
        noise = np.zeros((d, d))
        for _ in range(K):  # each owner's noise on its released a * S_k, divided back by a
            noise[iu] += np.asarray(gaussian_on_grid(np.zeros(len(iu[0])), cal.sigma, cal.granularity, rng), np.float64)
        noise = (noise + np.triu(noise, 1).T) / a
        S = S + noise
    vals, vecs = np.linalg.eigh(S / N)
    U = vecs[:, np.argsort(-vals)[:r]]
    mu = ctx.F_seed.mean(0)
    return (lambda F: (F - mu) @ U), extra


def adaptive_rule(
    ctx: Ctx, rng: Any, eps_dir: float, eps1: float, fine: int, bins: int
) -> tuple[list[np.ndarray], np.ndarray, int, np.ndarray, dict[str, Any]]:
    """Bins that adapt to the consumer's released histogram: the witness at ``eps_dir``; the consumer's histogram
    over ``fine`` bins of its score (edges at the seed rows' score mean + t sd, ``t`` in EDGE_SPAN), released at
    ``eps1`` (discrete Laplace, L1 sensitivity 2 under replace-one); then ``bins`` keys: the fine bins merged so
    that the consumer's released (positive) mass is split evenly among the ``bins - 2`` middle keys, everything
    below and above in one key each (post-processing). The owners count their rows per fine bin (a merged key's
    noise: sigma sqrt(fine bins merged); ``widths``)."""
    centre, clip = public_geometry(ctx.F_seed, "kernel")
    n = len(ctx.F_val)
    cal = accounting.calibrate_gaussian(
        eps_dir, DELTA, sensitivity=direction_sensitivity(clip, n), dim=ctx.F_val.shape[1]
    )
    noisy = gaussian_mean_release(clipped_mean(ctx.F_val, centre, clip), cal, rng)
    w = noisy / max(float(np.linalg.norm(noisy)), 1e-300)
    edges = bin_edges(ctx.F_seed, centre, w, fine)

    def fine_key(F: np.ndarray) -> np.ndarray:
        return np.searchsorted(edges, (F - centre) @ w, side="right").astype(np.int64)

    fo, fv = [fine_key(F) for F in ctx.F_owners], fine_key(ctx.F_val)
    event = count_release_event(eps1)
    h1 = np.maximum(laplace_count_release(np.bincount(fv, minlength=fine).astype(np.float64), event, rng), 0.0)
    # the fine bins where the released mass lies: from the first to the last fine bin above the noise's reach
    t = np.flatnonzero(h1 >= 3 * event.scale)
    lo, hi = (int(t[0]), int(t[-1])) if len(t) else (0, fine - 1)
    cum = np.cumsum(h1[lo : hi + 1])
    inner = max(1, bins - 2)
    cuts = [lo]
    for q in range(1, inner):
        j = lo + int(np.searchsorted(cum, q * cum[-1] / inner, side="left"))
        if j + 1 > cuts[-1]:
            cuts.append(j + 1)
    merged_of = np.zeros(fine, np.int64)  # fine bin -> merged key
    bounds = [0, *[c for c in cuts if c > 0], hi + 1 if hi + 1 < fine else fine]
    bounds = sorted(set(b for b in bounds if 0 <= b <= fine))
    if bounds[-1] != fine:
        bounds.append(fine)
    for m_, (a_, b_) in enumerate(zip(bounds[:-1], bounds[1:])):
        merged_of[a_:b_] = m_
    L = len(bounds) - 1
    widths = np.bincount(merged_of, minlength=L).astype(np.float64)
    return [merged_of[k] for k in fo], merged_of[fv], L, widths, {"adaptive_keys": L}


def owner_centre_keys(
    ctx: Ctx, rng: Any, k: int, rounds: int, share: float
) -> tuple[list[np.ndarray], np.ndarray, int, float, dict[str, Any]]:
    """Keys from the owners' own rows: a row's nearest of ``k`` centres of the owners' pooled rows in the witness
    features. ``rounds = 0``: exact k-means (the lowest inertia of SEED_KMEANS_RESTARTS k-means++ starts on 6,000
    pooled rows), a ceiling (NOT private). ``rounds = T > 0``: ``T`` federated DP Lloyd rounds from the public seed
    rows' k-means centres: each round every owner releases its per-centre sums and counts (L2 sensitivity
    ``sqrt(4 B + 2)`` under replace-one, ``B = 2`` the features' largest squared norm) at ``share`` of the owners'
    budget split over the rounds (a discrete Gaussian at ``(share / T, delta / T)``, each owner's own noise: the
    pooled sums carry ``sqrt(K)`` owners' noises); the owners' counts and hash sums then spend the rest of their
    budget (returned: the factor their noise grows by, ``1 / (1 - share)`` to first order). A centre whose pooled
    count stays under ``3 sqrt(K) sigma`` keeps its seed position."""
    pooled = np.concatenate(ctx.F_owners)
    extra: dict[str, Any] = {}
    if rounds == 0:
        g = np.random.default_rng(7 + ctx.repeat)
        sub = pooled[g.choice(len(pooled), size=min(6000, len(pooled)), replace=False)]
        best = math.inf
        for t in range(3):
            Ct = _kmeans(sub, k, 1000 * t + ctx.repeat, iters=30)
            inertia = float(np.min(((sub[:, None, :] - Ct[None]) ** 2).sum(-1), 1).sum())
            if inertia < best:
                best, C = inertia, Ct
        factor = 1.0
    else:
        K, d = len(ctx.F_owners), pooled.shape[1]
        C = _kmeans(ctx.F_seed, k, 1000 + ctx.repeat)
        cal = accounting.calibrate_gaussian(
            share / rounds, DELTA / rounds, sensitivity=math.sqrt(4 * 2.0 + 2), dim=k * (d + 1)
        )
        for _ in range(rounds):
            sums, cnt = np.zeros((k, d)), np.zeros(k)
            for F in ctx.F_owners:
                a = np.argmin((C * C).sum(1)[None] - 2 * F @ C.T, 1)
                s_k = np.zeros((k, d))
                np.add.at(s_k, a, F)
                vec = np.concatenate([s_k.ravel(), np.bincount(a, minlength=k).astype(np.float64)])
                vec = np.asarray(gaussian_on_grid(vec, cal.sigma, cal.granularity, rng), np.float64)
                sums += vec[: k * d].reshape(k, d)
                cnt += vec[k * d :]
            keep = cnt >= 3 * math.sqrt(K) * cal.sigma
            C = np.where(keep[:, None], sums / np.maximum(cnt, 1.0)[:, None], C)
        extra["moved_centres"] = int(keep.sum())
        # the rest of the owners' budget for their counts and hash sums: their noise grows (Gaussian, same delta)
        factor = accounting.calibrate_gaussian(1.0 - share, DELTA, sensitivity=1.0, dim=1).sigma / (
            accounting.calibrate_gaussian(1.0, DELTA, sensitivity=1.0, dim=1).sigma
        )
    cc = (C * C).sum(1)

    def key(F: np.ndarray) -> np.ndarray:
        return np.argmin(cc[None] - 2 * F @ C.T, 1).astype(np.int64)

    return [key(F) for F in ctx.F_owners], key(ctx.F_val), k, factor, extra


def bought_centre_keys(
    ctx: Ctx, sampler: np.random.Generator, u: float, k: int
) -> tuple[list[np.ndarray], np.ndarray, int, list[np.ndarray]]:
    """Keys from a first purchase: ``round(u p)`` rows bought uniformly at random over every owner's rows (each
    owner's share in proportion to its public row count; no release, no budget: a sale of raw rows, which the
    aggregator holds as it holds every row bought), then a row's key is its nearest of ``k`` k-means centres of those
    rows in the witness features (the lowest inertia of SEED_KMEANS_RESTARTS k-means++ starts): post-processing of
    rows already bought. The rest of the purchase, ``(3 - u) p`` rows, goes by these cells; the first rows are in
    the pool too. Returns the keys and which rows the first purchase took."""
    K = len(ctx.owners)
    n = np.array([len(o) for o in ctx.owners])
    total = int(round(u * ctx.p))
    share = np.floor(total * n / n.sum()).astype(int)
    rest = total - int(share.sum())
    share[np.argsort(-(total * n / n.sum() - share), kind="stable")[:rest]] += 1
    first = []
    for kk in range(K):
        mask = np.zeros(len(ctx.owners[kk]), bool)
        mask[sampler.choice(len(ctx.owners[kk]), size=int(share[kk]), replace=False)] = True
        first.append(mask)
    X = np.concatenate([F[mk] for F, mk in zip(ctx.F_owners, first)])
    C = _best_kmeans(X, k, ctx.repeat)
    cc = (C * C).sum(1)

    def key(F: np.ndarray) -> np.ndarray:
        return np.argmin(cc[None] - 2 * F @ C.T, 1).astype(np.int64)

    return [key(F) for F in ctx.F_owners], key(ctx.F_val), k, first


def pca_map(ctx: Ctx, r: int) -> Any:
    """The witness features centred on the seed rows' mean and projected on their top ``r`` principal directions
    (public); ``r = 0``: the features themselves."""
    if r == 0:
        return lambda F: F
    mu = ctx.F_seed.mean(0)
    _, _, Vt = np.linalg.svd(ctx.F_seed - mu, full_matrices=False)
    U = Vt[:r].T
    return lambda F: (F - mu) @ U


def twodir_rule(
    ctx: Ctx,
    rng: Any,
    eps1: float,
    eps2: float,
    b1: int,
    b2: int,
    span2: tuple[float, float],
    r: int = 0,
    pm: Any = None,
) -> tuple[list[np.ndarray], np.ndarray, int]:
    """Two released directions: the witness ``w1`` (the consumer's clipped mean at ``eps1``), then the clipped sum
    of the consumer's rows whose score along ``w1`` is below the consumer's released mean score ``||m~||`` (a
    function of the first release), at ``eps2`` (L2 sensitivity ``2 C`` under replace-one: a row leaves or enters
    the subset), made orthogonal to ``w1``: the direction of the rows the witness serves least. Keys: ``b1`` bins
    along ``w1`` x ``b2`` bins along ``w2`` (edges at the seed rows' score mean + t sd, ``t`` in ``(-2, 8)`` and
    ``span2``); ``r > 0``: both in the seed rows' top-``r`` principal space (:func:`pca_map`)."""
    pm = pca_map(ctx, r) if pm is None else pm
    Fs, Fv, Fo = pm(ctx.F_seed), pm(ctx.F_val), [pm(F) for F in ctx.F_owners]
    centre, clip = public_geometry(Fs, "kernel")
    n, d = len(Fv), Fs.shape[1]
    cal = accounting.calibrate_gaussian(eps1, DELTA, sensitivity=direction_sensitivity(clip, n), dim=d)
    m1 = gaussian_mean_release(clipped_mean(Fv, centre, clip), cal, rng)
    w1 = m1 / np.linalg.norm(m1)
    if b2 == 1:  # the witness alone (in this space)
        e1 = ((Fs - centre) @ w1).mean() + ((Fs - centre) @ w1).std() * np.linspace(-2.0, 8.0, b1 - 1)
        return (
            [np.searchsorted(e1, (F - centre) @ w1, side="right").astype(np.int64) for F in Fo],
            np.searchsorted(e1, (Fv - centre) @ w1, side="right").astype(np.int64),
            b1,
        )
    Z = Fv - centre
    Z = Z * np.minimum(1.0, clip / np.maximum(np.linalg.norm(Z, axis=1), 1e-300))[:, None]
    below = Z @ w1 < float(m1 @ w1)
    cal2 = accounting.calibrate_gaussian(eps2, DELTA, sensitivity=2.0 * clip, dim=d)
    s2 = np.asarray(gaussian_on_grid(Z[below].sum(0), cal2.sigma, cal2.granularity, rng), np.float64)
    w2 = s2 - (s2 @ w1) * w1
    w2 /= np.linalg.norm(w2)
    S = Fs - centre
    e1 = (S @ w1).mean() + (S @ w1).std() * np.linspace(-2.0, 8.0, b1 - 1)
    e2 = (S @ w2).mean() + (S @ w2).std() * np.linspace(span2[0], span2[1], b2 - 1)

    def key(F: np.ndarray) -> np.ndarray:
        X = F - centre
        return (np.searchsorted(e1, X @ w1, side="right") * b2 + np.searchsorted(e2, X @ w2, side="right")).astype(
            np.int64
        )

    return [key(F) for F in Fo], key(Fv), b1 * b2


# ------------------------------------------------------------------------------------------------ the purchase


def purchase(
    ctx: Ctx,
    rng: Any,
    sampler: np.random.Generator,
    keys_owner: list[np.ndarray],
    keys_val: np.ndarray,
    L: int,
    eps_h: float,
    reserve: float = 1.0 / 3.0,
    per_key_centres: bool = False,
    groups: str = "test",
    owner_extra_sens: float = 0.0,
    owner_factor: float = 1.0,
    widths: np.ndarray | None = None,
    factor: float = 3.0,
    first: list[np.ndarray] | None = None,
) -> tuple[list[tuple[int, int]], int, int]:
    """The cell purchase's arithmetic on the keys: owners' releases, cells, the consumer's histogram, quotas, sales.

    ``per_key_centres``: every owner releases its hash sum per key (``L x 64`` values instead of 64; the same L2
    sensitivity ``2 sqrt(2)``: a row's hash is in one key's sum) and a cell's centre is the pooled sum of its
    holders' rows of that key over their released count of it, so that the consumer places a row of key ``j`` with
    the owners whose rows of key ``j`` are nearest (not whose rows overall are)."""
    K = len(ctx.owners)
    cal, _ = owner_release_calibration(L + CELL_DIM, OWNER_EPS, DELTA)
    if owner_extra_sens > 0:  # the owners' one release carries a further part (ownpcs: their scaled covariance)
        base = math.sqrt(10.0 + owner_extra_sens**2)
        cal = accounting.calibrate_gaussian(OWNER_EPS, DELTA, sensitivity=base * (1 + 2.0**-9), dim=L + CELL_DIM)
    if owner_factor != 1.0:  # the owners spent part of their budget before (ownercentres' Lloyd rounds)
        cal = dataclasses.replace(cal, sigma=cal.sigma * owner_factor)
    counts = np.array([np.bincount(kk, minlength=L) for kk in keys_owner], np.float64)
    w = np.ones(L) if widths is None else np.asarray(widths, np.float64)  # fine keys merged into each key
    n_counts = (
        counts
        + np.asarray(gaussian_on_grid(np.zeros(K * L), cal.sigma, cal.granularity, rng), np.float64).reshape(K, L)
        * np.sqrt(w)[None]
    )
    n_sums = np.asarray(gaussian_on_grid(ctx.H_sums.ravel(), cal.sigma, cal.granularity, rng), np.float64).reshape(
        K, CELL_DIM
    )
    n_rows = np.array([len(o) for o in ctx.owners], np.float64)
    resolution = None
    if groups == "resolution":  # the library's rule (ByDirection.group_resolution)
        means = n_sums / n_rows[:, None]
        ref = seed_split_distance(ctx.H_seed)
        kept = owner_groups(means, np.full(K, cal.sigma**2) / n_rows**2, n_rows, resolution=ref)
        if len(kept) * count_release_event(eps_h).scale <= len(ctx.val):
            resolution = ref
    if groups == "one":  # a ceiling for owners of one distribution: every owner in one group
        import dpsumm.protocols.nominations.cells as cells_mod

        saved = cells_mod.owner_groups
        cells_mod.owner_groups = lambda m, *a, **k: [list(range(len(m)))]
        try:
            cells = label_cells(n_counts / np.sqrt(w)[None], n_sums, n_rows, cal.sigma)
        finally:
            cells_mod.owner_groups = saved
    else:
        cells = label_cells(n_counts / np.sqrt(w)[None], n_sums, n_rows, cal.sigma, resolution=resolution)
    if per_key_centres:
        cal, _ = owner_release_calibration(L + L * CELL_DIM, OWNER_EPS, DELTA)
        n_counts = np.asarray(gaussian_on_grid(counts.ravel(), cal.sigma, cal.granularity, rng), np.float64).reshape(
            K, L
        )
        per = np.zeros((K, L, CELL_DIM))
        for k in range(K):
            np.add.at(per[k], keys_owner[k], ctx.H_owners[k])
        n_per = np.asarray(gaussian_on_grid(per.ravel(), cal.sigma, cal.granularity, rng), np.float64).reshape(
            K, L, CELL_DIM
        )
        cells = label_cells(n_counts, n_per.sum(1), n_rows, cal.sigma * math.sqrt(L))
        centres, bias = cells.centres.copy(), cells.bias.copy()
        for c, (j, own) in enumerate(zip(cells.labels, cells.owners)):
            held = [k for k in own if n_counts[k, j] >= 3 * cal.sigma] or list(own)
            tot = max(float(n_counts[held, j].sum()), 1.0)
            if cal.sigma * math.sqrt(CELL_DIM * len(held)) / tot > PER_KEY_NOISE:  # too few rows: the whole means
                continue
            centres[c] = n_per[held, j].sum(0) / tot
            bias[c] = CELL_DIM * len(held) * cal.sigma**2 / tot**2
        cells = dataclasses.replace(cells, centres=centres, bias=bias)
    # the consumer: each row of key j to the nearest centre among the cells of key j
    J = len(cells.labels)
    hist = np.zeros(J)
    base = (cells.centres * cells.centres).sum(1) - cells.bias
    for j in np.unique(keys_val):
        cj = np.flatnonzero(cells.labels == j)
        if len(cj) == 0:
            continue
        rows = ctx.H_val[keys_val == j]
        pick = cj[np.argmin(base[cj][None] - 2 * rows @ cells.centres[cj].T, 1)]
        np.add.at(hist, pick, 1.0)
    event = count_release_event(eps_h)
    noisy_hist = laplace_count_release(hist, event, rng)
    q = quotas_with_reserve(
        noisy_hist, event.scale, len(ctx.val), cells, n_counts, ctx.p, factor=factor, reserve=reserve
    )
    preference = np.zeros(L)
    np.add.at(preference, cells.labels, np.maximum(noisy_hist, 0.0))
    bought: list[tuple[int, int]] = []
    for k in range(K):
        if q[k].sum() == 0:
            continue
        taken = np.zeros(len(ctx.owners[k]), bool)
        before = np.zeros(len(ctx.owners[k]), bool) if first is None else first[k]
        short = 0
        for j in np.flatnonzero(q[k]):
            idx = np.flatnonzero((keys_owner[k] == j) & ~before)
            m = min(int(q[k, j]), len(idx))
            short += int(q[k, j]) - m
            pick = sampler.choice(idx, size=m, replace=False) if m else np.zeros(0, np.int64)
            taken[pick] = True
        for j in np.argsort(-preference, kind="stable"):  # substitutes by the consumer's released preference
            if short <= 0:
                break
            idx = np.flatnonzero((keys_owner[k] == j) & ~taken & ~before)
            m = min(short, len(idx))
            if m:
                taken[sampler.choice(idx, size=m, replace=False)] = True
                short -= m
        bought += [(k, int(i)) for i in np.flatnonzero(taken)]
    if first is not None:  # the first purchase's rows are in the pool too
        bought += [(k, int(i)) for k in range(K) for i in np.flatnonzero(first[k])]
    groups_n = max((int((cells.labels == j).sum()) for j in np.unique(cells.labels)), default=0)
    return bought, J, groups_n


def evaluate(ctx: Ctx, bought: list[tuple[int, int]]) -> dict[str, Any]:
    X = np.asarray([ctx.owners[k][i] for k, i in bought], np.float32)
    picks, _ = exact_greedy([X], ctx.val, np.zeros((0, X.shape[1]), np.float32), min(ctx.p, len(X)), ctx.gamma)
    sel = [bought[i] for _, i in picks]
    pts = X[[i for _, i in picks]]
    pop = float(population_mmd2(pts, ctx.bd.split.test, ctx.gamma, held_out_term=ctx.held_term))
    cells = ctx.bd.owner_cells

    def wanted(rows: list[tuple[int, int]]) -> int:
        return sum(int(np.isin(cells[k][i], ctx.wanted)) for k, i in rows)

    comps = {str(int(c)): sum(int(cells[k][i] == c) for k, i in bought) for c in ctx.wanted}
    return dict(
        pool_per_component=comps,
        population_vs_exact_pct=100.0 * (pop / ctx.exact_pop - 1.0),
        pool_rows=len(bought),
        pool_wanted=wanted(bought),
        summary_wanted=wanted(sel),
        exact_summary_wanted=ctx.exact_wanted,
    )


def run_rule(ctx: Ctx, rule: str) -> dict[str, Any]:
    rng = check_random_state(zlib.crc32(f"leads:{ctx.repeat}:{rule}".encode()))
    sampler = np.random.default_rng(zlib.crc32(f"{ctx.repeat}:{rule}".encode()))  # sampling of sales, not noise
    extra: dict[str, Any] = {}
    rule_name = rule
    groups = "test"
    for g in ("resolution", "one"):
        if rule.endswith(f"+groups={g}"):
            groups, rule = g, rule.removesuffix(f"+groups={g}")
    owner_extra = 0.0
    owner_factor = 1.0
    widths = None
    factor = 3.0
    first = None
    per_key = rule.endswith("+per-key-centres")
    exact = rule.endswith("+exact-directions")  # a ceiling: the directions without their noise (NOT private)
    rule = rule.removesuffix("+per-key-centres").removesuffix("+exact-directions")

    def dir_eps(eps: float) -> float:
        return NOISELESS_EPS if exact else eps

    if rule == "witness":
        ko, kv, L = witness_rule(ctx, rng, dir_eps(EPS_V / 2), 12)
        eps_h = EPS_V / 2
    elif m := re.fullmatch(r"centres(\+witness)?\[r=(\d+),k=(\d+),rounds=(\d+)\]", rule):
        both, r, k, rounds = bool(m.group(1)), int(m.group(2)), int(m.group(3)), int(m.group(4))
        share = EPS_V / 4 if both else EPS_V / 2
        ko, kv, L, extra = centres_rule(ctx, rng, share, r, k, rounds)
        eps_h = EPS_V / 2
        if both:
            wo, wv, B = witness_rule(ctx, rng, EPS_V / 4, 3)
            ko = [a * B + b for a, b in zip(ko, wo)]
            kv = kv * B + wv
            L *= B
    elif m := re.fullmatch(r"witness-x-seed-pcs\[k=(\d+),b=(\d+)\]", rule):
        ko, kv, L = witness_rule(ctx, rng, dir_eps(EPS_V / 2), 12)
        eps_h = EPS_V / 2
        po, pv, P = seed_pc_keys(ctx, int(m.group(1)), int(m.group(2)))
        ko = [a * P + b for a, b in zip(ko, po)]
        kv = kv * P + pv
        L *= P
    elif m := re.fullmatch(r"fisher\[lam=([0-9.e-]+)\]", rule):
        ko, kv, L = fisher_rule(ctx, rng, EPS_V / 2, float(m.group(1)), 12)
        eps_h = EPS_V / 2
    elif m := re.fullmatch(r"logistic\[r=(\d+),lam=([0-9.e-]+)\]", rule):
        ko, kv, L = logistic_rule(ctx, rng, dir_eps(EPS_V / 2), int(m.group(1)), float(m.group(2)), 12)
        eps_h = EPS_V / 2
    elif m := re.fullmatch(r"witness\[dim=(\d+)(?:,e=([0-9.]+))?(?:,bins=(\d+))?\]", rule):
        e = float(m.group(2) or 0.5) * EPS_V
        ko, kv, L = witness_dim_rule(ctx, rng, dir_eps(e), int(m.group(3) or 12), int(m.group(1)))
        eps_h = EPS_V - e
    elif m := re.fullmatch(r"seedcentres\[k=(\d+),b=(\d+)(?:,e=([0-9.]+))?\]", rule):
        k, b = int(m.group(1)), int(m.group(2))
        ko, kv, L = seed_centre_keys(ctx, k)
        eps_h = EPS_V
        if b > 1:
            e = float(m.group(3) or 0.5) * EPS_V
            wo, wv, _ = witness_rule(ctx, rng, dir_eps(e), b)
            ko = [a * b + w for a, w in zip(ko, wo)]
            kv = kv * b + wv
            L *= b
            eps_h = EPS_V - e
    elif m := re.fullmatch(r"witness\[r=(\d+)\]", rule):
        ko, kv, L = twodir_rule(ctx, rng, EPS_V / 2, 0.0, 12, 1, (0.0, 0.0), int(m.group(1)))
        eps_h = EPS_V / 2
    elif m := re.fullmatch(
        r"twodir\[b1=(\d+),b2=(\d+),span2=([0-9.-]+):([0-9.-]+)(?:,e=([0-9.]+))?(?:,r=(\d+))?\]", rule
    ):
        b1, b2 = int(m.group(1)), int(m.group(2))
        e = float(m.group(5) or 0.25) * EPS_V  # each direction's share
        sp = (float(m.group(3)), float(m.group(4)))
        ko, kv, L = twodir_rule(ctx, rng, dir_eps(e), dir_eps(e), b1, b2, sp, int(m.group(6) or 0))
        eps_h = EPS_V - 2 * e
    elif m := re.fullmatch(r"ownpcs\[r=(\d+),a=([0-9.]+)(?:,e=([0-9.]+))?(?:,bins=(\d+))?(?:,b2=(\d+))?\]", rule):
        r, a = int(m.group(1)), float(m.group(2))
        bins, b2 = int(m.group(4) or 12), int(m.group(5) or 1)
        e = float(m.group(3) or (0.5 if b2 == 1 else 0.25)) * EPS_V
        pm, owner_extra = owner_pca_map(ctx, rng, r, a)
        if b2 == 1:
            ko, kv, L = twodir_rule(ctx, rng, dir_eps(e), 0.0, bins, 1, (0.0, 0.0), pm=pm)
            eps_h = EPS_V - e
        else:  # two directions in the owners' principal space, e each
            ko, kv, L = twodir_rule(ctx, rng, dir_eps(e), dir_eps(e), bins, b2, (0.0, 3.0), pm=pm)
            eps_h = EPS_V - 2 * e
    elif m := re.fullmatch(r"logistic-own\[r=(\d+),a=([0-9.]+),lam=([0-9.e-]+)\]", rule):
        pm, owner_extra = owner_pca_map(ctx, rng, int(m.group(1)), float(m.group(2)))
        ko, kv, L = logistic_rule(ctx, rng, dir_eps(EPS_V / 2), 0, float(m.group(3)), 12, pm=pm)
        eps_h = EPS_V / 2
    elif m := re.fullmatch(r"adaptive\[fine=(\d+),bins=(\d+),e1=([0-9.]+)\]", rule):
        e1 = float(m.group(3)) * EPS_V
        ko, kv, L, widths, extra = adaptive_rule(ctx, rng, dir_eps(EPS_V / 2), e1, int(m.group(1)), int(m.group(2)))
        eps_h = EPS_V / 2 - e1
    elif m := re.fullmatch(r"ownercentres\[k=(\d+),b=(\d+),rounds=(\d+)(?:,share=([0-9.]+))?\]", rule):
        k, b, rounds = int(m.group(1)), int(m.group(2)), int(m.group(3))
        ko, kv, L, owner_factor, extra = owner_centre_keys(ctx, rng, k, rounds, float(m.group(4) or 0.5))
        ko, kv, L, eps_h = _crossed_with_witness(ctx, rng, dir_eps, ko, kv, L, b)
    elif m := re.fullmatch(r"witnesscentres\[u=([0-9.]+),k=(\d+)\]", rule):
        # stage 1: the witness purchase of u p rows (direction eps_v / 2, histogram eps_v / 4, the owners' counts at
        # half their budget); stage 2: keys from k-means of the rows stage 1 bought, histogram eps_v / 4
        u, k = float(m.group(1)), int(m.group(2))
        half = accounting.calibrate_gaussian(0.5 * OWNER_EPS, DELTA / 2, sensitivity=1.0, dim=1).sigma / (
            accounting.calibrate_gaussian(OWNER_EPS, DELTA, sensitivity=1.0, dim=1).sigma
        )
        wo, wv, WL = witness_rule(ctx, rng, dir_eps(EPS_V / 2), 12)
        b1, _, _ = purchase(ctx, rng, sampler, wo, wv, WL, EPS_V / 4, owner_factor=half, factor=u)
        first = [np.zeros(len(o), bool) for o in ctx.owners]
        for kk, i in b1:
            first[kk][i] = True
        X = np.concatenate([F[mk] for F, mk in zip(ctx.F_owners, first)])
        C = _best_kmeans(X, k, ctx.repeat)
        cc = (C * C).sum(1)
        ko = [np.argmin(cc[None] - 2 * F @ C.T, 1).astype(np.int64) for F in ctx.F_owners]
        kv = np.argmin(cc[None] - 2 * ctx.F_val @ C.T, 1).astype(np.int64)
        L, factor, eps_h, owner_factor = k, 3.0 - u, EPS_V / 4, half
    elif m := re.fullmatch(r"boughtcentres\[u=([0-9.]+),k=(\d+),b=(\d+)\]", rule):
        u, k, b = float(m.group(1)), int(m.group(2)), int(m.group(3))
        ko, kv, L, first = bought_centre_keys(ctx, sampler, u, k)
        factor = 3.0 - u
        ko, kv, L, eps_h = _crossed_with_witness(ctx, rng, dir_eps, ko, kv, L, b)
    else:
        raise SystemExit(f"unknown rule {rule!r}")
    bought, J, G = purchase(
        ctx,
        rng,
        sampler,
        ko,
        kv,
        L,
        eps_h,
        per_key_centres=per_key,
        groups=groups,
        owner_extra_sens=owner_extra,
        owner_factor=owner_factor,
        widths=widths,
        factor=factor,
        first=first,
    )
    return dict(rule=rule_name, keys=L, cells=J, groups=G, **extra, **evaluate(ctx, bought))


def table(recs: list[dict[str, Any]], cmd: str) -> str:
    out = [
        "# Leads for the MNIST mixes: wanted rows bought per cell rule",
        "<!-- docs-test: inline commands help (the measurement takes about 10 to 30 minutes: tests/docs/test_docs.py "
        "checks that the script accepts the options quoted, with --help) -->",
        "",
        f"Written by `{cmd}` (DIR: the MNIST IDX files). Means ± sample standard deviations over repeats; the "
        "population view against the exact greedy; rows bought 3p. A replay of the cell purchase's arithmetic "
        "(benches/mixes_leads.py's docstring says what it leaves out). Seeded runs: reproducible, NOT private.",
        "",
    ]
    for bed in dict.fromkeys(r["bed"] for r in recs):
        sub = [r for r in recs if r["bed"] == bed]
        out += [
            f"## {bed}, gamma median, p = {sub[0]['size']}",
            "",
            "| rule | vs exact (%) | wanted rows bought | wanted in the summary (exact greedy's) | keys | cells |",
            "|---|---|---|---|---|---|",
        ]
        for rule in dict.fromkeys(r["rule"] for r in sub):
            rs = [r for r in sub if r["rule"] == rule]

            def pm(key: str, fmt: str, rs: list[dict[str, Any]] = rs) -> str:
                v = [float(r[key]) for r in rs]
                sd = f" ± {np.std(v, ddof=1):{fmt.lstrip('+')}}" if len(v) > 1 else ""
                return f"{np.mean(v):{fmt}}{sd}"

            out.append(
                f"| {rule} | {pm('population_vs_exact_pct', '+.1f')} | {pm('pool_wanted', '.0f')} | "
                f"{pm('summary_wanted', '.0f')} ({pm('exact_summary_wanted', '.0f')}) | {pm('keys', '.0f')} | "
                f"{pm('cells', '.0f')} |"
            )
        out.append("")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", help="directory of the MNIST IDX files")
    ap.add_argument("--beds", nargs="+", default=["mnist-many", "mnist-spread", "mnist-apart", "mnist-minority"])
    ap.add_argument("--size", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--rules", nargs="+", default=["witness", "centres[r=16,k=8,rounds=1]"])
    ap.add_argument("--out", default="docs/experiments/testbeds")
    ap.add_argument("--tag", default="mixes")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    cmd = " ".join(["python", "benches/mixes_leads.py", *(("DIR" if a == args.data else a) for a in sys.argv[1:])])
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    recs: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    for bed in args.beds:
        for r in range(args.repeats):
            ctx = make_ctx(bed, r, args.size, args.data)
            for rule in args.rules:
                rec = dict(bed=bed, size=args.size, repeat=r, **run_rule(ctx, rule))
                recs.append(rec)
                print(
                    f"[{time.perf_counter() - t0:7.1f} s] {bed} r{r} {rule}: "
                    f"{rec['population_vs_exact_pct']:+.1f} % wanted {rec['pool_wanted']} {rec['pool_per_component']} "
                    f"summary {rec['summary_wanted']}/{rec['exact_summary_wanted']}",
                    flush=True,
                )
            meta = dict(command=cmd, seconds=time.perf_counter() - t0, cpus=os.cpu_count())
            (out / f"leads-{args.tag}.json").write_text(json.dumps(dict(meta=meta, records=recs), indent=1))
            (out / f"leads-{args.tag}.md").write_text(table(recs, cmd))
    print(table(recs, cmd))


if __name__ == "__main__":
    main()
