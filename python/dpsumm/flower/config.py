"""The Flower app's configuration: run config (chosen by whoever starts the run), node config (chosen
by each SuperNode's operator) and the app directory that ``flwr run`` ships to the SuperLink.

Run config (``[tool.flwr.app.config]`` in the app's ``pyproject.toml``, override with
``flwr run ... --run-config 'size=20 owners=3'``). Every key must exist in the app's pyproject to be
overridable, so :func:`write_app` writes them all. Sentinels stand for "not set" because TOML has no
null: ``-1`` for counts and seeds, ``""`` for paths, ``0`` for optional budgets.

==========================  ========  ==================================================================
key                         default   meaning
==========================  ========  ==================================================================
``size``                    10        summary size p
``owners``                  0         owner SuperNodes to wait for (required, >= 1)
``n-features``              0         features per row (public schema; required, >= 1)
``method``                  nominations ``nominations`` (recommended), ``paper`` (Alg. 3) or ``paper-greedy``
``dim``, ``gamma``          0, 0.1    h1: random features (0: 500 for nominations, 140 for the paper's) and RBF
                                      width (``gamma="median"``: the median heuristic on the public seed set)
``purchase``                quotas    nominations: ``quotas`` (owners' DP sketches, 3 x size rows; certified),
                                      ``nominees`` (owners' epsilon 0; certified) or ``winners`` (uncertified)
``nominees``                -1        nominations: rows per owner (-1: 2 * size)
``candidates``              -1        nominations: rows each owner samples for its herding (-1: 4 * nominees)
``temperature``             0.0       nominations: the owners' tilt (0: from the release's noise)
``owner-greedy``            stochastic nominations: the owners' greedy, ``stochastic`` or ``exact``
``validation-release``      gaussian  nominations: ``gaussian`` or ``mwem``
``hash-seed``               0         public h1 seed (int >= 0 or a str)
``reveal``                  points    ``points`` or ``hashes``
``seed-set``                -1        generated public seed rows (-1: the schedule's count)
``seed-set-path``           ""        public seed rows from a file on the ServerApp's machine instead
``feature-low/high``        0.0, 1.0  public box of generated seed rows
``t-init``, ``t-subs``      0, 0      override the schedule's MWEM steps (0: keep)
``epsilon-auction``         -1.0      paper: PrivAuction's eps_auc (-1 or 0: ask every owner every round, certified;
                                      > 0: the paper's randomized auction, NOT certified)
``budget-epsilon``          0.0       paper: > 0 calibrates to a Budget (with the three keys below)
``budget-delta``            1e-4
``budget-validation-epsilon`` 0.0     nominations: eps_v of the release (0: 1.0 with delta_v 1e-6)
``budget-validation-delta`` 0.01
``random-state``            -1        -1: OS entropy (private). >= 0: seeded, reproducible, NOT private
``node-wait``               120.0     seconds to wait for the owners and the consumer to connect
``reply-timeout``           60.0      seconds an exchange waits before a silent party is excluded
``poll-interval``           0.05      seconds between two polls of the SuperLink for replies
``output``                  ""        where the ServerApp writes the result (.npz, on its machine)
==========================  ========  ==================================================================

Node config (``flower-supernode --node-config 'role="owner" name="hospital-a" data="/data/a.npy"'``):
``role`` (``owner`` or ``consumer``), ``name`` (unique party name; owners are ordered by name, which
fixes tie-breaks and ``result.owner`` indices), ``data`` (.npy/.csv/.parquet: the owner's rows or the
consumer's validation rows), for owners optional ``labels`` (.npy or one-column file) and, for the
consumer, ``allow-seeded`` (``true`` lets a run's ``random-state`` seed the consumer's noise: reproducible
and NOT private; without it the consumer refuses such a run, since the run config is chosen by whoever
starts the run, not by the consumer).
"""

from __future__ import annotations

