"""How soon Flower retries an object pull: the first retry sooner than Flower's 1 s, in processes dpsumm runs.

Flower hands a message's content on through object stores: a SuperNode receives a message's metadata and then
pulls its content from the SuperLink, while its SuperExec may already have started the ClientApp that pulls the
same content from the SuperNode; a ServerApp pulls a reply's content once the reply is announced. A pull that finds
an object not there yet retries after **1 s**, doubling up to 10 s
(``flwr.supercore.inflatable.inflatable_utils.pull_objects``). In a protocol of short request/reply exchanges that
back-off, not the work, sets most of a message's latency. :func:`patch_object_pulls` makes the first retry shorter
in the process that calls it; the doubling and its cap, and so the longest a pull waits before it gives up, stay
Flower's. dpsumm calls it only in processes it runs for itself: its SuperNode launcher and the ClientApps it forks
(:mod:`dpsumm.flower.supernode`) and its ServerApp's entry point (:mod:`dpsumm.flower.server_app`), with their poll
interval.
"""

from __future__ import annotations

__all__ = ["patch_object_pulls"]


def patch_object_pulls(first_retry: float) -> bool:
    """Make the first retry of Flower's object pulls in this process ``first_retry`` seconds (Flower's: 1 s),
    doubling up to Flower's cap as before. Returns False, and changes nothing, if Flower's pull functions are not
    the expected ones."""
    try:
        from flwr.supercore.inflatable import inflatable_utils
    except ImportError:
        return False
    functions = [getattr(inflatable_utils, n, None) for n in ("pull_objects", "pull_and_inflate_object_from_tree")]
    defaults = [getattr(f, "__kwdefaults__", None) for f in functions]
    if not all(isinstance(d, dict) and "initial_backoff" in d for d in defaults):
        return False
    for d in defaults:
        d["initial_backoff"] = first_retry  # type: ignore[index]
    return True
