"""dpsumm.reference.kernels: the numpy twins' own cases."""

from __future__ import annotations

import numpy as np
import pytest

from dpsumm import kernels, reference

#: dpsumm.summarize (the twin of summarize_reference) at gamma 1e-80 warns of the degenerate kernel
pytestmark = pytest.mark.filterwarnings("ignore::dpsumm.preprocessing.DegenerateKernelWarning")


RNG = np.random.default_rng(11)


H = RNG.uniform(-0.3, 0.3, size=(6, 4)).astype(np.float32)  # their hashes, d = 4


T = H.astype(np.float64).mean(0)


def test_stochastic_sample_size_saturates_at_n():
    # Was: OverflowError (math.ceil of inf) for a factor whose product overflows; n for any large factor.
    for ssize in (reference.stochastic_sample_size, kernels.stochastic_sample_size):
        assert ssize(10, 2, 1e308) == 10 and ssize(10, 2, 3.0) == 10 and ssize(10, 5, 1.0) == 2
        assert ssize(0, 5, 1.0) == 0 and ssize(10, 0, 1.0) == 0
    assert reference.nominate(H, T, 0.1, 2, 4, greedy_sample_factor=1e308)[3] == 4
