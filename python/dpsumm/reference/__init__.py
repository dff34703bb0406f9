"""Pure-numpy twins of the Rust kernels.

They exist to test the Rust core (same inputs, same outputs: to float tolerance for deterministic
kernels, in distribution for randomized ones) and to benchmark it. They are written for clarity, not
speed, and are never used by the library itself. Randomized twins take a ``numpy.random.Generator``
and are **not** private: privacy noise in dpsumm comes only from the Rust CSPRNG. Each checks its arguments as
its Rust-backed twin does: a bad one is refused with the same :class:`~dpsumm.DpsummError` subclass, naming
it, before any work (tests/reference/test_reference.py).
"""

from .kernels import *  # noqa: F401,F403
from .kernels import __all__ as _kernels_all
from .privacy import *  # noqa: F401,F403
from .privacy import __all__ as _privacy_all
from .protocol import summarize_reference

__all__ = [*_kernels_all, "summarize_reference", *_privacy_all]
