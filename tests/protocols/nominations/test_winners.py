"""dpsumm.protocols.nominations.winners: the winners purchase sees size rows and is marked uncertified."""

from __future__ import annotations

import numpy as np

import dpsumm


def blobs(seed=0, K=4, n=60, f=5, m=40):
    rng = np.random.default_rng(seed)
    owners = [rng.normal(loc=k * 0.7, scale=0.5, size=(n, f)) for k in range(K)]
    validation = rng.normal(loc=1.0, scale=0.5, size=(m, f))
    return owners, validation


KW = dict(gamma=0.3, progress=False)


def test_purchase_winners_sees_size_rows_and_is_marked_uncertified():
    owners, validation = blobs()
    res = dpsumm.summarize(
        owners, validation, 10, method=dpsumm.Nominations(purchase=dpsumm.Winners(), dim=64), random_state=2, **KW
    )
    assert len(res) == 10 and res.accessed.total == 10
    assert not res.privacy.certified("owners")
    assert any("OUTSIDE" in n for n in res.privacy.notes())
    same = dpsumm.summarize(
        owners,
        validation,
        10,
        method=dpsumm.Nominations(purchase=dpsumm.Nominees(), choice="hashes", dim=64),
        random_state=2,
        **KW,
    )
    assert np.array_equal(res.index, same.index) and np.array_equal(res.owner, same.owner)
