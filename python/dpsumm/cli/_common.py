"""What every sub-command shares: the one-line usage error, the parser class, output-directory checks."""

from __future__ import annotations

import argparse
import math
import os
import tempfile
from pathlib import Path
from typing import Any, NoReturn

from ..errors import InvalidParameterError

__all__ = [
    "PROG",
    "NOT_PRIVATE",
    "UsageError",
    "Parser",
    "writable_dir",
    "header_arg",
    "jsonable",
    "seeded_note",
    "add_base_seed",
    "default_output_dir",
    "METHOD_ROWS",
    "method_legend",
]

PROG = "dpsumm"


class UsageError(Exception):
    """A bad command line (raised instead of argparse printing usage and exiting)."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 2 (handled in main)
        raise UsageError(message)


def writable_dir(path: str, option: str) -> Any:
    """Prove ``path`` (a directory, created if missing) writable before any noise is drawn; directories made
    for the check are removed again."""
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
        raise InvalidParameterError(
            f"`{option}`: cannot write to {out} ({exc.strerror or exc})", option.lstrip("-")
        ) from None
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


def seeded_note(random_state: int, default: int | None) -> str:
    """The line an experiment command prints about its seed: every run of ``demo`` and ``experiment`` is seeded
    (reproducible tables), by default too, and says so."""
    how = f"by default (--random-state {random_state})" if random_state == default else f"--random-state {random_state}"
    return (
        f"NOT private: every run above is seeded, {how}: reproducible, and the noise can be removed by anyone "
        "with the seed. For a private run use `dpsumm summarize` or `dpsumm.summarize` without a seed."
    )


def add_base_seed(p: argparse.ArgumentParser, default: int, runs: str) -> None:
    """``--random-state`` of a command whose ``runs`` are always seeded (``demo``, ``experiment``; see
    :func:`seeded_note`), ``default`` when not given."""
    p.add_argument(
        "--random-state",
        type=int,
        default=default,
        help=f"base seed (default {default}: {runs} seeded, reproducible and NOT private)",
    )


def default_output_dir(name: str) -> Any:
    """Where a command writes when the user names no directory: ``$XDG_CACHE_HOME/dpsumm/<name>`` (default
    ``~/.cache/dpsumm/<name>``), outside any source tree; the command prints it."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "dpsumm" / name


#: What each row of an experiment table is (printed under the table).
METHOD_ROWS = {
    "nominations": "dpsumm's private protocol: the consumer releases what it wants privately, the owners offer rows, "
    "the aggregator buys and chooses; every party certified (each party's epsilon below)",
    "paper": "Sarpatwar et al.'s private protocol (Alg. 3) at the paper's schedule (or --budget), certified auction; "
    "kept for reproduction: no better than uniform at useful epsilon",
    "pfds": "PFDS (Fioretto & Van Hentenryck): the agents' DP synthetic data, subsampled to the size",
    "central-greedy": "NOT private baseline: greedy MMD over every owner's hashes in one place (the comparison column's "
    "reference when run)",
    "exact-greedy": "NOT private baseline: greedy with the exact RBF kernel over every raw row",
    "paper-greedy": "NOT private baseline: the paper's greedy, public seed rows kept in the summary while it runs",
    "uniform": "NOT private baseline: rows drawn uniformly at random from all owners",
}


def method_legend(methods: Any) -> str:
    """One line per method present, in table order: what the row is."""
    from ..experiments.records import _display_rank

    names = sorted(dict.fromkeys(methods), key=_display_rank)
    return "\n".join(f"  {m}: {METHOD_ROWS.get(m, '')}" for m in names)


def jsonable(x: Any) -> Any:
    if isinstance(x, float) and math.isinf(x):
        return None
    if isinstance(x, dict):
        return {k: jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    return x
