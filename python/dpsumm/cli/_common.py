"""What every sub-command shares: the one-line usage error, the parser class, output-directory checks."""

from __future__ import annotations

import argparse
import math
from typing import Any, NoReturn

__all__ = ["PROG", "NOT_PRIVATE", "UsageError", "Parser", "writable_dir", "header_arg", "jsonable"]

PROG = "dpsumm"

class UsageError(Exception):
    """A bad command line (raised instead of argparse printing usage and exiting)."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 2 (handled in main)
        raise UsageError(message)


def writable_dir(path: str, option: str) -> Any:
    """Prove ``path`` (a directory, created if missing) writable before any noise is drawn; directories made
    for the check are removed again."""
    import os
    import tempfile
    from pathlib import Path

    from ..errors import InvalidParameterError

    out = Path(path)
    if out.exists() and not out.is_dir():
        raise InvalidParameterError(f"`{option}`: {out} exists and is not a directory", option.lstrip("-"))
    created = [p for p in (out, *out.parents) if not p.exists()]
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".dpsumm-write-check-", dir=out)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise InvalidParameterError(f"`{option}`: cannot write to {out} ({exc.strerror or exc})", option.lstrip("-")) from None
    finally:  # leave no trace: the directory is made again when the results are written
        for p in created:
            try:
                p.rmdir()
            except OSError:
                pass
    return out


def header_arg(value: str) -> object:
    return {"auto": "auto", "yes": True, "no": False}[value]


NOT_PRIVATE = "NOT private: seeded run (--random-state); the noise can be removed by anyone with the seed"


def jsonable(x: Any) -> Any:
    if isinstance(x, float) and math.isinf(x):
        return None
    if isinstance(x, dict):
        return {k: jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    return x


