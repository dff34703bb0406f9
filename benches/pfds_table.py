"""PFDS vs NP-Agt, DP-Pred and PFDS(s): the shape of Table 2 of Fioretto & Van Hentenryck (2019).

Offline datasets (scikit-learn's bundled ones): breast_cancer and digits (even vs odd) for logistic
regression and SVM, diabetes for linear regression. For every repetition and fold of a stratified
K-fold split the training rows are partitioned over m agents as in Section 4 (agent i gets an anchor
a_i ~ U(domain of attribute a); a row goes to agent i with probability ∝ 1/|x_a - a_i|). Then

* NP-Agt   agent i trains on its own rows D_i (non-private baseline);
* DP-Pred  every agent trains an ε-DP predictor on its rows (objective perturbation, Chaudhuri et al.
           2011, for logistic regression / Huber SVM; the functional mechanism, Zhang et al. 2012, for
           linear regression); the m predictors vote (classification) or are averaged (regression);
* PFDS(s)  agent i trains on D_i ∪ the m synthetic datasets, labelled by each sharer's own tree;
* PFDS     agent i trains on D_i ∪ the m synthetic datasets, labelled by the majority vote of all trees;
* NP-Pred  (reference) a non-private predictor on all training rows.

Errors: misclassification rate, and for regression the MSE with labels scaled to [-1, 1] by the public
label range; NP-Agt, PFDS(s) and PFDS are averaged over the agents, all over folds and repetitions.

The "public" domain: digits pixels are in [0, 16] by construction; for breast_cancer and diabetes the
bounds of every attribute (and diabetes' label range) are the min / max over the whole dataset, a
stand-in for a published data dictionary (an assumption of the experiment, not of the library, which
never derives bounds from the private rows).

Usage::

    python benches/pfds_table.py [--folds 5] [--repeats 2] [--out docs/results/pfds-table.md]
        [--json benches/results/pfds_table.json]

With ``--json`` the results are written there too, and every number of the markdown table is marked with
its path in that file (``<!--= ALIAS:PATH -->``, tests/docnumbers.py; ``--alias``, default ``pt``).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sklearn import datasets as skd
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.svm import LinearSVC

from dpsumm.dp_erm import functional_mechanism, objective_perturbation, unit_features
from dpsumm.pfds import Domain, partition_agents, pfds
from dpsumm.privacy import Csprng

warnings.filterwarnings("ignore", category=ConvergenceWarning)


@dataclass
class Task:
    name: str
    X: np.ndarray
    y: np.ndarray  # classification: {0, 1}; regression: real
    lower: np.ndarray
    upper: np.ndarray
    regression: bool
    label_range: tuple[float, float] | None
    attribute: int  # the partition attribute a of Section 4
    agents: int


def load_tasks() -> list[Task]:
    out = []
    bc = skd.load_breast_cancer()
    X = bc.data.astype(float)
    out.append(Task("breast_cancer", X, bc.target.astype(int), X.min(0), X.max(0), False, None, 0, 5))
    dg = skd.load_digits()
    X = dg.data.astype(float)
    out.append(
        Task("digits (even/odd)", X, (dg.target % 2).astype(int), np.zeros(64), np.full(64, 16.0), False, None, 36, 5)
    )
    db = skd.load_diabetes()
    X = db.data.astype(float)
    y = db.target.astype(float)
    out.append(Task("diabetes", X, y, X.min(0), X.max(0), True, (float(y.min()), float(y.max())), 2, 5))
    return out


def _widen(lower: np.ndarray, upper: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Constant attributes get a unit interval (the domain needs low < high)."""
    hi = np.where(upper > lower, upper, lower + 1.0)
    return lower, hi


def fit_predict_classifier(kind: str, X: np.ndarray, y: np.ndarray, Xte: np.ndarray) -> np.ndarray:
    if np.unique(y).size < 2:
        return np.full(Xte.shape[0], y[0] if y.size else 0)
    if kind == "lr":
        model = LogisticRegression(C=1.0, max_iter=2000)
    else:
        model = LinearSVC(C=1.0, max_iter=5000)
    return model.fit(X, y).predict(Xte)


