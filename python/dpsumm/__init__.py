"""dpsumm: differentially private distributed data summarization under covariate shift.

An implementation of Sarpatwar et al., *Differentially Private Distributed Data Summarization under
Covariate Shift* (NeurIPS 2019), with a Rust core.
"""

from __future__ import annotations

from . import accounting, datasets, experiments, methods, metrics, pfds, preprocessing, reference
from .accounting import Budget, Ledger, Schedule, paper_schedule
from .errors import (
    DataFileError,
    DpsummError,
    EntropyError,
    InvalidParameterError,
    LedgerFormatError,
    NotFittedError,
    PrivacyBudgetError,
    ProtocolError,
)
from .estimator import Summarizer
from .hashing import RFFHasher
from .kernels import BidIndex, best_row, best_rows, kernel_row_means, kernel_sum, mmd2
from .methods import (
    METHODS,
    CentralGreedy,
    ExactGreedy,
    MethodOptionError,
    Nominations,
    PaperGreedy,
    PaperProtocol,
    SummaryMethod,
    Uniform,
)
from .pfds import PFDSResult, make_tree, opt_private_gen, pfds_training_set, share_data
from .preprocessing import DegenerateKernelWarning, median_gamma, scale_to_unit
from .privacy import *  # noqa: F401,F403
from .privacy import __all__ as _privacy_all
from .results import Access, Owner, SummaryResult
from .summarize import summarize

__version__ = "0.1.0"

__all__ = [
    "Access",
    "BidIndex",
    "Budget",
    "Ledger",
    "METHODS",
    "SummaryMethod",
    "Nominations",
    "PaperProtocol",
    "PaperGreedy",
    "CentralGreedy",
    "ExactGreedy",
    "Uniform",
    "MethodOptionError",
    "Owner",
    "Schedule",
    "SummaryResult",
    "accounting",
    "datasets",
    "experiments",
    "metrics",
    "paper_schedule",
    "summarize",
    "Summarizer",
    "preprocessing",
    "scale_to_unit",
    "median_gamma",
    "DegenerateKernelWarning",
    "NotFittedError",
    "DpsummError",
    "DataFileError",
    "LedgerFormatError",
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
    # PFDS (Fioretto & Van Hentenryck 2019): the module, with the entry point dpsumm.pfds.pfds and
    # dpsumm.pfds.Domain. The function is not re-exported under the module's name, which it would shadow.
    "pfds",
    "PFDSResult",
    "make_tree",
    "opt_private_gen",
    "pfds_training_set",
    "share_data",
    *_privacy_all,
]
