"""The Flower app's configuration: run config (chosen by whoever starts the run), node config (chosen
by each SuperNode's operator) and the app directory that ``flwr run`` ships to the SuperLink.

Run config (``[tool.flwr.app.config]`` in the app's ``pyproject.toml``, override with
``flwr run ... --run-config 'size=20 owners=3'``). Every key must exist in the app's pyproject to be
overridable, so :func:`write_app` writes them all. TOML has no null: ``""`` (the default of every optional
key) means "not set". The method's options are keys too (``nominees``, ``purchase``, ``dim``, ... with ``_``
written ``-``); a key left ``""`` takes the method object's own default (:mod:`dpsumm.methods`), and a key
the chosen method does not have is refused. The run config builds the same method object and budget as
:func:`dpsumm.summarize` and the CLI for the same inputs.

=============================  =============  ===============================================================
key                            default        meaning
=============================  =============  ===============================================================
``size``                       10             summary size p
``owners``                     0              owner SuperNodes to wait for (required, >= 1)
``n-features``                 0              features per row (public schema; required, >= 1)
``method``                     nominations    ``nominations`` (recommended), ``paper`` (Alg. 3) or ``paper-greedy``
``gamma``                      "median"       RBF width, or ``"median"``: the median heuristic on the public seed rows
``seed-set``                   ""             public seed rows generated uniformly in the box (a count; "": 150
                                              for the median heuristic, the schedule's count for the paper's)
``seed-set-path``              ""             public seed rows from a file on the ServerApp's machine instead
``feature-low/high``           0.0, 1.0       public box of generated seed rows
``budget-epsilon``             ""             the owners' epsilon (paper); with ``budget-delta`` ("": 1e-6)
``budget-validation-epsilon``  ""             the validation set's epsilon; with ``budget-validation-delta`` ("": 1e-6)
``random-state``               ""             "": OS entropy (private). An int >= 0: seeded, reproducible, NOT private
``node-wait``                  ""             seconds to wait for the owners and the consumer to connect ("":
                                              120 + 0.5 per owner, :func:`default_timeouts`)
``reply-timeout``              ""             seconds an exchange waits before a silent party is excluded ("":
                                              60 + 0.5 per owner, :func:`default_timeouts`)
``poll-interval``              0.05           seconds between two polls of the SuperLink for replies
``output``                     ""             where the ServerApp writes the result (.npz, on its machine)
``owner-rows``                 ""             each owner's public size, ``"NAME=ROWS,NAME=ROWS"`` (every owner):
                                              the aggregator refuses a row count an owner states that differs
                                              (docs/explanation/lying-owners.md); "": the owners' own statements
``simulation-nodes``           ""             on Flower's Simulation Engine only: a JSON list of one node config per
                                              virtual SuperNode (:mod:`dpsumm.flower.simulation`)
*method options*               ""             one key per option of the methods that run on Flower and of every
                                              purchase (:data:`METHOD_KEYS`, made from the options'
                                              declarations: ``nominees``, ``purchase``, ``dim``, ``label-set``,
                                              ...; their classes' docstrings give the meaning). ``purchase`` is a
                                              purchase's name (a key of :data:`dpsumm.methods.PURCHASES`); a
                                              purchase option alone picks the purchase that has it
``label-set``                  ""             the public label set (alone: the default purchase, which has it),
                                              as text, comma-separated (``"0,1,2"``; numbers read as numbers) or
                                              a JSON list
                                              (``'["cat", "dog"]'``, ``'["0", "1"]'`` for string labels);
                                              :func:`dpsumm.methods.parse_label_set`
=============================  =============  ===============================================================

Node config (``flower-supernode --node-config 'role="owner" name="hospital-a" data="/data/a.npy"'``):
``role`` (``owner`` or ``consumer``), ``name`` (unique party name; owners are ordered by name, which
fixes tie-breaks and ``result.owner`` indices), ``data`` (.npy/.csv/.parquet: the owner's rows or the
consumer's validation rows), optional ``labels`` (.npy or one-column file: an owner's row labels, or the
consumer's validation labels, which the ByLabel purchase needs and no other method reads) and
``allow-seeded`` (``true`` lets a run's ``random-state`` seed this party's noise: reproducible and NOT private;
without it the party refuses such a run, since the run config is chosen by whoever starts the run, not by
the party) and, for the consumer, ``allow-exact-release`` (``true`` lets it release its exact hashed validation
mean, with no noise, which ``validation-release="exact"`` and the paper's non-private baseline ask for; without it
the consumer refuses such a run, for the same reason), and ``max-epsilon`` / ``max-delta`` (the most this node's party
spends in a run; the consumer's node defaults to 4 and 1e-5, an owner's node has no cap unless set:
:mod:`dpsumm.flower.caps`).
"""

from __future__ import annotations

