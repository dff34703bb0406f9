"""Exceptions raised by dpsumm. Every one is a subclass of :class:`DpsummError`."""

from __future__ import annotations

__all__ = [
    "DpsummError",
    "InvalidParameterError",
    "PrivacyBudgetError",
    "ProtocolError",
    "EntropyError",
    "NotFittedError",
]


class DpsummError(Exception):
    """Base class of every exception dpsumm raises on purpose."""


class InvalidParameterError(DpsummError, ValueError):
    """An argument has a bad value, shape, dtype or contents.

    Raised before any privacy budget is spent. ``argument`` names the offending argument.
    """

    argument: str | None = None

    def __init__(self, message: str, argument: str | None = None) -> None:
        super().__init__(message)
        if argument is not None:
            self.argument = argument


class PrivacyBudgetError(DpsummError, ValueError):
    """A privacy budget cannot be met, or a requested release would exceed it."""

    argument: str | None = None


class ProtocolError(DpsummError, RuntimeError):
    """A party broke the protocol (a malformed message, a failed verification, a missing reply)."""


class EntropyError(DpsummError, OSError):
    """The operating system could not provide entropy for the CSPRNG."""


class NotFittedError(DpsummError, ValueError, AttributeError):
    """An estimator was used before ``fit`` (scikit-learn's convention: a ValueError and AttributeError)."""
