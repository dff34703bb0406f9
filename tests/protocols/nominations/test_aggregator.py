"""dpsumm.protocols.nominations.aggregator: the temperature rule, and a faulty owner excluded with the run
completed.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import dpsumm
from corrupt_replies import excluded as corrupt_excluded
from corrupt_replies import refused as corrupt_refused
from corrupt_replies import replace
from corrupt_replies import run as corrupt_run
from dpsumm.messages import (
    Message,
    NominationRequest,
    PurchaseReply,
    PurchaseRequest,
    TargetRelease,
)
from dpsumm.parties import ConsumerParty, OwnerParty
from dpsumm.protocols.nominations.aggregator import TEMPERATURE_FLOOR, TEMPERATURE_PER_SIGMA, temperature_for
from dpsumm.transport import InProcessTransport
from federation_data import blobs

KW = dict(gamma=0.3, progress=False)


def test_temperature_rule():
    assert temperature_for(0.0) == TEMPERATURE_FLOOR
    assert temperature_for(1.0) == TEMPERATURE_PER_SIGMA
    with pytest.raises(dpsumm.DpsummError):
        temperature_for(float("nan"))


class Faulty:
    def __init__(self, party, fault):
        self.party, self.fault = party, fault

    def handle(self, m: Message) -> Message:
        r = self.party.handle(m)
        f = self.fault
        if isinstance(m, NominationRequest):
            # The owner commits with h1 hashes or (purchase="nominees", the default) BLAKE2b digests of them:
            # each fault corrupts whichever it sent.
            field = "digests" if r.digests is not None else "hashes"
            c = getattr(r, field)
            if f == "crash":
                raise RuntimeError("owner crashed")
            if f == "nan":  # a non-finite hash; a digest that is not bytes
                h = c.astype(np.float64).copy()
                h[0, 0] = np.nan
                return dataclasses.replace(r, **{field: h})
            if f == "too-many":
                return dataclasses.replace(r, tokens=np.arange(len(r.tokens) + 1), **{field: np.vstack([c, c[:1]])})
            if f == "too-few":
                return dataclasses.replace(r, tokens=r.tokens[:-1], **{field: c[:-1]})
            if f == "inflated-hash":  # a hash outside h1's range; a digest of no row it holds (caught at purchase)
                h = c.copy()
                if field == "hashes":
                    h[:, :] = np.sqrt(2.0 / h.shape[1]) * 1.5
                else:
                    h[:, 0] ^= 0xFF
                return dataclasses.replace(r, **{field: h})
            if f == "repeated":
                t = r.tokens.copy()
                t[1] = t[0]
                return dataclasses.replace(r, tokens=t)
            if f == "wrong-type":
                return TargetRelease(
                    noisy_mean=np.zeros(3), exact_mean=np.zeros(3), n_rows=1, sigma=0.0, granularity=0.0
                )
        if isinstance(m, PurchaseRequest):
            if f == "purchase-crash":
                raise RuntimeError("gone")
            if f == "altered-row":
                pts = r.points.copy()
                pts[0, 0] += 1e-6
                return PurchaseReply(tokens=r.tokens, points=pts, labels=r.labels)
            if f == "other-row":
                pts = r.points.copy()
                pts[0] = pts[-1]
                return PurchaseReply(tokens=r.tokens, points=pts, labels=r.labels)
            if f == "nan-row":
                pts = r.points.copy()
                pts[0, 0] = np.nan
                return PurchaseReply(tokens=r.tokens, points=pts, labels=r.labels)
        return r


FAULTS = [
    "crash",
    "nan",
    "too-many",
    "too-few",
    "inflated-hash",
    "repeated",
    "wrong-type",
    "purchase-crash",
    "altered-row",
    "other-row",
    "nan-row",
]


@pytest.mark.parametrize("purchase", [dpsumm.Nominees(), dpsumm.Winners()], ids=["nominees", "winners"])
@pytest.mark.parametrize("fault", FAULTS)
def test_a_faulty_owner_is_excluded_and_the_run_completes(fault, purchase):
    owners, validation = blobs(seed=3, K=4, n=60)
    parties = {f"owner-{k}": OwnerParty(o, None, f"owner-{k}") for k, o in enumerate(owners)}
    parties["owner-1"] = Faulty(parties["owner-1"], fault)
    parties["consumer"] = ConsumerParty(validation, dpsumm.privacy.Csprng(0).derive("consumer"))
    res = dpsumm.summarize(
        owners,
        validation,
        20,
        method=dpsumm.Nominations(purchase=purchase, dim=64),
        random_state=0,
        transport=InProcessTransport(parties),
        **KW,
    )
    excluded = [e for e in res.events if e["event"] == "excluded"]
    if (
        purchase.name == "winners"
        and fault in ("purchase-crash", "altered-row", "other-row", "nan-row")
        and 1
        not in set(
            dpsumm.summarize(
                owners,
                validation,
                20,
                method=dpsumm.Nominations(purchase=dpsumm.Winners(), dim=64),
                random_state=0,
                **KW,
            ).owner.tolist()
        )
    ):
        pytest.skip("owner-1 has no winner here, so it is never asked to sell")
    assert [e["owner"] for e in excluded] == ["owner-1"], res.events
    if purchase.name == "nominees" and fault in ("inflated-hash", "altered-row", "other-row"):
        # committed by digest: a forged digest or a row that is not the nominated one is caught at the purchase
        assert excluded[0]["phase"] == "purchase" and "nominated digest" in excluded[0]["reason"], excluded
    assert len(res) == 20
    assert 1 not in set(res.owner.tolist())
    pairs = list(zip(res.owner.tolist(), res.index.tolist()))
    assert len(set(pairs)) == 20
    for (k, i), x in zip(pairs, res.points):
        assert np.array_equal(x, owners[k][i])


# -- replies of the wrong type, dtype or range (tests/corrupt_replies.py) ----------------------------------------

KERNEL = dpsumm.Nominations(dim=32, purchase=dpsumm.Nominees(), choice="kernel")  # the consumer sends D_v's rows


@pytest.mark.parametrize(
    "change, match",
    [
        (replace(sigma="junk"), "impossible sigma"),
        (replace(sigma=None), "impossible sigma"),
        (lambda r, m: dataclasses.replace(r, noisy_mean=r.noisy_mean.astype(complex)), "malformed noisy_mean"),
        (replace(exact_mean=None), "malformed exact_mean"),
        (lambda r, m: dataclasses.replace(r, rows=np.full_like(r.rows, 1e300)), "float32 range"),
        (replace(n_rows=10**30), "impossible validation size"),
    ],
    ids=["sigma-str", "sigma-none", "complex-mean", "no-exact-mean", "rows-beyond-float32", "n_rows-1e30"],
)
def test_a_malformed_target_release_is_a_protocol_error(change, match):
    """A sigma that is not a number, a mean of complex numbers or none, rows the float32 kernels overflow on: each
    used to raise a TypeError, a ComplexWarning or an InvalidParameterError about `B`."""
    corrupt_refused(KERNEL, "target_release", change, match)


@pytest.mark.parametrize(
    "change, match",
    [
        (lambda r, m: dataclasses.replace(r, tokens=r.tokens.astype(np.float64)), "other tokens"),
        (replace(labels=None), "sold no labels"),
        (lambda r, m: dataclasses.replace(r, points=np.full_like(r.points, 1e300)), "cannot hash"),
    ],
    ids=["float-tokens", "no-labels", "rows-beyond-float32"],
)
def test_a_malformed_purchase_reply_excludes_its_owner(change, match):
    """Tokens of floats used to pass as the tokens asked for; a labelled owner's sale without labels raised an
    IndexError when its row won; rows h1 cannot hash an InvalidParameterError about `X`."""
    result = corrupt_excluded(KERNEL, "purchase_reply", change, match)
    assert len(result) == 8 and 0 not in set(result.owner.tolist())


def test_the_mwem_release_has_no_sigma_and_a_sigma_that_is_not_a_number_is_refused():
    """The consumer's MWEM release carries sigma NaN (no Gaussian noise): the run completes, reporting it; another
    sigma is refused, as a sigma other than 0 for the exact release, and an MWEM release outside h1's range."""
    mwem = dpsumm.Nominations(dim=32, purchase=dpsumm.Nominees(), validation_release="mwem")
    result = corrupt_run(mwem, "consumer", "target_release", lambda r, m: r)
    assert len(result) == 8 and np.isnan(result.extra["sigma"])
    corrupt_refused(mwem, "target_release", replace(sigma="nan"), "impossible sigma")
    corrupt_refused(mwem, "target_release", replace(sigma=0.5), "impossible sigma")  # accepted, and reported, before
    corrupt_refused(  # a g~ of 1e300 reached every owner
        mwem, "target_release", lambda r, m: dataclasses.replace(r, noisy_mean=r.noisy_mean + 1e300), "range of h1"
    )
    exact = dpsumm.Nominations(dim=32, purchase=dpsumm.Nominees(), validation_release="exact")
    corrupt_refused(exact, "target_release", replace(sigma=5.0), "impossible sigma")  # no noise: accepted before
