"""The type aliases of the public API (for type checkers)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Union

import numpy.typing as npt

if TYPE_CHECKING:
    from .privacy import Csprng

__all__ = ["Method", "ArrayLike", "RandomState"]

#: A method by name: ``"nominations"`` (recommended; certified for every party), ``"paper"`` (Sarpatwar et al.
#: Alg. 3), or a non-private baseline (``"central-greedy"``, ``"paper-greedy"``, ``"exact-greedy"``, ``"uniform"``).
Method = Literal["nominations", "paper", "central-greedy", "paper-greedy", "exact-greedy", "uniform"]
#: Rows: a 2-D numpy array or anything ``np.asarray`` turns into one (nested lists, a DataFrame).
ArrayLike = npt.ArrayLike
#: ``None`` (OS entropy: the only private mode), an ``int`` seed or a :class:`dpsumm.privacy.Csprng` (seeded: NOT
#: private).
RandomState = Union[None, int, "Csprng"]
