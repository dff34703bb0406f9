"""A full protocol run on the MNIST label split (60,000 rows, 5 owners): Rust-backed ``dpsumm.summarize``
against the pure-numpy reference protocol (``dpsumm.reference.summarize_reference``), paper schedule.

Run: ``python -m pytest benches/bench_protocol.py --benchmark-only --benchmark-group-by=group``
(needs the MNIST files: set DPSUMM_MNIST_DIR).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import dpsumm
from dpsumm import datasets, reference

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _data import mnist_dir  # noqa: E402

MNIST = mnist_dir()  # $DPSUMM_MNIST_DIR, $MNIST_DIR or ./mnist


@pytest.fixture(scope="module")
def split():
    if not (MNIST / "train-images-idx3-ubyte.gz").exists():
        pytest.skip(f"MNIST not found in {MNIST}")
    return datasets.mnist_label_split(MNIST, random_state=0)


@pytest.mark.parametrize("size", [100, 1000])
@pytest.mark.parametrize("impl", ["rust", "numpy"])
def test_protocol(benchmark, split, size, impl):
    benchmark.group = f"private protocol, MNIST 60000 x 784, 5 owners, size {size}"
    s = split
    if impl == "rust":

        def run():
            return dpsumm.summarize(s.owners, s.validation, size, seed_set=s.seed_set, random_state=0, progress=False)

    else:
        h = dpsumm.RFFHasher(784, dim=140, gamma=0.1, seed=0)
        sched = dpsumm.accounting.paper_schedule(size, 5)
        run = lambda: reference.summarize_reference(  # noqa: E731
            s.owners,
            s.validation,
            size,
            seed_set=s.seed_set,
            omega=h.omega_,
            offset=h.offset_,
            schedule=sched,
            rng=np.random.default_rng(0),
        )
    benchmark.pedantic(run, rounds=1, iterations=1, warmup_rounds=0)
