"""dpsumm on Flower: owners and the consumer as SuperNodes, the aggregator as a ServerApp.

Needs Flower (``pip install "dpsumm[flower]"``, pinned to flwr 1.41.0). See ``docs/flower.md``.

* :class:`FlowerTransport`: the protocol's :class:`~dpsumm.transport.Transport` over a Flower ``Grid``.
* :mod:`dpsumm.flower.server_app` (``app``): the ServerApp; :mod:`dpsumm.flower.client_app` (``app``):
  the ClientApp; :func:`write_app` writes the app directory ``flwr run`` needs.
* :func:`encode` / :func:`decode`: protocol messages to and from Flower ``RecordDict``.
* :class:`LocalFederation`: SuperLink and SuperNodes as local processes; :func:`load_result`.
"""

from __future__ import annotations

try:
    import flwr  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without flwr
    raise ImportError("dpsumm.flower needs Flower: pip install 'dpsumm[flower]' (flwr==1.41.0)") from exc

from .codec import decode, encode
from .config import FLWR_VERSION, RUN_CONFIG_DEFAULTS, FlowerRunConfig, write_app
from .local import FederationError, LocalFederation
from .server_app import load_result, run_summary, save_result
from .tls import TlsFiles, make_node_key, make_tls
from .transport import FlowerTransport

__all__ = [
    "FLWR_VERSION",
    "RUN_CONFIG_DEFAULTS",
    "FederationError",
    "FlowerRunConfig",
    "FlowerTransport",
    "LocalFederation",
    "TlsFiles",
    "decode",
    "encode",
    "load_result",
    "make_node_key",
    "make_tls",
    "run_summary",
    "save_result",
    "write_app",
]
