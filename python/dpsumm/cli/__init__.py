"""Command-line interface: ``dpsumm <subcommand> ...``.

One module per sub-command (:mod:`.account`, :mod:`.demo`, :mod:`.experiment`, :mod:`.summarize`,
:mod:`.flower`), each with an ``add_<name>(subparsers)`` that registers its parser and sets ``func`` to its
handler; :mod:`.run_options` holds the options summarize and flower share, :mod:`.output` what a run prints
and writes. Add a sub-command the same way and list it in :data:`_SUBCOMMANDS`. A user error (a
:class:`~dpsumm.errors.DpsummError` or a bad command line) prints one line to stderr and exits 2.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from ..errors import DpsummError
from ._common import PROG, Parser, UsageError
from .account import add_account
from .demo import add_demo
from .experiment import add_experiment
from .flower import add_flower
from .report import add_report
from .summarize import add_summarize

__all__ = ["main", "build_parser"]

_SUBCOMMANDS: tuple[Callable[[Any], None], ...] = (
    add_account,
    add_demo,
    add_experiment,
    add_flower,
    add_report,
    add_summarize,
)


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every subcommand registered."""
    from .. import __version__

    parser = Parser(prog=PROG, description="Differentially private distributed data summarization.")
    parser.add_argument(
        "--version", action="version", version=f"%(prog)s {__version__}", help="print the version and exit"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    for add in _SUBCOMMANDS:
        add(sub)
    return parser


#: The flags that set an API argument, for an error that names the argument (``feature_range``) or the file it read
#: (``path``) rather than the flag the user typed.
_ARGUMENT_FLAGS: dict[str, tuple[str, ...]] = {
    "feature_range": ("--feature-range",),
    "seed_set": ("--seed-set",),
    "size": ("--size", "--sizes"),
    "epsilon": ("--budget", "--epsilon"),
    "validation_epsilon": ("--validation-budget", "--budget"),
    "delta": ("--delta",),
    "delta_owners": ("--delta",),
    "validation_delta": ("--validation-delta", "--delta"),
    "delta_validation": ("--validation-delta",),
    "directory": ("--data",),
    "gamma": ("--gamma",),
    "random_state": ("--random-state",),
    "privacy": ("--budget", "--validation-budget"),
    "owners": ("--owners", "--owner"),
    "validation": ("--validation", "--consumer"),
    "validation_labels": ("--validation-labels",),
    "labels": ("--labels",),
    "n-features": ("--n-features",),
    "reply-timeout": ("--reply-timeout",),
    "node-wait": ("--node-wait",),
    "poll-interval": ("--poll-interval",),
    "random-state": ("--random-state",),
    "dim": ("--dim",),
    "epsilon_auction": ("--epsilon-auction",),
    "sizes": ("--sizes", "--size"),
    "repeats": ("--repeats",),
    "methods": ("--methods",),
    "pfds_epsilon": ("--pfds-epsilon",),
    "variant": ("--variant",),
    "plot": ("--plot",),
    "scale": ("--scale",),
    "features": ("--features",),
    "strata_columns": ("--strata-columns",),
    "label_column": ("--label-column",),
}


def _flag_of(exc: BaseException, argv: list[str]) -> str | None:
    """The command-line flag behind ``exc``: the flag given just before the file it names (a
    :class:`~dpsumm.DataFileError`), else the flag given for the argument it names."""
    path = getattr(exc, "path", "")
    if path:
        for i, token in enumerate(argv):
            if token == path or token.endswith("=" + path):
                flags = [t for t in argv[: i + 1] if t.startswith("--")]
                if token.startswith("--"):
                    return token.split("=", 1)[0]
                if flags:
                    return flags[-1]
    arg = getattr(exc, "argument", None)
    for flag in _ARGUMENT_FLAGS.get(arg, ()) if isinstance(arg, str) else ():
        if any(t == flag or t.startswith(flag + "=") for t in argv):
            return flag
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status (0 ok, 2 user error)."""
    parser = build_parser()
    try:
        args = parser.parse_args(list(argv) if argv is not None else None)
        status = int(args.func(args))
        sys.stdout.flush()  # a closed pipe shows here, inside the handler below, not at interpreter exit
        return status
    except BrokenPipeError:
        # The reader went away (`dpsumm account --json | head`): stop quietly, as `cat` would, with the
        # status of a SIGPIPE death (128 + 13). Point stdout at /dev/null so the interpreter's final flush
        # does not raise again.
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        return 141
    except (UsageError, DpsummError) as exc:
        msg = str(exc).replace("\n", " ")
        flag = _flag_of(exc, list(argv) if argv is not None else sys.argv[1:])
        if flag is not None and flag not in msg:
            msg = f"{flag}: {msg}"
        print(f"{PROG}: error: {msg}", file=sys.stderr)
        return 2
    except OSError as exc:  # an unreadable input or an unwritable output named on the command line
        msg = str(exc).replace("\n", " ")
        print(f"{PROG}: error: {msg}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
