"""Example records of an experiment (two methods, sizes and repeats): shared by the tests of its tables and plots."""

from __future__ import annotations

from dpsumm import experiments

__all__ = ["_records"]


def _records(accuracies, sizes=(10, 100), gamma=0.25):
    recs = []
    for size in sizes:
        for rep, acc in enumerate(accuracies):
            for method, eps in (("paper-greedy", None), ("paper", 0.5)):
                recs.append(
                    experiments.Record(
                        method=method,
                        size=size,
                        repeat=rep,
                        mmd2=0.1,
                        mmd_increase_pct=0.0 if eps is None else 50.0,
                        accuracy=acc,
                        accessed=size,
                        epsilon_owners=eps,
                        epsilon_validation=eps and 1.0,
                        seconds=0.1,
                        epsilon_owners_h2=eps,
                        gamma=gamma,
                        delta_owners=eps and 1e-4,
                        delta_validation=eps and 1e-2,
                    )
                )
    return recs