def fit_predict_regressor(X: np.ndarray, y: np.ndarray, Xte: np.ndarray) -> np.ndarray:
    if y.size == 0:
        return np.zeros(Xte.shape[0])
    return LinearRegression().fit(X, y).predict(Xte)


def scale01(X: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return (X - lo) / (hi - lo)


def run(
    tasks: list[Task], epsilons: list[float], folds: int, repeats: int, seed: int, lam: float, extra_hmax: int | None
) -> list[dict]:
    rows = []
    for task in tasks:
        lo, hi = _widen(task.lower, task.upper)
        if task.regression:
            ylo, yhi = task.label_range  # type: ignore[misc]
            dom = Domain(np.stack([lo, hi], 1), label_range=(ylo, yhi))
            y_scaled = 2 * (task.y - ylo) / (yhi - ylo) - 1  # [-1, 1], the paper's Y
            models = ["linreg"]
        else:
            dom = Domain(np.stack([lo, hi], 1), classes=[0, 1])
            models = ["lr", "svm"]
        err: dict[tuple[str, float, str], list[float]] = {}
        np_pred: dict[str, list[float]] = {}
        for rep in range(repeats):
            gen = np.random.default_rng([seed, rep])
            splitter = (KFold if task.regression else StratifiedKFold)(folds, shuffle=True, random_state=seed + rep)
            for fold, (tr_idx, te_idx) in enumerate(splitter.split(task.X, task.y)):
                Xtr, ytr, Xte, yte = task.X[tr_idx], task.y[tr_idx], task.X[te_idx], task.y[te_idx]
                owner = partition_agents(Xtr, task.agents, task.attribute, lo[task.attribute], hi[task.attribute], gen)
                parts = [np.flatnonzero(owner == i) for i in range(task.agents)]
                S = lambda A: scale01(A, lo, hi)  # noqa: E731 - public-bound scaling for the learners
                for mdl in models:
                    if task.regression:
                        yte_s = y_scaled[te_idx]
                        pred = fit_predict_regressor(S(Xtr), y_scaled[tr_idx], S(Xte))
                        np_pred.setdefault(mdl, []).append(float(np.mean((pred - yte_s) ** 2)))
                    else:
                        pred = fit_predict_classifier(mdl, S(Xtr), ytr, S(Xte))
                        np_pred.setdefault(mdl, []).append(float(np.mean(pred != yte)))
                # NP-Agt does not depend on epsilon
                np_agt: dict[str, float] = {}
                for mdl in models:
                    e = []
                    for p in parts:
                        if task.regression:
                            pred = fit_predict_regressor(S(Xtr[p]), y_scaled[tr_idx][p], S(Xte))
                            e.append(np.mean((pred - y_scaled[te_idx]) ** 2))
                        else:
                            e.append(np.mean(fit_predict_classifier(mdl, S(Xtr[p]), ytr[p], S(Xte)) != yte))
                    np_agt[mdl] = float(np.mean(e))
                for eps in epsilons:
                    rng = Csprng(int(gen.integers(2**63)))  # seeded: reproducible, NOT private
                    res = pfds([Xtr[p] for p in parts], [ytr[p] for p in parts], dom, eps, random_state=rng)
                    synthetic = {
                        "PFDS(s)": (
                            np.concatenate([d[0] for d in res.datasets]),
                            np.concatenate([d[1] for d in res.own_label_datasets]),
                        ),
                        "PFDS": (
                            np.concatenate([d[0] for d in res.datasets]),
                            np.concatenate([d[1] for d in res.datasets]),
                        ),
                    }
                    if extra_hmax is not None:
                        res2 = pfds(
                            [Xtr[p] for p in parts],
                            [ytr[p] for p in parts],
                            dom,
                            eps,
                            h_max=extra_hmax,
                            levels=min(4, extra_hmax),
                            random_state=rng.derive("extra"),
                        )
                        synthetic[f"PFDS h_max={extra_hmax}"] = res2.training_set()
                    for mdl in models:
                        err.setdefault((mdl, eps, "NP-Agt"), []).append(np_agt[mdl])
                        # DP-Pred: every agent's eps-DP predictor, aggregated
                        if task.regression:
                            preds = []

                            def Z1(A: np.ndarray) -> np.ndarray:  # [0, 1] features + intercept: |x_j| <= 1
                                return np.hstack([np.clip(S(A), 0, 1), np.ones((A.shape[0], 1))])

                            for p in parts:
                                w = functional_mechanism(
                                    Z1(Xtr[p]), y_scaled[tr_idx][p], eps, random_state=rng.derive("fm")
                                )
                                preds.append(Z1(Xte) @ w)
                            agg = np.clip(np.mean(preds, axis=0), -1, 1)
                            err.setdefault((mdl, eps, "DP-Pred"), []).append(
                                float(np.mean((agg - y_scaled[te_idx]) ** 2))
                            )
                        else:
                            votes = np.zeros(Xte.shape[0])
                            Zte = unit_features(Xte, lo, hi)
                            for p in parts:
                                if p.size == 0:
                                    continue
                                f = objective_perturbation(
                                    unit_features(Xtr[p], lo, hi),
                                    2.0 * ytr[p] - 1,
                                    eps,
                                    loss="logistic" if mdl == "lr" else "huber",
                                    lam=lam,
                                    random_state=rng.derive("op"),
                                )
                                votes += np.sign(Zte @ f)
                            tie = rng.uniform_array(votes.size) < 0.5
                            agg = np.where(votes > 0, 1, np.where(votes < 0, 0, tie.astype(int)))
                            err.setdefault((mdl, eps, "DP-Pred"), []).append(float(np.mean(agg != yte)))
                        for method, (Xs_all, ysyn) in synthetic.items():
                            e = []
                            for p in parts:
                                Xa = np.concatenate([S(Xtr[p]), S(Xs_all)])
                                if task.regression:
                                    ysyn_s = 2 * (ysyn - ylo) / (yhi - ylo) - 1
                                    ya = np.concatenate([y_scaled[tr_idx][p], ysyn_s])
                                    pred = fit_predict_regressor(Xa, ya, S(Xte))
                                    e.append(np.mean((pred - y_scaled[te_idx]) ** 2))
                                else:
                                    ya = np.concatenate([ytr[p], ysyn.astype(int)])
                                    e.append(np.mean(fit_predict_classifier(mdl, Xa, ya, S(Xte)) != yte))
                            err.setdefault((mdl, eps, method), []).append(float(np.mean(e)))
                print(f"  {task.name}: repeat {rep} fold {fold} done", file=sys.stderr, flush=True)
        for mdl in models:
            for eps in epsilons:
                row = {
                    "dataset": task.name,
                    "task": {"lr": "Log. Reg.", "svm": "SVM", "linreg": "Lin. Reg."}[mdl],
                    "epsilon": eps,
                    "n": task.X.shape[0],
                    "d": task.X.shape[1],
                    "agents": task.agents,
                    "NP-Pred": float(np.mean(np_pred[mdl])),
                }
                for method in METHODS + ([f"PFDS h_max={extra_hmax}"] if extra_hmax is not None else []):
                    v = np.array(err[(mdl, eps, method)])
                    row[method] = (float(v.mean()), float(v.std(ddof=1) / np.sqrt(v.size)) if v.size > 1 else 0.0)
                rows.append(row)
    return rows


METHODS = ["NP-Agt", "DP-Pred", "PFDS(s)", "PFDS"]


def to_markdown(
    rows: list[dict],
    command: str,
    seconds: float,
    folds: int,
    repeats: int,
    lam: float,
    json_path: str | None = None,
    alias: str = "pt",
) -> str:
    """The table; with ``json_path`` (relative to the repository root) every number is marked with its path there."""
    extra = [k for k in rows[0] if k.startswith("PFDS h_max=")]

    def m(expr: str) -> str:
        return f"<!--= {alias}:{expr} -->" if json_path else ""

    lines = [
        "# PFDS: error of the approaches (shape of Table 2 of Fioretto & Van Hentenryck, AAMAS 2019)",
        "",
        f"Command: `{command}`  ",
        *([f"<!-- numbers: {alias} = {json_path} -->"] if json_path else []),
        f"Run time: {seconds:.0f}{m('seconds')} s on {platform.machine()} (2 shared cores), Python {platform.python_version()}.  ",
        f"{repeats} repetition(s) x {folds}-fold cross-validation (stratified for classification); each cell is "
        "mean ± standard error over the folds. Misclassification rate for Log. Reg. / SVM; MSE with labels scaled "
        "to [-1, 1] for Lin. Reg. Lower is better.",
        "",
        "PFDS at its defaults (h_max = 8, t = 10, p = 4). NP-Pred is a non-private predictor on all training rows "
        "(best attainable). PFDS / PFDS(s) are ε-DP per agent under add/remove of one row (2ε under replace-one); "
        f"DP-Pred is ε-DP per agent under replace-one (objective perturbation with Λ = {lam:g}; functional "
        "mechanism for Lin. Reg.).",
        "",
        "| dataset | n | d | agents | ERM task | ε | " + " | ".join(METHODS + extra) + " | NP-Pred |",
        "|---|---|---|---|---|---|" + "---|" * (len(METHODS) + len(extra)) + "---|",
    ]
    for i, r in enumerate(rows):
        q = f"rows[{i}]"
        cells = [
            f"{r[k][0]:.3f}{m(f'{q}[{chr(34)}{k}{chr(34)}][0]')} ± {r[k][1]:.3f}{m(f'{q}[{chr(34)}{k}{chr(34)}][1]')}"
            for k in METHODS + extra
        ]
        lines.append(
            f"| {r['dataset']} | {r['n']} | {r['d']} | {r['agents']} | {r['task']} | {r['epsilon']:g}{m(q + '.epsilon')} | "
            + " | ".join(cells)
            + f" | {r['NP-Pred']:.3f}{m(f'{q}[{chr(34)}NP-Pred{chr(34)}]')} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 0.5, 0.1])
    ap.add_argument("--seed", type=int, default=2019)
    ap.add_argument("--datasets", nargs="*", default=None, help="subset of dataset names")
    ap.add_argument("--lam", type=float, default=1e-3, help="objective perturbation's regularisation weight")
    ap.add_argument("--extra-hmax", type=int, default=4, help="an extra PFDS column at this h_max (0: none)")
    ap.add_argument("--agents", type=int, default=None, help="number of agents for every dataset (default 5)")
    ap.add_argument("--out", default=None, help="write the markdown table here")
    ap.add_argument(
        "--json", default=None, help="write the results here (a path inside the repository); marks the table"
    )
    ap.add_argument("--alias", default="pt", help="the numbers alias of the marked table")
    args = ap.parse_args(argv)
    tasks = load_tasks()
    if args.datasets:
        tasks = [t for t in tasks if t.name.split()[0] in args.datasets]
    if args.agents is not None:
        for t in tasks:
            t.agents = args.agents
    t0 = time.time()
    rows = run(tasks, args.epsilons, args.folds, args.repeats, args.seed, args.lam, args.extra_hmax or None)
    seconds = time.time() - t0
    command = "python benches/pfds_table.py " + " ".join(argv if argv is not None else sys.argv[1:])
    json_path = None
    if args.json:
        root = Path(__file__).resolve().parents[1]
        path = Path(args.json).resolve()
        json_path = str(path.relative_to(root)) if path.is_relative_to(root) else str(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"command": command.strip(), "seconds": round(seconds, 1), "rows": rows}, indent=1))
    md = to_markdown(rows, command.strip(), seconds, args.folds, args.repeats, args.lam, json_path, args.alias)
    print(md)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
