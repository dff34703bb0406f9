"""dpsumm.reference.protocol: the numpy reference protocol agrees with the Rust-backed one."""

from __future__ import annotations

import numpy as np

import dpsumm
from paper_data import blobs, small_schedule


def test_numpy_reference_protocol_agrees_with_the_rust_backed_one():
    owners, validation, seed_set = blobs(K=3, n=50)
    res = dpsumm.summarize(
        owners, validation, 15, method=dpsumm.PaperGreedy(dim=64), seed_set=seed_set, gamma=0.3, progress=False
    )
    ref = dpsumm.reference.summarize_reference(
        owners,
        validation,
        15,
        seed_set=seed_set,
        omega=res.hasher.omega_,
        offset=res.hasher.offset_,
        schedule=small_schedule(15, 3),
        rng=np.random.default_rng(0),
        method="paper-greedy",
    )
    assert ref["owner"].tolist() == res.owner.tolist() and ref["index"].tolist() == res.index.tolist()
    private = dpsumm.reference.summarize_reference(
        owners,
        validation,
        15,
        seed_set=seed_set,
        omega=res.hasher.omega_,
        offset=res.hasher.offset_,
        schedule=small_schedule(15, 3),
        rng=np.random.default_rng(0),
    )
    assert len(private["owner"]) == 15 and len(set(zip(private["owner"], private["index"]))) == 15