import math
import numbers
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from ..errors import InvalidParameterError

__all__ = ["RUN_CONFIG_DEFAULTS", "FlowerRunConfig", "write_app", "natural_key", "FLWR_VERSION"]

FLWR_VERSION = "1.41.0"

RUN_CONFIG_DEFAULTS: dict[str, Any] = {
    "size": 10,
    "owners": 0,
    "n-features": 0,
    "method": "nominations",
    "dim": 0,
    "purchase": "quotas",
    "nominees": -1,
    "candidates": -1,
    "owner-greedy": "stochastic",
    "temperature": 0.0,
    "validation-release": "gaussian",
    "gamma": 0.1,
    "hash-seed": 0,
    "reveal": "points",
    "seed-set": -1,
    "seed-set-path": "",
    "feature-low": 0.0,
    "feature-high": 1.0,
    "t-init": 0,
    "t-subs": 0,
    "epsilon-auction": -1.0,
    "budget-epsilon": 0.0,
    "budget-delta": 1e-4,
    "budget-validation-epsilon": 0.0,
    "budget-validation-delta": 0.01,
    "random-state": -1,
    "node-wait": 120.0,
    "reply-timeout": 60.0,
    "poll-interval": 0.05,
    "output": "",
}


def natural_key(name: str) -> tuple[Any, ...]:
    """Sort key that orders ``owner-2`` before ``owner-10``."""
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name))


def _int(cfg: Mapping[str, Any], key: str, lo: int | None = None) -> int:
    v = cfg[key]
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise InvalidParameterError(f"run config `{key}` must be an integer, got {v!r}", key)
    if lo is not None and int(v) < lo:
        raise InvalidParameterError(f"run config `{key}` must be >= {lo}, got {v}", key)
    return int(v)


def _float(cfg: Mapping[str, Any], key: str, *, positive: bool = False, lo: float | None = None) -> float:
    v = cfg[key]
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(float(v)):
        raise InvalidParameterError(f"run config `{key}` must be a finite number, got {v!r}", key)
    if positive and float(v) <= 0:
        raise InvalidParameterError(f"run config `{key}` must be > 0, got {v}", key)
    if lo is not None and float(v) < lo:
        raise InvalidParameterError(f"run config `{key}` must be >= {lo}, got {v}", key)
    return float(v)


def _choice(cfg: Mapping[str, Any], key: str, choices: tuple[str, ...]) -> str:
    v = cfg[key]
    if v not in choices:
        raise InvalidParameterError(f"run config `{key}` must be one of {choices}, got {v!r}", key)
    return str(v)


