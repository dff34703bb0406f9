"""dpsumm.messages: request_key tells requests apart exactly when a field differs.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpsumm.messages import LabelHistogramRequest, TargetRequest, ValidationRequest
from dpsumm.parties import release_request_key

FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


REQUESTS = {
    "target gaussian": TargetRequest(n_features=3, dim=16, gamma=0.5, hash_seed=0, release="gaussian", epsilon=1.0,
                                     delta=1e-3, steps=0, eta=0.0, send_rows=False),
    "target mwem": TargetRequest(n_features=3, dim=16, gamma=0.5, hash_seed=0, release="mwem", epsilon=0.5, delta=0.0,
                                 steps=3, eta=0.05, send_rows=True),
    "validation h2": ValidationRequest(n_features=3, dim=16, gamma=0.5, hash_seed=0, method="private", steps=3,
                                       epsilon=0.5, eta=0.05),
    "label histogram": LabelHistogramRequest(label_set=np.arange(3), epsilon=1.0, send_rows=False, n_features=3, dim=8,
                                             gamma=0.5, hash_seed="cells:0", cell_labels=np.arange(3, dtype=np.int64),
                                             centres=np.zeros((3, 8)), bias=np.zeros(3)),
}


field_changes = st.sampled_from([("epsilon", 0.25), ("delta", 1e-4), ("dim", 8), ("gamma", 0.25), ("hash_seed", 1),
                                 ("n_features", 3), ("send_rows", True), ("steps", 0), ("eta", 0.0)])


@FAST
@given(change=field_changes)
def test_the_request_key_tells_requests_apart_exactly_when_a_field_differs(change):
    field, value = change
    base = REQUESTS["target gaussian"]
    other = dataclasses.replace(base, **{field: value})
    assert (release_request_key(other) == release_request_key(base)) == (getattr(base, field) == value)
    hist = REQUESTS["label histogram"]
    moved = dataclasses.replace(hist, centres=hist.centres + 1e-12)
    assert release_request_key(moved) != release_request_key(hist)
    assert release_request_key(dataclasses.replace(hist, centres=hist.centres.copy())) == release_request_key(hist)
