"""The paper's protocol (Sarpatwar et al. 2019, Alg. 3, reproduced): its aggregator
(:mod:`~dpsumm.protocols.paper.aggregator`: h2 releases every epoch and the private auction) and its method objects
(:mod:`~dpsumm.protocols.paper.method`: :class:`PaperProtocol` and the non-private :class:`PaperGreedy`).
"""

from .aggregator import Aggregator, ProtocolConfig, RoundRecord, make_config, run_protocol
from .method import PAPER_DIM, PaperGreedy, PaperProtocol

__all__ = [
    "PaperProtocol",
    "PaperGreedy",
    "PAPER_DIM",
    "Aggregator",
    "ProtocolConfig",
    "RoundRecord",
    "make_config",
    "run_protocol",
]
