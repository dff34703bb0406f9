"""Fork safety (issue 43): every kind of multi-threaded call still runs, with the same result, in a process forked
after the parent made it (the Rust core's thread pools, ``rust/src/pool.rs``; the in-process transport's threads).

A forked child inherits the parent's pools but none of their threads. Each check runs in a fresh interpreter
(``subprocess``) that makes every call once, forks once per call, makes the call again in the child and reports
whether the child returned the same bytes; a child that has not answered within ``CHILD_SECONDS`` is killed and
reported as hung, so a regression fails these tests instead of hanging them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

#: Forks and spawns processes (the inner loop skips them: pytest -m "not slow"; CI runs them).
pytestmark = [pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork"), pytest.mark.slow]


CHILD_SECONDS = 60


# The calls, by name: each a zero-argument function returning arrays (or numbers) that must be equal in parent
# and child. Sizes are large enough that every kernel splits its work over the pool (10^5 rows for the hasher).
CALLS = textwrap.dedent("""
    import numpy as np
    import dpsumm
    from dpsumm import _core, kernels
    from dpsumm.transport import InProcessTransport
    from dpsumm.messages import Setup

    rng = np.random.default_rng(0)
    X = rng.random((100_000, 12), dtype=np.float32)
    hasher = dpsumm.RFFHasher(12, dim=64, gamma=0.5)
    hasher2 = dpsumm.RFFHasher(12, dim=64, gamma=0.5, threads=2)
    H = hasher.transform(X[:20_000])
    target = H[:500].mean(axis=0).astype(np.float64)
    A, B = X[:1500].astype(np.float64), X[1500:2500].astype(np.float64)
    owners = [rng.random((400, 4)) for _ in range(3)]
    validation = rng.random((60, 4))
    labelled = [dpsumm.Owner(o, labels=rng.integers(0, 3, 400)) for o in owners]
    validation_labels = rng.integers(0, 3, 60)

    def summarize(method, data=owners, **kw):
        res = dpsumm.summarize(data, validation, 40, method, random_state=0, progress=False, **kw)
        return np.asarray(res.owner), np.asarray(res.index)

    transport = InProcessTransport({"a": dpsumm.parties.OwnerParty(owners[0], name="a"),
                                    "b": dpsumm.parties.OwnerParty(owners[1], name="b")}, max_workers=2)
    setup = Setup(n_features=4, dim=16, gamma=0.5, hash_seed=0, reveal="points")

    def transport_round():
        replies = transport.request_many({"a": setup, "b": setup})
        return [type(r).__name__ for r in replies.values()]

    CALLS = {
        "RFFHasher.transform": lambda: hasher.transform(X),
        "RFFHasher.transform threads=2": lambda: hasher2.transform(X),
        "finite_max_abs": lambda: _core.finite_max_abs(X),
        "row_digests": lambda: _core.row_digests(H),
        "greedy_select (rayon::scope)": lambda: kernels.greedy_select(H, target, 50),
        "stochastic_greedy_select": lambda: kernels.stochastic_greedy_select(H, target, 50, 2000, random_state=3),
        "kernel_greedy (rayon::scope)": lambda: _core.kernel_greedy(
            X[:3000], np.full(3000, 0.5), np.ones(3000), 0, 20, 0.5),
        "kernel_row_means": lambda: kernels.kernel_row_means(A, B, 0.5),
        "mmd2": lambda: kernels.mmd2(A, B, 0.5),
        "best_rows": lambda: kernels.best_rows([H[:10_000], H[10_000:]], H[0]),
        "row_dots": lambda: _core.row_dots(H, H[0]),
        "BidIndex": lambda: kernels.BidIndex.from_hashes(H).best(H[1]),
        "nominate": lambda: kernels.nominate(X[:20_000], hasher, target, temperature=0.1, nominees=20,
                                             random_state=1).indices,
        "owner hash sum": lambda: _core.owner_hash_sum(X, hasher._projection),
        "owner hash scores": lambda: _core.owner_hash_scores(X, hasher._projection, np.ones(hasher.dim), 0.5),
        "quantize_column_sums": lambda: _core.quantize_column_sums(H, 0.01, _core.Csprng(5)),
        "summarize nominations": lambda: summarize("nominations"),
        "summarize label purchase": lambda: summarize(dpsumm.Nominations(label_set=(0, 1, 2), dim=64), labelled,
                                                      validation_labels=validation_labels),
        "summarize winners purchase": lambda: summarize(dpsumm.Nominations(purchase="winners")),
        "summarize paper": lambda: summarize("paper"),
        "InProcessTransport reused": transport_round,
    }
""")


RUN = CALLS + textwrap.dedent("""
    import json, os, pickle, select, signal, sys, time

    def same(a, b):
        return pickle.dumps(a) == pickle.dumps(b)

    def in_child(name, want):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            code = 2
            try:
                code = 0 if same(CALLS[name](), want) else 1
            finally:
                os.write(w, bytes([code]))
                os._exit(0)
        os.close(w)
        ready, _, _ = select.select([r], [], [], CHILD_SECONDS)
        answer = os.read(r, 1) if ready else b""
        if not answer:
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(r)
        return {b"": "hung", b"\\x00": "same", b"\\x01": "different", b"\\x02": "raised"}[answer]

    names = sys.argv[1:] or list(CALLS)
    wants = {name: CALLS[name]() for name in names}  # every pool and thread exists before the first fork
    print(json.dumps({name: in_child(name, wants[name]) for name in names}))
""").replace("CHILD_SECONDS", str(CHILD_SECONDS))


def _results() -> dict[str, str]:
    out = subprocess.run(
        [sys.executable, "-c", RUN], capture_output=True, text=True, timeout=CHILD_SECONDS * 4, check=False
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def results() -> dict[str, str]:
    return _results()


NAMES = [
    "RFFHasher.transform",
    "RFFHasher.transform threads=2",
    "finite_max_abs",
    "row_digests",
    "greedy_select (rayon::scope)",
    "stochastic_greedy_select",
    "kernel_greedy (rayon::scope)",
    "kernel_row_means",
    "mmd2",
    "best_rows",
    "row_dots",
    "BidIndex",
    "nominate",
    "owner hash sum",
    "quantize_column_sums",
    "summarize nominations",
    "summarize label purchase",
    "summarize winners purchase",
    "summarize paper",
    "InProcessTransport reused",
]


@pytest.mark.parametrize("name", NAMES)
def test_a_forked_child_makes_the_same_call_with_the_same_result(results, name):
    assert results[name] == "same"


def test_multiprocessing_with_the_fork_start_method_returns():
    script = CALLS + textwrap.dedent("""
        import multiprocessing as mp

        def work(i):
            return hasher.transform(X).sum(dtype=np.float64) + float(summarize("nominations")[1].sum()) * i

        want = [work(i) for i in range(3)]
        with mp.get_context("fork").Pool(2) as pool:
            got = pool.map_async(work, range(3)).get(timeout=CHILD_SECONDS)
        print("same" if got == want else f"different: {got} {want}")
    """).replace("CHILD_SECONDS", str(CHILD_SECONDS))
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=CHILD_SECONDS * 2, check=False
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().splitlines()[-1] == "same"