import numbers
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import __version__
from .._validation import finite_float
from ..accounting import Budget
from ..errors import InvalidParameterError
from ..hashing import MAX_N_FEATURES
from ..methods import (
    METHOD_CLASSES,
    PURCHASES,
    SummaryMethod,
    budget_from,
    method_from_options,
    option_declarations,
    parse_label_set,
    parse_levels,
)
from ..protocols.base import MAX_COUNT, MAX_SEED_CELLS, Plan

__all__ = [
    "RUN_CONFIG_DEFAULTS",
    "FlowerRunConfig",
    "write_app",
    "natural_key",
    "FLWR_VERSION",
    "METHOD_KEYS",
    "FLOWER_METHODS",
    "default_timeouts",
    "parse_owner_rows",
]

FLWR_VERSION = "1.41.0"

#: Longest wait a run config may ask for (``node-wait``, ``reply-timeout``, ``poll-interval``): the longest timeout
#: the platform's locks and waits accept.
MAX_SECONDS = float(threading.TIMEOUT_MAX)

#: The run config's waits when not set (:func:`default_timeouts`): ``node-wait`` and ``reply-timeout`` at a base
#: plus ``TIMEOUT_PER_OWNER`` seconds per owner. One exchange asks every owner at once; on Flower's Simulation Engine
#: the virtual nodes answer a few at a time (one ClientApp process each), so an exchange and the discovery last about
#: K times one answer (the K = 1,000 run of benches/results/simulation.json, docs/guide/flower.md).
NODE_WAIT_BASE = 120.0
REPLY_TIMEOUT_BASE = 60.0
TIMEOUT_PER_OWNER = 0.5


def default_timeouts(owners: int) -> tuple[float, float]:
    """``(node-wait, reply-timeout)`` for a run of ``owners`` owners when the run config does not set them:
    ``NODE_WAIT_BASE + TIMEOUT_PER_OWNER * owners`` and ``REPLY_TIMEOUT_BASE + TIMEOUT_PER_OWNER * owners``
    (K = 3: 121.5 s and 61.5 s; K = 1,000: 620 s and 560 s), so that a user need not raise them for a thousand
    owners. A silent owner then costs an exchange ``reply-timeout`` seconds: set it lower for a deployment whose
    nodes answer in parallel."""
    k = max(int(owners), 0)
    return NODE_WAIT_BASE + TIMEOUT_PER_OWNER * k, REPLY_TIMEOUT_BASE + TIMEOUT_PER_OWNER * k


#: The methods that run over Flower (the central baselines need every row in one process).
FLOWER_METHODS = tuple(name for name, cls in METHOD_CLASSES.items() if cls.distributed)
#: The classes whose options a run config may set: those methods and every purchase.
FLOWER_CLASSES = {
    *(METHOD_CLASSES[name].__name__ for name in FLOWER_METHODS),
    *(c.__name__ for c in PURCHASES.values()),
}

#: Run config key -> method option, for every option of a method that runs on Flower, except ``schedule``
#: (an object; ``t-init``/``t-subs``/``epsilon-auction`` set what a run config can).
METHOD_KEYS: dict[str, str] = {
    d.run_config_key: name
    for name, d in option_declarations().items()
    if any(owner in FLOWER_CLASSES for owner in d.owners)
}

RUN_CONFIG_DEFAULTS: dict[str, Any] = {
    "size": 10,
    "owners": 0,
    "n-features": 0,
    "method": "nominations",
    "gamma": "median",
    "seed-set": "",
    "seed-set-path": "",
    "feature-low": 0.0,
    "feature-high": 1.0,
    "budget-epsilon": "",
    "budget-delta": "",
    "budget-validation-epsilon": "",
    "budget-validation-delta": "",
    "random-state": "",
    "node-wait": "",
    "reply-timeout": "",
    "poll-interval": 0.05,
    "output": "",
    "owner-rows": "",
    "simulation-nodes": "",
    **{key: "" for key in METHOD_KEYS},
}


def natural_key(name: str) -> tuple[Any, ...]:
    """Sort key that orders ``owner-2`` before ``owner-10``."""
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name))


def _spell(key: str) -> str:
    return f"run config `{key}`"


def _unset(v: Any) -> bool:
    return isinstance(v, str) and v == ""


def _int(cfg: Mapping[str, Any], key: str, lo: int | None = None, hi: int | None = None) -> int:
    v = cfg[key]
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise InvalidParameterError(f"run config `{key}` must be an integer, got {v!r}", key)
    if lo is not None and int(v) < lo:
        raise InvalidParameterError(f"run config `{key}` must be >= {lo}, got {v}", key)
    if hi is not None and int(v) > hi:
        raise InvalidParameterError(f"run config `{key}` must be <= {hi}, got {v}", key)
    return int(v)


