"""Privacy accounting for the dpsumm protocol (Sarpatwar et al., NeurIPS 2019).

Everything here is pure Python and computes *before* or *after* a run what the releases cost;
nothing here touches private data.

Vocabulary
----------
Event
    One (or ``count`` identical) runs of a mechanism the code actually executes, with its privacy
    parameter and the neighbour relation under which that parameter holds:

    * :class:`LaplaceEvent` - a Laplace (or discrete Laplace) measurement at scale Δ/ε: ε-DP.
    * :class:`ExponentialEvent` - the exponential mechanism sampling ∝ exp(ε·score/(2Δ)): ε-DP and
      ε-bounded-range, hence ε²/8-zCDP (Cesar & Rogers 2021, Lemma 3.2).
    * :class:`AuctionEvent` - one round of the paper's PrivAuction (Alg. 3 lines 11-17). See its
      docstring: the paper's privacy argument (proof of Theorem 6) is wrong, and no finite ε can be
      certified for ε_auc > 0. ε_auc = 0 ("ask every owner every round") is free.

    One MWEM step of h2 (Alg. 2 lines 5-6) is one ExponentialEvent + one LaplaceEvent, both at the
    step's ε with sensitivity 2 under replace-one (DESIGN §3.5).

Accountant
    A function ``(events, delta) -> epsilon`` giving an ε such that the adaptive composition of the
    events is (ε, δ)-DP (all events are pure ε-DP, so the composed δ is exactly the ``delta`` given):
    :func:`basic`, :func:`advanced`, :func:`kov` (Theorem 7 of the appendix) and :func:`tight`
    (numerical, Google's ``dp-accounting``). Always ``tight <= kov <= advanced`` and ``kov <= basic``.

Ledger
    :class:`Ledger` records every release of a protocol run by party (``"owners"`` or
    ``"validation"``) and reports ε at a δ with any accountant.

Schedules
    :func:`paper_schedule` (Section 4), :func:`theorem2_schedule` (Theorem 2) and :func:`calibrate`
    (budget first), with :func:`schedule_events` / :func:`account` to cost a schedule before running.

What the numbers mean (the README, section "Privacy")
-----------------------------------------------------
* ``"validation"``: ε of all releases computed from the consumer's validation set ``D_v``, with
  respect to replacing one row of ``D_v`` (``|D_v|`` public).
* ``"owners"``: ε of all releases seen by a data owner that are computed from the summary ``D_s``,
  with respect to replacing one row of the summary (its size q is public), composed over epochs.
  This transfers to "with respect to the other owners' data" when neighbouring owner data give
  summaries that differ in at most one row in every epoch given the public transcript; that holds
  for deterministic point collection (``ε_auc = 0``) and is *not* established for the paper's
  randomized auction, whose hidden coins also make its own requests leak (see :class:`AuctionEvent`).

Modules
-------
``events`` (the four events, :func:`mwem_step_events`), ``composition`` (the accountants, :func:`compose`),
``ledger`` (:class:`Ledger`), ``schedules`` (the paper's schedules), ``calibration`` (budget-first
schedules and the Gaussian release), ``budgets`` (:class:`Budget`, :class:`BudgetAccountant`). Every public
name is importable from ``dpsumm.accounting``.
"""

from __future__ import annotations

# Private names other modules and tests use (the ``as`` form re-exports them for mypy).
from ._bounds import _kov_from_groups as _kov_from_groups
from ._bounds import _kov_terms as _kov_terms
from ._bounds import _rdp_gaussian_epsilon as _rdp_gaussian_epsilon
from ._checks import MAX_DIM, MAX_SIZE, NEIGHBOURS, PARTIES
from ._checks import AccountantName as AccountantName
from ._checks import Neighbour as Neighbour
from ._checks import Party as Party
from .budgets import Budget, BudgetAccountant
from .budgets import PlannedEvents as PlannedEvents
from .calibration import (
    GaussianCalibration,
    calibrate,
    calibrate_gaussian,
    calibrate_mwem_steps,
)
from .calibration import _calibrate_mwem_steps as _calibrate_mwem_steps
from .calibration import _gaussian_noise_multiplier as _gaussian_noise_multiplier
from .composition import ACCOUNTANTS, advanced, basic, compose, kov, tight, tight_details
from .events import AuctionEvent, Event, ExponentialEvent, GaussianEvent, LaplaceEvent, mwem_step_events
from .ledger import (
    DEFAULT_DELTA,
    LEDGER_SCHEMA_VERSION,
    Certification,
    Ledger,
    LedgerEntry,
    certification,
    privacy_text,
)
from .ledger import _format_table as _format_table
from .schedules import (
    MAX_SEED_SET_SIZE,
    Schedule,
    account,
    paper_schedule,
    schedule_events,
    schedule_ledger,
    theorem2_schedule,
)

__all__ = [
    "ACCOUNTANTS",
    "NEIGHBOURS",
    "PARTIES",
    "AuctionEvent",
    "Budget",
    "BudgetAccountant",
    "Certification",
    "DEFAULT_DELTA",
    "Event",
    "ExponentialEvent",
    "GaussianCalibration",
    "GaussianEvent",
    "LaplaceEvent",
    "LEDGER_SCHEMA_VERSION",
    "Ledger",
    "LedgerEntry",
    "Schedule",
    "account",
    "advanced",
    "basic",
    "calibrate",
    "calibrate_mwem_steps",
    "calibrate_gaussian",
    "certification",
    "compose",
    "kov",
    "mwem_step_events",
    "paper_schedule",
    "privacy_text",
    "schedule_events",
    "schedule_ledger",
    "theorem2_schedule",
    "tight",
    "tight_details",
]
