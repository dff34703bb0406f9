"""Shared test configuration.

Real MNIST (the four IDX files, never downloaded): tests that need it take the ``mnist_dir`` fixture, which
looks in ``$DPSUMM_MNIST_DIR`` when that is set, else in ``../shared/data/mnist`` beside the repository. When
the files are missing such a test is skipped on a developer's machine and FAILS in CI (``CI`` set to
``true`` or ``1``, as ``.ci/run`` and most CI services do), so a CI run cannot pass without them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", derandomize=True, max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=60, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

#: The environment variable that names the MNIST directory.
MNIST_ENV = "DPSUMM_MNIST_DIR"
#: Where the MNIST files are looked for when ``DPSUMM_MNIST_DIR`` is not set.
MNIST_DEFAULT = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "mnist"
MNIST_FILES = (
    "train-images-idx3-ubyte.gz",
    "train-labels-idx1-ubyte.gz",
    "t10k-images-idx3-ubyte.gz",
    "t10k-labels-idx1-ubyte.gz",
)


def in_ci() -> bool:
    """True when running in CI (``CI=true`` or ``CI=1``)."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def mnist_location() -> Path:
    """The MNIST directory the tests use: ``$DPSUMM_MNIST_DIR``, else ``../shared/data/mnist``."""
    env = os.environ.get(MNIST_ENV, "").strip()
    return Path(env).expanduser().resolve() if env else MNIST_DEFAULT


def find_mnist() -> Path | None:
    """The MNIST directory if all four files are there, else None."""
    d = mnist_location()
    return d if all((d / f).is_file() for f in MNIST_FILES) else None


@pytest.fixture(scope="session")
def mnist_dir() -> Path:
    """The real MNIST files: ``$DPSUMM_MNIST_DIR`` or ``../shared/data/mnist``; skipped when missing, failed in CI."""
    d = find_mnist()
    if d is None:
        missing = [f for f in MNIST_FILES if not (mnist_location() / f).is_file()]
        msg = (
            f"MNIST files {missing} not found in {mnist_location()} (set {MNIST_ENV} to the directory holding "
            "the four IDX .gz files)"
        )
        if in_ci():
            pytest.fail(msg + "; CI needs them", pytrace=False)
        pytest.skip(msg)
    return d


@pytest.fixture
def no_messages(monkeypatch):
    """(For the bad-input tests.) Fail the test if any message reaches a party (a release, a nomination, a purchase)."""
    from dpsumm.transport import InProcessTransport

    def refuse(*args, **kwargs):
        raise AssertionError("a party was asked something before the bad input was refused")

    monkeypatch.setattr(InProcessTransport, "request", refuse)
    monkeypatch.setattr(InProcessTransport, "request_many", refuse)


@pytest.fixture
def task_identity() -> Iterator[None]:
    """Flower builds message metadata from the running task's identity; fake one outside a ServerApp."""
    pytest.importorskip("flwr")
    from flwr.supercore.task_identity import TaskIdentity

    saved = (TaskIdentity._task_id, TaskIdentity._run_id, TaskIdentity._node_id)
    TaskIdentity.task_id, TaskIdentity.run_id, TaskIdentity.node_id = 1, 1, 0
    yield
    TaskIdentity._task_id, TaskIdentity._run_id, TaskIdentity._node_id = saved
