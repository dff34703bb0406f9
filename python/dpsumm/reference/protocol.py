"""A pure-numpy twin of the whole protocol (Algorithm 3), for benchmarking the Rust-backed one.

Same algorithm as :func:`dpsumm.summarize` with ``method="paper"`` or ``"paper-greedy"``, written as one
loop with the numpy twins of every kernel (h1, quantizer, MWEM, bids) and numpy randomness. It is a
baseline for speed, never private, and not used by the library.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._validation import positive_int, real_vector
from ..accounting import Schedule
from ..errors import InvalidParameterError
from ..privacy import MAX_MWEM_STEPS, MAX_MWEM_WORK, _eta
from ..protocols.base import MethodOptionError
from .kernels import _float32_rows, rff_transform
from .privacy import ProductMWEM, _generator, quantize_column_sums

__all__ = ["summarize_reference"]


def summarize_reference(
    owners: list[np.ndarray],
    validation: np.ndarray,
    size: int,
    *,
    seed_set: np.ndarray,
    omega: np.ndarray,
    offset: np.ndarray,
    schedule: Any,
    rng: np.random.Generator,
    method: str = "paper",
) -> dict[str, np.ndarray]:
    """Run Algorithm 3 in numpy. ``omega``/``offset`` are the public h1 projection
    (``RFFHasher.omega_``/``offset_``); ``schedule`` is a :class:`dpsumm.accounting.Schedule` for ``omega``'s dim
    and at least ``size`` epochs; ``seed_set`` is not empty; ``size`` is at most the owners' total rows.
    Arguments are checked as :func:`dpsumm.summarize` checks them, before any work.

    Returns ``{"owner": (size,), "index": (size,), "accessed": int}``.
    """
    owners, validation, size, seed_set, omega, offset = _checked_arguments(
        owners, validation, size, seed_set, omega, offset, schedule, method
    )
    d = omega.shape[1]
    rng = _generator(rng, "rng")
    scale = np.sqrt(d / 2.0)
    private = method == "paper"
    H = [rff_transform(o, omega, offset) for o in owners]
    offered = [np.zeros(len(o), dtype=bool) for o in owners]
    Hv = rff_transform(validation, omega, offset)
    Hs = rff_transform(seed_set, omega, offset)
    if private:
        mwem_v = ProductMWEM(d, schedule.eta, random_state=rng)
        sums_v = quantize_column_sums(np.clip(Hv * scale, -1, 1).astype(np.float32), schedule.eta, rng)
        g_valid = mwem_v.release(sums_v, len(Hv), schedule.t_init, schedule.epsilon_validation_step) / scale
        mwem_s = ProductMWEM(d, schedule.eta, random_state=rng)
        sums_s = quantize_column_sums(np.clip(Hs * scale, -1, 1).astype(np.float32), schedule.eta, rng)
    else:
        g_valid = Hv.astype(np.float64).mean(0)
    exact_sum = Hs.astype(np.float64).sum(0)
    K = len(owners)
    counts: dict[tuple[int, int], int] = {}
    pool: list[tuple[int, int, np.ndarray]] = []
    out_owner, out_index = [], []
    accessed = 0
    for rnd in range(1, size + 1):
        q = len(Hs) + rnd - 1
        if private:
            steps, eps = (
                (schedule.t_init, schedule.epsilon_first_epoch_step)
                if rnd == 1
                else (schedule.t_subs, schedule.epsilon_epoch_step[rnd - 1])
            )
            g_sum = mwem_s.release(sums_s, q, steps, eps) / scale
        else:
            g_sum = exact_sum / q
        v = (g_valid - q / (q + 1.0) * g_sum).astype(np.float32)
        bids = []
        for k in range(K):
            if offered[k].all():
                continue
            scores = np.where(offered[k], -np.inf, H[k] @ v)
            i = int(np.argmax(scores))
            bids.append((float(scores[i]), k, i))
        bids.sort(key=lambda b: (-b[0], b[1]))
        for r, (_, k, i) in enumerate(bids):
            counts[(k, i)] = counts.get((k, i), 0) + 1
            if not private:
                ask = r == 0
            else:
                ask = r == 0 or rng.random() < np.exp(-schedule.epsilon_auction * r) or counts[(k, i)] >= schedule.tau
            if ask:
                offered[k][i] = True
                accessed += 1
                pool.append((k, i, H[k][i]))
        if not pool:
            break
        scores = np.stack([p[2] for p in pool]).astype(np.float64) @ v.astype(np.float64)
        k, i, h = pool.pop(int(np.argmax(scores)))
        out_owner.append(k)
        out_index.append(i)
        exact_sum += h
        if private:
            sums_s = sums_s + quantize_column_sums(
                np.clip(h[None] * scale, -1, 1).astype(np.float32), schedule.eta, rng
            )
    return {"owner": np.array(out_owner), "index": np.array(out_index), "accessed": np.array(accessed)}


def _checked_arguments(
    owners: list[np.ndarray],
    validation: np.ndarray,
    size: int,
    seed_set: np.ndarray,
    omega: np.ndarray,
    offset: np.ndarray,
    schedule: Any,
    method: str,
) -> tuple[list[np.ndarray], np.ndarray, int, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`summarize_reference`'s arguments checked as :func:`dpsumm.summarize` checks them: ``(owners, validation,
    size, seed_set, omega, offset)`` as float32 rows (``offset`` a real vector)."""
    if not isinstance(method, str) or method not in ("paper", "paper-greedy"):
        raise MethodOptionError(f"`method` must be 'paper' or 'paper-greedy', got {method!r}", "method")
    if isinstance(owners, np.ndarray) or not isinstance(owners, Sequence) or len(owners) == 0:
        raise InvalidParameterError("`owners` must be a non-empty list of arrays", "owners")
    checked: list[np.ndarray] = []
    for o in owners:  # every owner with the first one's features
        checked.append(_float32_rows(o, "owners", n_features=checked[0].shape[1] if checked else None))
    owners = checked
    n_features = owners[0].shape[1]
    validation = _float32_rows(validation, "validation", n_features=n_features)
    size = positive_int(size, "size")
    if size > sum(len(o) for o in owners):
        raise InvalidParameterError(
            f"`size` ({size}) exceeds the owners' total rows ({sum(len(o) for o in owners)})", "size"
        )
    seed_set = _float32_rows(seed_set, "seed_set", n_features=n_features)
    omega = _float32_rows(omega, "omega")
    if omega.shape[0] != n_features:
        raise InvalidParameterError(f"`omega` projects {omega.shape[0]} features, the rows have {n_features}", "omega")
    d = omega.shape[1]
    offset = real_vector(offset, "offset", d)
    if not isinstance(schedule, Schedule):
        raise InvalidParameterError(
            f"`schedule` must be a dpsumm.accounting.Schedule, got {type(schedule).__name__}", "schedule"
        )
    if schedule.size < size or schedule.dim != d:
        raise InvalidParameterError(
            f"`schedule` was made for size {schedule.size} and dim {schedule.dim}; this run "
            f"has size {size} and dim {d}",
            "schedule",
        )
    try:
        _eta(schedule.eta)
    except InvalidParameterError as exc:
        raise InvalidParameterError(f"`schedule`: {exc}", "schedule") from None
    for steps in (schedule.t_init, schedule.t_subs):
        if method == "paper" and (steps > MAX_MWEM_STEPS or steps * d > MAX_MWEM_WORK):
            raise InvalidParameterError(
                f"`schedule`: {steps} MWEM steps of {d} values each exceed the caps of "
                f"{MAX_MWEM_STEPS} steps and {MAX_MWEM_WORK} values per release",
                "schedule",
            )
    return owners, validation, size, seed_set, omega, offset