@dataclass(frozen=True)
class FlowerRunConfig:
    """The validated run config of one Flower run (see the module docstring for each key)."""

    size: int
    owners: int
    n_features: int
    method: str
    dim: int
    purchase: str
    nominees: int | None
    candidates: int | None
    owner_greedy: str
    temperature: float | None
    validation_release: str
    gamma: float | str
    hash_seed: int | str
    reveal: str
    seed_set: int | None
    seed_set_path: str | None
    feature_range: tuple[float, float]
    t_init: int | None
    t_subs: int | None
    epsilon_auction: float | None
    budget: tuple[float, float, float, float] | None
    random_state: int | None
    node_wait: float
    reply_timeout: float
    poll_interval: float
    output: str | None

    @classmethod
    def from_run_config(cls, run_config: Mapping[str, Any]) -> "FlowerRunConfig":
        """Validate a Flower ``context.run_config``; missing keys take :data:`RUN_CONFIG_DEFAULTS`.

        Raises
        ------
        InvalidParameterError
            Naming the bad key.
        """
        unknown = set(run_config) - set(RUN_CONFIG_DEFAULTS)
        if unknown:
            raise InvalidParameterError(f"unknown run config keys {sorted(unknown)}", sorted(unknown)[0])
        cfg = {**RUN_CONFIG_DEFAULTS, **dict(run_config)}
        hash_seed = cfg["hash-seed"]
        if isinstance(hash_seed, bool) or not isinstance(hash_seed, (numbers.Integral, str)) or (
            isinstance(hash_seed, numbers.Integral) and not 0 <= int(hash_seed) < 2**64
        ):
            raise InvalidParameterError(f"run config `hash-seed` must be an int in [0, 2**64) or a str, got {hash_seed!r}", "hash-seed")
        seed_set = _int(cfg, "seed-set", lo=-1)
        t_init = _int(cfg, "t-init", lo=0)
        t_subs = _int(cfg, "t-subs", lo=0)
        eps_auc = _float(cfg, "epsilon-auction")
        if eps_auc < 0 and eps_auc != -1.0:
            raise InvalidParameterError(f"run config `epsilon-auction` must be >= 0 or -1 (keep), got {eps_auc}", "epsilon-auction")
        budget_eps = _float(cfg, "budget-epsilon", lo=0.0)
        method = _choice(cfg, "method", ("nominations", "paper", "paper-greedy"))
        budget = None
        if method == "nominations" and _float(cfg, "budget-validation-epsilon", lo=0.0) > 0:
            budget = (0.0, 0.0, _float(cfg, "budget-validation-epsilon", positive=True),
                      _float(cfg, "budget-validation-delta", positive=True))
        elif budget_eps > 0:
            budget = (
                budget_eps,
                _float(cfg, "budget-delta", positive=True),
                _float(cfg, "budget-validation-epsilon", positive=True),
                _float(cfg, "budget-validation-delta", positive=True),
            )
        lo, hi = _float(cfg, "feature-low"), _float(cfg, "feature-high")
        if not lo < hi:
            raise InvalidParameterError(f"run config `feature-low` ({lo}) must be below `feature-high` ({hi})", "feature-low")
        random_state = _int(cfg, "random-state", lo=-1)
        for key in ("seed-set-path", "output"):
            if not isinstance(cfg[key], str):
                raise InvalidParameterError(f"run config `{key}` must be a string path, got {cfg[key]!r}", key)
        return cls(
            size=_int(cfg, "size", lo=1),
            owners=_int(cfg, "owners", lo=1),
            n_features=_int(cfg, "n-features", lo=1),
            method=method,
            dim=_int(cfg, "dim", lo=0) or (500 if method == "nominations" else 140),
            purchase=_choice(cfg, "purchase", ("quotas", "nominees", "winners")),
            nominees=None if _int(cfg, "nominees", lo=-1) in (-1, 0) else _int(cfg, "nominees", lo=1),
            candidates=None if _int(cfg, "candidates", lo=-1) in (-1, 0) else _int(cfg, "candidates", lo=1),
            owner_greedy=_choice(cfg, "owner-greedy", ("stochastic", "exact")),
            temperature=_float(cfg, "temperature", lo=0.0) or None,
            validation_release=_choice(cfg, "validation-release", ("gaussian", "mwem")),
            gamma="median" if cfg["gamma"] == "median" else _float(cfg, "gamma", positive=True),
            hash_seed=hash_seed if isinstance(hash_seed, str) else int(hash_seed),
            reveal=_choice(cfg, "reveal", ("points", "hashes")),
            seed_set=None if seed_set == -1 else seed_set,
            seed_set_path=cfg["seed-set-path"] or None,
            feature_range=(lo, hi),
            t_init=t_init or None,
            t_subs=t_subs or None,
            epsilon_auction=None if eps_auc == -1.0 else eps_auc,
            budget=budget,
            random_state=None if random_state == -1 else random_state,
            node_wait=_float(cfg, "node-wait", positive=True),
            reply_timeout=_float(cfg, "reply-timeout", positive=True),
            poll_interval=_float(cfg, "poll-interval", positive=True),
            output=cfg["output"] or None,
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
        'version = "0.1.0"',
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
