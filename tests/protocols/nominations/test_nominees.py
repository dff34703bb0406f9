"""dpsumm.protocols.nominations.nominees (the default purchase): owners commit by digest and the result's hashes
are the rows' h1.
"""

from __future__ import annotations

import numpy as np

import dpsumm


def blobs(seed=0, K=4, n=60, f=5, m=40):
    rng = np.random.default_rng(seed)
    owners = [rng.normal(loc=k * 0.7, scale=0.5, size=(n, f)) for k in range(K)]
    validation = rng.normal(loc=1.0, scale=0.5, size=(m, f))
    return owners, validation


KW = dict(gamma=0.3, progress=False)


def test_default_owners_commit_by_digest_and_the_result_hashes_are_the_rows_h1():
    owners, validation = blobs(seed=5, K=3, n=50)
    res = dpsumm.summarize(owners, validation, 10, method=dpsumm.Nominations(dim=64), random_state=1, **KW)
    assert res.accessed.hashes == 0 and res.accessed.total == sum(min(20, len(o)) for o in owners)
    np.testing.assert_array_equal(res.hashes, res.hasher.transform(res.points))
    # With purchase="winners" the aggregator chooses on hashes, so the owners send them.
    win = dpsumm.summarize(
        owners, validation, 10, method=dpsumm.Nominations(dim=64, purchase=dpsumm.Winners()), random_state=1, **KW
    )
    assert win.accessed.hashes == sum(min(20, len(o)) for o in owners)
