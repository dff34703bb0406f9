"""The named choices of the public API, as ``Literal`` types (for type checkers and for validation)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Union, get_args

import numpy.typing as npt

if TYPE_CHECKING:
    from .privacy import Csprng

__all__ = [
    "Method",
    "Reveal",
    "Purchase",
    "METHODS",
    "REVEALS",
    "PURCHASES",
    "NON_PRIVATE_METHODS",
    "ArrayLike",
    "RandomState",
]

#: ``"nominations"`` (recommended; certified for every party), ``"paper"`` (Sarpatwar et al. Alg. 3),
#: ``"central-greedy"`` (non-private: all hashes in one place, no seed rows), ``"paper-greedy"`` (non-private:
#: the paper's seeded greedy baseline), ``"exact-greedy"`` (non-private: exact RBF kernel, no seed rows),
#: ``"uniform"`` (non-private: uniform sampling).
Method = Literal["nominations", "paper", "central-greedy", "paper-greedy", "exact-greedy", "uniform"]
#: What the aggregator receives for a collected row: the raw row, or only its h1 hash (paper App. F).
Reveal = Literal["points", "hashes"]
#: Nominations only: buy the raw rows of every nominee (no leak) or only of the winners (leaks which won).
Purchase = Literal["quotas", "nominees", "winners"]

METHODS: tuple[str, ...] = get_args(Method)
REVEALS: tuple[str, ...] = get_args(Reveal)
PURCHASES: tuple[str, ...] = get_args(Purchase)

#: The methods whose run spends no privacy budget and certifies nothing (``privacy=`` is refused).
NON_PRIVATE_METHODS: tuple[str, ...] = ("paper-greedy", "central-greedy", "exact-greedy", "uniform")

#: Rows: a 2-D numpy array or anything ``np.asarray`` turns into one (nested lists, a DataFrame).
ArrayLike = npt.ArrayLike
#: ``None`` (OS entropy: the only private mode), an ``int`` seed or a :class:`dpsumm.Csprng` (seeded: NOT private).
RandomState = Union[None, int, "Csprng"]
