"""Run a script that prints a digest of its results under RAYON_NUM_THREADS 1, 2 and 3, each in a fresh process
(the thread pool's size is fixed when it starts): a seeded result must not depend on the thread count."""

from __future__ import annotations

import os
import subprocess
import sys

__all__ = ["digests_per_thread_count"]


def digests_per_thread_count(script: str) -> set[str]:
    """The set of digests ``script`` printed at 1, 2 and 3 threads (one element when they agree)."""
    digests = set()
    for threads in ("1", "2", "3"):
        env = dict(os.environ, RAYON_NUM_THREADS=threads)
        out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
        digests.add(out.stdout.strip())
    return digests