def _optional_int(cfg: Mapping[str, Any], key: str, lo: int, hi: int | None = None) -> int | None:
    return None if _unset(cfg[key]) else _int(cfg, key, lo=lo, hi=hi)


def _float(
    cfg: Mapping[str, Any], key: str, *, positive: bool = False, lo: float | None = None, hi: float | None = None
) -> float:
    raw = cfg[key]
    try:
        v = finite_float(raw, key)
    except InvalidParameterError:
        raise InvalidParameterError(f"run config `{key}` must be a finite number, got {raw!r:.60}", key) from None
    if positive and v <= 0:
        raise InvalidParameterError(f"run config `{key}` must be > 0, got {raw}", key)
    if lo is not None and v < lo:
        raise InvalidParameterError(f"run config `{key}` must be >= {lo}, got {raw}", key)
    if hi is not None and v > hi:
        raise InvalidParameterError(f"run config `{key}` must be <= {hi:g}, got {raw}", key)
    return v


def _optional_float(cfg: Mapping[str, Any], key: str) -> float | None:
    return None if _unset(cfg[key]) else _float(cfg, key)


def parse_owner_rows(text: object, owners: int, key: str = "owner-rows", spell: str = "run config") -> dict[str, int]:
    """Each owner's public size from ``"NAME=ROWS,NAME=ROWS"`` (one entry per owner, names distinct, rows integers
    in ``[0, MAX_COUNT]``): what the aggregator checks every row count an owner states against.

    Raises
    ------
    InvalidParameterError
        Naming ``key`` (``spell`` says where it was given) and what to write.
    """
    where = f"{spell} `{key}`"
    if not isinstance(text, str):
        raise InvalidParameterError(f"{where} must be text NAME=ROWS,NAME=ROWS, got {type(text).__name__}", key)
    out: dict[str, int] = {}
    for item in text.split(","):
        name, sep, rows = (part.strip() for part in item.partition("="))
        if not sep or not name or not rows.isdigit() or not rows.isascii():
            raise InvalidParameterError(
                f"{where} must be NAME=ROWS,NAME=ROWS (ROWS an integer >= 0), got {item!r:.60}", key
            )
        if name in out:
            raise InvalidParameterError(f"{where} names owner {name!r} twice", key)
        if int(rows) > MAX_COUNT:
            raise InvalidParameterError(f"{where}: {name}={rows} is above the cap of {MAX_COUNT} rows", key)
        out[name] = int(rows)
    if len(out) != owners:
        raise InvalidParameterError(f"{where} must name every one of the {owners} owners, got {len(out)}", key)
    return out


