"""Pure-numpy twins of the Rust kernels.

They exist to test the Rust core (same inputs, same outputs: to float tolerance for deterministic
kernels, in distribution for randomized ones) and to benchmark it. They are written for clarity, not
speed, and are never used by the library itself. Randomized twins take a ``numpy.random.Generator``
and are **not** private: privacy noise in dpsumm comes only from the Rust CSPRNG. Each checks its arguments as
its Rust-backed twin does: a bad one is refused with the same :class:`~dpsumm.DpsummError` subclass, naming
it, before any work (tests/reference/test_reference.py).
"""

from .kernels import (
    best_row,
    best_rows,
    greedy_select,
    kernel_greedy,
    kernel_row_means,
    kernel_sum,
    mmd2,
    nominate,
    rff_transform,
    stochastic_greedy_select,
    stochastic_sample_size,
)
from .privacy import *  # noqa: F401,F403
from .privacy import __all__ as _privacy_all
from .protocol import summarize_reference

__all__ = [
    "rff_transform",
    "best_row",
    "best_rows",
    "mmd2",
    "kernel_sum",
    "kernel_row_means",
    "greedy_select",
    "kernel_greedy",
    "nominate",
    "stochastic_greedy_select",
    "stochastic_sample_size",
    "summarize_reference",
    *_privacy_all,
]
