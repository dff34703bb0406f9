"""One request of each kind the consumer answers with a release (its hashed mean by the discrete Gaussian and by
MWEM, the paper's h2 release, the label purchase's histogram): shared by the tests of the messages and the parties."""

from __future__ import annotations

import numpy as np

from dpsumm.messages import TargetRequest, ValidationRequest
from dpsumm.protocols.nominations.cell_messages import CellHistogramRequest

__all__ = ["REQUESTS"]

REQUESTS = {
    "target gaussian": TargetRequest(
        n_features=3,
        dim=16,
        gamma=0.5,
        hash_seed=0,
        release="gaussian",
        epsilon=1.0,
        delta=1e-3,
        steps=0,
        eta=0.0,
        send_rows=False,
    ),
    "target mwem": TargetRequest(
        n_features=3,
        dim=16,
        gamma=0.5,
        hash_seed=0,
        release="mwem",
        epsilon=0.5,
        delta=0.0,
        steps=3,
        eta=0.05,
        send_rows=True,
    ),
    "validation h2": ValidationRequest(
        n_features=3, dim=16, gamma=0.5, hash_seed=0, method="private", steps=3, epsilon=0.5, eta=0.05
    ),
    "label histogram": CellHistogramRequest(
        key_set=np.arange(3),
        epsilon=1.0,
        send_rows=False,
        n_features=3,
        dim=8,
        gamma=0.5,
        hash_seed="cells:0",
        cell_keys=np.arange(3, dtype=np.int64),
        centres=np.zeros((3, 8)),
        bias=np.zeros(3),
    ),
}
