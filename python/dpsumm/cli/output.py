"""What a run prints and writes: the ledger's text, report.json, the summary files, the epsilon lines."""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .. import accounting
from ..accounting.ledger import aggregator_line, certification, verdict_line
from ._common import NOT_PRIVATE, jsonable
from .run_options import report_deltas

__all__ = ["ledger_text", "build_report", "write_outputs", "print_epsilon"]


def _ledger(privacy: Any) -> Any:
    """The run's Ledger (a Flower result carries the ledger's dict form: read back with ``Ledger.from_dict``)."""
    return accounting.Ledger.from_dict(privacy) if isinstance(privacy, dict) else privacy


def ledger_text(res: Any, delta_owners: float, delta_validation: float, seeded: bool) -> list[str]:
    """What the run cost and certified, per party, in plain lines (the ledger's table and notes)."""
    lines = []
    if seeded:
        lines.append("seeded run (--random-state): reproducible and NOT private.")
    if res.privacy is None:
        lines.append(f"method {res.method!r} is not private: no party's privacy is protected or certified.")
        return lines
    led = _ledger(res.privacy)

    eps_o = led.epsilon("owners", delta_owners)
    eps_v = led.epsilon("validation", delta_validation)
    cert = certification(led, seeded=seeded)  # the one decision every surface prints
    lines.append(led.table(delta_owners, delta_validation))
    lines.append(
        f"owners: epsilon {eps_o:.4g} at delta {delta_owners:g}; validation set: epsilon {eps_v:.4g} at "
        f"delta {delta_validation:g} (tight accountant)."
    )
    seen: dict[str, dict[str, int]] = {}
    for e in led.entries:
        seen.setdefault(e.party, {})
        seen[e.party][e.label] = seen[e.party].get(e.label, 0) + int(getattr(e.event, "count", 1))
    for party, labels in seen.items():
        lines.append(f"{party} saw: " + "; ".join(f"{lab} x{n}" for lab, n in labels.items()))
    lines.append(aggregator_line(res.accessed))
    lines.append(verdict_line(cert))
    return lines


def build_report(res: Any, args: argparse.Namespace, budget: Any, **extra: Any) -> dict[str, Any]:
    seeded = args.random_state is not None
    led = None if res.privacy is None else _ledger(res.privacy)

    d_o, d_v = report_deltas(args)

    cert = certification(led, seeded=seeded)
    privacy = None if led is None else led.to_dict(d_o, d_v)
    return {
        **({"warning": NOT_PRIVATE} if seeded else {}),
        "method": res.method,
        "size": len(res),
        **extra,
        "gamma": res.hasher.gamma,
        "dim": res.hasher.dim,
        "hash_seed": res.hasher.seed,
        "seeded": seeded,
        "private": cert.private,
        "certified": cert.certified,
        "certification": cert.to_dict(),
        "budget": None if budget is None else dataclasses.asdict(budget),
        "accessed": dataclasses.asdict(res.accessed),
        "contribution": res.contribution.tolist(),
        "events": res.events,
        "seconds": res.seconds,
        "privacy": privacy,
    }


def write_outputs(res: Any, out_dir: str, report: dict[str, Any]) -> Any:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    np.save(out / "summary.npy", res.points if res.points is not None else res.hashes)
    if res.labels is not None:
        np.save(out / "labels.npy", res.labels)
    np.savetxt(
        out / "provenance.csv",
        np.column_stack([res.owner, res.index]),
        fmt="%d",
        delimiter=",",
        header="owner,index",
        comments="",
    )
    (out / "report.json").write_text(json.dumps(jsonable(report), indent=2, default=str, allow_nan=False))
    return out


def print_epsilon(records: Sequence[Any]) -> None:
    nom = [r for r in records if r.method == "nominations"]
    if nom:
        r = max(nom, key=lambda r: r.size)
        if r.epsilon_owners is None or not math.isfinite(r.epsilon_owners):
            owners = "not certified (a message to the owners depends on the others' data; see the ledger's notes)"
        else:
            why = (
                "each owner's one DP release, replace-one in its rows"
                if r.epsilon_owners
                else "what an owner receives depends only on its own data and the consumer's release"
            )
            owners = f"{r.epsilon_owners:.4g} (certified: {why})"
        print(
            f"nominations ({r.purchase or 'nominees'} purchase), size {r.size}: epsilon owners {owners}; "
            f"validation {r.epsilon_validation:.4g} (delta {r.delta_validation:g}; replace-one in D_v); tight "
            "accountant."
        )
    priv = [r for r in records if r.method == "paper"]
    if not priv:
        return
    r = max(priv, key=lambda r: r.size)
    owners = (
        "not certified (paper's PrivAuction, see the ledger's notes)"
        if r.epsilon_owners is None
        else f"{r.epsilon_owners:.4g}"
    )
    print(
        f"paper, size {r.size}: epsilon owners {owners}; h2 releases alone {r.epsilon_owners_h2:.4g} "
        f"(delta {r.delta_owners:g}); validation {r.epsilon_validation:.4g} (delta {r.delta_validation:g}); tight accountant."
    )
