"""Where the benchmarks find real data: never outside the repository unless you say so.

MNIST (the four IDX .gz files): ``$DPSUMM_MNIST_DIR`` (the tests use the same variable), else ``$MNIST_DIR``,
else ``./mnist``. Scripts with a ``--data`` option take it first.
"""

from __future__ import annotations

import os
from pathlib import Path


def mnist_dir(arg: str | None = None) -> Path:
    """The MNIST directory: ``arg``, ``$DPSUMM_MNIST_DIR``, ``$MNIST_DIR`` or ``./mnist``."""
    return Path(arg or os.environ.get("DPSUMM_MNIST_DIR") or os.environ.get("MNIST_DIR") or "mnist")
