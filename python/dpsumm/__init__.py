"""dpsumm: differentially private distributed data summarization under covariate shift.

A data buyer (the consumer, with a small validation set) assembles a training set from many private data
owners through a trusted but parsimonious aggregator, so that no owner learns about the others' data or the
buyer's, and the buyer pays for few raw rows. :func:`summarize` runs it in one process; :mod:`dpsumm.flower` runs
each party on its own Flower node.

The names here are what a user calls; the primitives live in their submodules (:mod:`dpsumm.kernels`,
:mod:`dpsumm.privacy`, :mod:`dpsumm.hashing`, :mod:`dpsumm.accounting`, ...).
"""

from __future__ import annotations

import importlib
from typing import Any

from . import accounting, datasets, metrics, pfds
from .accounting import Budget, Ledger
from .errors import (
    DataFileError,
    DpsummError,
    EntropyError,
    InvalidParameterError,
    NotFittedError,
    PrivacyBudgetError,
    ProtocolError,
)
from .estimator import Summarizer
from .hashing import RFFHasher
from .methods import (
    ByDirection,
    ByLabel,
    ByStrata,
    CentralGreedy,
    ExactGreedy,
    Nominations,
    Nominees,
    PaperGreedy,
    PaperProtocol,
    Uniform,
    Winners,
)
from .preprocessing import median_gamma, scale_to_unit
from .results import Owner, SummaryResult
from .summarize import summarize

__version__ = "0.4.0"

__all__ = [
    "summarize",
    "Summarizer",
    "Owner",
    "SummaryResult",
    "Budget",
    "Ledger",
    "Nominations",
    "ByDirection",
    "Nominees",
    "ByLabel",
    "ByStrata",
    "Winners",
    "PaperProtocol",
    "PaperGreedy",
    "CentralGreedy",
    "ExactGreedy",
    "Uniform",
    "RFFHasher",
    "scale_to_unit",
    "median_gamma",
    "DpsummError",
    "InvalidParameterError",
    "ProtocolError",
    "PrivacyBudgetError",
    "DataFileError",
    "NotFittedError",
    "EntropyError",
    "accounting",
    "datasets",
    "metrics",
    "pfds",
]

#: Submodules reached as ``dpsumm.NAME`` without importing them here (each is imported on first access).
_SUBMODULES = ("experiments", "preprocessing", "reference")

#: Names this package exported before 0.2 and where they live now. Their old paths went in 0.4.0, after one
#: release with a DeprecationWarning; ``dpsumm.NAME`` now says where to import NAME from.
_REMOVED: dict[str, str] = {
    **{
        name: "dpsumm.privacy"
        for name in (
            "Csprng",
            "ProductMWEM",
            "stochastic_round",
            "quantize_column_sums",
            "check_random_state",
            "NEIGHBOURS",
            "discrete_gaussian",
            "gaussian_on_grid",
            "gaussian_mean_release",
            "laplace_count_release",
        )
    },
    **{
        name: "dpsumm.kernels"
        for name in ("BidIndex", "best_row", "best_rows", "kernel_row_means", "kernel_sum", "mmd2")
    },
    **{
        name: "dpsumm.pfds"
        for name in ("PFDSResult", "make_tree", "opt_private_gen", "pfds_training_set", "share_data")
    },
    **{name: "dpsumm.methods" for name in ("METHODS", "SummaryMethod", "MethodOptionError")},
    "Schedule": "dpsumm.accounting",
    "paper_schedule": "dpsumm.accounting",
    "Access": "dpsumm.results",
    "DegenerateKernelWarning": "dpsumm.preprocessing",
    "LedgerFormatError": "dpsumm.errors",
}


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f"dpsumm.{name}")
    where = _REMOVED.get(name)
    if where is None:
        raise AttributeError(f"module 'dpsumm' has no attribute {name!r}")
    raise AttributeError(
        f"module 'dpsumm' has no attribute {name!r}: it moved to {where}.{name} (from {where} import {name})"
    )
