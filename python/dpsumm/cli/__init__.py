"""Command-line interface: ``dpsumm <subcommand> ...``.

One module per sub-command (:mod:`.account`, :mod:`.demo`, :mod:`.experiment`, :mod:`.summarize`,
:mod:`.flower`), each with an ``add_<name>(subparsers)`` that registers its parser and sets ``func`` to its
handler; :mod:`.run_options` holds the options summarize and flower share, :mod:`.output` what a run prints
and writes. Add a sub-command the same way and list it in :data:`_SUBCOMMANDS`. A user error (a
:class:`~dpsumm.errors.DpsummError` or a bad command line) prints one line to stderr and exits 2.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any
import argparse

from ..errors import DpsummError
from ._common import PROG, Parser, UsageError
from .account import add_account
from .demo import add_demo
from .experiment import add_experiment
from .flower import add_flower
from .summarize import add_summarize

__all__ = ["main", "build_parser"]

_SUBCOMMANDS: tuple[Callable[[Any], None], ...] = (add_account, add_demo, add_experiment, add_flower, add_summarize)


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every subcommand registered."""
    from .. import __version__

    parser = Parser(prog=PROG, description="Differentially private distributed data summarization.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}",
                        help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    for add in _SUBCOMMANDS:
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status (0 ok, 2 user error)."""
    parser = build_parser()
    try:
        args = parser.parse_args(list(argv) if argv is not None else None)
        return int(args.func(args))
    except (UsageError, DpsummError) as exc:
        msg = str(exc).replace("\n", " ")
        print(f"{PROG}: error: {msg}", file=sys.stderr)
        return 2
    except OSError as exc:  # an unreadable input or an unwritable output named on the command line
        msg = str(exc).replace("\n", " ")
        print(f"{PROG}: error: {msg}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