@dataclass(frozen=True)
class FlowerRunConfig:
    """The validated run config of one Flower run (see the module docstring for each key)."""

    size: int
    owners: int
    n_features: int
    method: SummaryMethod
    gamma: float | str
    seed_set: int | None
    seed_set_path: str | None
    feature_range: tuple[float, float]
    budget: Budget | None
    random_state: int | None
    node_wait: float
    reply_timeout: float
    poll_interval: float
    output: str | None
    owner_rows: dict[str, int] | None = None

    @classmethod
    def from_run_config(cls, run_config: Mapping[str, Any]) -> FlowerRunConfig:
        """Validate a Flower ``context.run_config``; missing keys take :data:`RUN_CONFIG_DEFAULTS`.

        Raises
        ------
        InvalidParameterError
            Naming the bad key.
        """
        if not isinstance(run_config, Mapping):
            raise InvalidParameterError(
                f"the run config must be a mapping of keys to values, got {type(run_config).__name__}", "run_config"
            )
        unknown = set(run_config) - set(RUN_CONFIG_DEFAULTS)
        if unknown:
            raise InvalidParameterError(f"unknown run config keys {sorted(unknown)}", sorted(unknown)[0])
        cfg = {**RUN_CONFIG_DEFAULTS, **dict(run_config)}
        name = cfg["method"]
        if name not in FLOWER_METHODS:
            raise InvalidParameterError(
                f"run config `method` must be one of {FLOWER_METHODS} on Flower, got {name!r}", "method"
            )
        options = {METHOD_KEYS[k]: v for k, v in cfg.items() if k in METHOD_KEYS and not _unset(v)}
        if "label_set" in options:  # a run config value is a scalar: the label set comes as text
            options["label_set"] = parse_label_set(options["label_set"], spell=lambda o: _spell(o.replace("_", "-")))
        if "levels" in options:
            options["levels"] = parse_levels(options["levels"], spell=lambda o: _spell(o.replace("_", "-")))
        method = method_from_options(name, options, spell=lambda o: _spell(o.replace("_", "-")))
        budget = budget_from(
            _optional_float(cfg, "budget-epsilon"),
            _optional_float(cfg, "budget-delta"),
            _optional_float(cfg, "budget-validation-epsilon"),
            _optional_float(cfg, "budget-validation-delta"),
            spell=lambda o: _spell("budget-" + o.replace("_", "-")),
        )
        gamma = cfg["gamma"]
        if not (isinstance(gamma, str) and gamma == "median"):
            gamma = _float(cfg, "gamma", positive=True)
        lo, hi = _float(cfg, "feature-low"), _float(cfg, "feature-high")
        if not lo < hi:
            raise InvalidParameterError(
                f"run config `feature-low` ({lo}) must be below `feature-high` ({hi})", "feature-low"
            )
        for key in ("seed-set-path", "output"):
            if not isinstance(cfg[key], str):
                raise InvalidParameterError(f"run config `{key}` must be a string path, got {cfg[key]!r}", key)
        seed_set = _optional_int(cfg, "seed-set", lo=0, hi=MAX_SEED_CELLS)
        if seed_set is not None and cfg["seed-set-path"]:
            raise InvalidParameterError("give run config `seed-set` (a count) or `seed-set-path`, not both", "seed-set")
        owners = _int(cfg, "owners", lo=1, hi=MAX_COUNT)
        out = cls(
            size=_int(cfg, "size", lo=1, hi=MAX_COUNT),
            owners=owners,
            n_features=_int(cfg, "n-features", lo=1, hi=MAX_N_FEATURES),
            method=method,
            gamma=gamma,
            seed_set=seed_set,
            seed_set_path=cfg["seed-set-path"] or None,
            feature_range=(lo, hi),
            budget=budget,
            random_state=_optional_int(cfg, "random-state", lo=0, hi=2**64 - 1),
            node_wait=default_timeouts(owners)[0]
            if _unset(cfg["node-wait"])
            else _float(cfg, "node-wait", positive=True, hi=MAX_SECONDS),
            reply_timeout=default_timeouts(owners)[1]
            if _unset(cfg["reply-timeout"])
            else _float(cfg, "reply-timeout", positive=True, hi=MAX_SECONDS),
            poll_interval=_float(cfg, "poll-interval", positive=True, hi=MAX_SECONDS),
            output=cfg["output"] or None,
            owner_rows=None
            if _unset(cfg["owner-rows"])
            else parse_owner_rows(cfg["owner-rows"], _int(cfg, "owners", lo=1, hi=MAX_COUNT)),
        )
        # Every configuration error that does not need the data: before any node is asked anything.
        out.plan()
        return out

    def plan(self) -> Plan:
        """The method's plan for this run config (:meth:`dpsumm.methods.SummaryMethod.plan`): every public decision
        made before anything is sent; raises naming what the run config gets wrong."""
        return self.method.plan(
            size=self.size,
            owners=self.owners,
            owner_rows=None if self.owner_rows is None else list(self.owner_rows.values()),
            validation_rows=None,
            privacy=self.budget,
            gamma_median=self.gamma == "median",
            transport_given=True,
        )


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, float):
        return repr(v)
    return str(v)


def write_app(directory: str | Path, **run_config: Any) -> Path:
    """Write the Flower app (a ``pyproject.toml`` naming dpsumm's ServerApp and ClientApp) to ``directory``.

    ``flwr run DIRECTORY CONNECTION`` packs it into a FAB and sends it to the SuperLink. The code
    itself is not in the FAB: every machine (SuperLink and SuperNodes) needs ``pip install
    "dpsumm[flower]"``.

    Parameters
    ----------
    directory : str or Path
        Created if missing.
    **run_config
        Defaults for run config keys, with ``_`` or ``-`` (``n_features=3``). Unknown keys raise.

    Returns
    -------
    Path
        The ``pyproject.toml`` written.
    """
    values = dict(RUN_CONFIG_DEFAULTS)
    for key, v in run_config.items():
        k = key.replace("_", "-")
        if k not in values:
            raise InvalidParameterError(f"unknown run config key {key!r}", key)
        values[k] = v

    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    lines = [
        "[build-system]",
        'requires = ["hatchling"]',
        'build-backend = "hatchling.build"',
        "",
        "[project]",
        'name = "dpsumm-flower"',
        f'version = "{__version__}"',
        'description = "dpsumm: differentially private distributed data summarization on Flower"',
        'license = "Apache-2.0"',
        f'dependencies = ["flwr=={FLWR_VERSION}", "dpsumm"]',
        "",
        "[tool.flwr.app]",
        'publisher = "dpsumm"',
        "",
        "[tool.flwr.app.components]",
        'serverapp = "dpsumm.flower.server_app:app"',
        'clientapp = "dpsumm.flower.client_app:app"',
        "",
        "[tool.flwr.app.config]",
    ]
    lines += [f"{k} = {_toml_value(v)}" for k, v in values.items()]
    path = d / "pyproject.toml"
    path.write_text("\n".join(lines) + "\n")
    return path
