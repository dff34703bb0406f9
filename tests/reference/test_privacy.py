"""dpsumm.reference.privacy: the numpy twins' own cases."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dpsumm
from dpsumm import InvalidParameterError, reference

#: dpsumm.summarize (the twin of summarize_reference) at gamma 1e-80 warns of the degenerate kernel
pytestmark = pytest.mark.filterwarnings("ignore::dpsumm.preprocessing.DegenerateKernelWarning")


RNG = np.random.default_rng(11)


U = RNG.uniform(-1, 1, size=(5, 4))  # values in [-1, 1]


def test_mwem_noise_that_overflows_the_naive_update_is_refused_not_nan():
    # Was: marginals of nan (exp overflowed to inf, then inf / inf): noise scale 4e6 grid steps, 5 rows.
    mwem = reference.ProductMWEM(4, 0.5, random_state=np.random.default_rng(1))
    before = mwem.marginals_.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(InvalidParameterError) as info:
            mwem.release(U.sum(0), 5, 3, epsilon=1e-6)
    assert info.value.argument == "epsilon" and "dpsumm.privacy.ProductMWEM" in str(info.value)
    np.testing.assert_array_equal(mwem.marginals_, before)
    assert mwem.steps_taken_ == 0
    assert np.isfinite(dpsumm.privacy.ProductMWEM(4, 0.5, random_state=1).release(U.sum(0), 5, 3, 1e-6)).all()
