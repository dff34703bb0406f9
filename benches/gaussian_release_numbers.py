"""The figures of docs/gaussian_release.md: what the certified RDP route costs in noise, and how long the paper
schedule's budget-first ``calibrate`` takes.

* For epsilon in 0.1, 1, 10 at delta = 1e-6: the noise multiplier z that ``calibrate_gaussian`` uses (the
  Gaussian's RDP curve, dp-accounting's ``RdpAccountant``) against the continuous Gaussian's exact
  calibration (the analytic Gaussian mechanism of Balle & Wang 2018, solved with scipy), and their
  ratio (how much smaller sigma the uncertified exact route would allow).
* Wall time of ``dpsumm.accounting.calibrate(Budget(1, 1e-6, 1, 1e-6), size=1000, owners=K, dim=d)`` for
  (K, d) = (5, 140) and (100, 500): the first call (imports warm) and a repeated call (cached).

Run: ``python benches/gaussian_release_numbers.py`` (about a minute) -> ``benches/results/gaussian_release.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from pathlib import Path

import dp_accounting
from dp_accounting import rdp
from scipy.optimize import brentq
from scipy.stats import norm

import dpsumm
from dpsumm import accounting


def exact_multiplier(epsilon: float, delta: float) -> float:
    """The continuous Gaussian's smallest z meeting (epsilon, delta) exactly: the analytic Gaussian
    mechanism (Balle & Wang 2018, Theorem 8), delta(eps) = Phi(1/(2z) - eps z) - e^eps Phi(-1/(2z) - eps z)."""

    def gap(z: float) -> float:
        return float(norm.cdf(0.5 / z - epsilon * z) - math.exp(epsilon) * norm.cdf(-0.5 / z - epsilon * z)) - delta

    return float(brentq(gap, 1e-4, 1e4, xtol=1e-12, rtol=1e-12))


def rdp_multiplier(epsilon: float, delta: float) -> float:
    """The same by the RDP accountant (the route dpsumm certifies)."""
    return float(
        dp_accounting.calibrate_dp_mechanism(
            lambda: rdp.RdpAccountant(),
            dp_accounting.GaussianDpEvent,
            epsilon,
            delta,
            dp_accounting.LowerEndpointAndGuess(1e-3, 1.0),
        )
    )


def main() -> None:
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    out: dict = {
        "command": "python benches/gaussian_release_numbers.py",
        "delta": 1e-6,
        "multipliers": [],
        "calibrate": [],
    }
    for eps in (0.1, 1.0, 10.0):
        z = accounting.calibrate_gaussian(eps, 1e-6, sensitivity=1.0, dim=1).noise_multiplier
        z_rdp, z_exact = rdp_multiplier(eps, 1e-6), exact_multiplier(eps, 1e-6)
        row = {
            "epsilon": eps,
            "z_dpsumm": z,
            "z_rdp": z_rdp,
            "z_exact_analytic": z_exact,
            "ratio_rdp_to_exact": round(z / z_exact, 4),
            "sigma_saving_pct": round(100 * (1 - z_exact / z), 2),
        }
        print(json.dumps(row), flush=True)
        out["multipliers"].append(row)
    budget = dpsumm.Budget(1, 1e-6, 1, 1e-6)
    for owners, dim in ((5, 140), (100, 500)):
        t = time.perf_counter()
        accounting.calibrate(budget, size=1000, owners=owners, dim=dim)
        first = time.perf_counter() - t
        t = time.perf_counter()
        accounting.calibrate(budget, size=1000, owners=owners, dim=dim)
        again = time.perf_counter() - t
        row = {
            "owners": owners,
            "dim": dim,
            "size": 1000,
            "first_call_s": round(first, 4),
            "repeat_call_s": round(again, 6),
        }
        print(json.dumps(row), flush=True)
        out["calibrate"].append(row)
    out["load"] = [round(x, 2) for x in os.getloadavg()]
    path = Path(__file__).resolve().parent / "results" / "gaussian_release.json"
    path.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
