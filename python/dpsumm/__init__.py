"""dpsumm: differentially private distributed data summarization under covariate shift.

An implementation of Sarpatwar et al., *Differentially Private Distributed Data Summarization under
Covariate Shift* (NeurIPS 2019), with a Rust core.
"""

from __future__ import annotations

from . import accounting, reference
from .accounting import Budget, Ledger, Schedule, paper_schedule
from .errors import DpsummError, EntropyError, InvalidParameterError, PrivacyBudgetError, ProtocolError
from .hashing import RFFHasher
from .summarize import METHODS, Access, Owner, SummaryResult, summarize
from .kernels import BidIndex, best_row, best_rows, kernel_row_means, kernel_sum, mmd2
from .privacy import *  # noqa: F401,F403
from .privacy import __all__ as _privacy_all

__version__ = "0.1.0"

__all__ = [
    "Access",
    "BidIndex",
    "Budget",
    "Ledger",
    "METHODS",
    "Owner",
    "Schedule",
    "SummaryResult",
    "accounting",
    "paper_schedule",
    "summarize",
    "DpsummError",
    "EntropyError",
    "InvalidParameterError",
    "PrivacyBudgetError",
    "ProtocolError",
    "RFFHasher",
    "best_row",
    "best_rows",
    "kernel_row_means",
    "kernel_sum",
    "mmd2",
    "reference",
    *_privacy_all,
]
