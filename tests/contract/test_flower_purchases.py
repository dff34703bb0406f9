"""Every cell purchase on Flower equals its in-process run: the label purchase (tilted) and the
purchases by strata and by direction, on one federation of labelled owners with strata (real SuperLink and
SuperNode processes on 127.0.0.1; the nominations, winners and paper runs are in tests/flower/test_local.py)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

import dpsumm
from federation_data import DIM, LABEL_SET, N_FEATURES, RANDOM_STATE, _labels_cli_flags
from federations import SharedFederation, run_bound, shared_federation

#: Spawns processes (the inner loop skips them: pytest -m "not slow"; CI runs them).
pytestmark = pytest.mark.slow

flwr = pytest.importorskip("flwr", reason="Flower is not installed: pip install 'dpsumm[flower]' (flwr==1.41.0)")


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SharedFederation]:
    """The module's federation (plain HTTP: tests/flower/test_local.py runs one over TLS)."""
    yield from shared_federation(tmp_path_factory, tls=False)


def test_flower_labels_equal_in_process(shared: SharedFederation) -> None:
    """``purchase="labels"`` on Flower with the tilt (``--sale-tilt-share 0.3``: every release of the untilted
    purchase and the consumer's second one; owners with their labels, the consumer with node config ``labels``), the
    run config built by ``dpsumm flower``'s parser from ``--purchase labels --label-set 0,1,2 --sale-tilt-share
    0.3``: the owners' DP label counts
    and hash sums, the cells, the consumer's histogram over them and the label quota purchase give the same summary,
    cells, quotas and ledger as in process (every party's noise seeded on both sides: NOT private); with the tilt the
    consumer's second release, g~, too (its noise stream derived in the same order by the node, which rebuilds its
    party for every message, and in process). (``dpsumm flower --run`` itself, which starts such a federation, runs
    in test_cli_flower_run_end_to_end and the quick-start tests.)"""
    from dpsumm.cli import build_parser
    from dpsumm.cli.flower import _flower_run_config

    owners, labels = shared.owners, shared.labels
    flags = _labels_cli_flags(shared.paths, shared.label_paths, shared.vpath, shared.ypath)
    share = 0.3  # the tilted purchase makes every release of the untilted one, then the consumer's g~
    method = dpsumm.Nominations(dim=DIM, purchase=dpsumm.ByLabel(label_set=LABEL_SET, sale_tilt_share=share))
    ref = dpsumm.summarize(
        [dpsumm.Owner(a, labels=labels[n], name=n) for n, a in owners.items()],
        shared.validation,
        6,
        method,
        validation_labels=shared.validation_labels,
        gamma="median",
        random_state=RANDOM_STATE,
        progress=False,
    )
    args = build_parser().parse_args([*flags, "--sale-tilt-share", str(share)])
    config = _flower_run_config(args, n_owners=len(owners), n_features=N_FEATURES)
    res = shared.fed.run(config, timeout=run_bound(ref, len(owners) + 1))
    assert res.owner_names == ref.owner_names
    np.testing.assert_array_equal(res.owner, ref.owner)
    np.testing.assert_array_equal(res.index, ref.index)
    np.testing.assert_array_equal(res.points, ref.points)
    np.testing.assert_array_equal(res.labels, ref.labels)
    assert np.isin(res.labels, [0, 2]).sum() >= 5  # label 1 is not wanted (its noisy count may buy a row of it)
    assert res.accessed == ref.accessed and res.accessed.total <= 3 * 6
    # the owners' sketches, the consumer's histogram, with the tilt its g~, the purchase
    assert res.extra["exchanges"] == ref.extra["exchanges"] == 4
    assert res.events == ref.events == []
    assert res.extra["purchase"] == "labels"
    assert res.extra["quotas"] == ref.extra["quotas"] and res.extra["label_quotas"] == ref.extra["label_quotas"]
    assert res.extra["label_cells"] == ref.extra["label_cells"] and len(ref.extra["label_cells"]) >= 2
    for party in ("owners", "validation"):
        assert res.privacy.epsilon(party, 1e-6) == ref.privacy.epsilon(party, 1e-6) <= 1.0
        assert res.privacy.certified(party)
    assert res.privacy.to_dict() == ref.privacy.to_dict()
    assert res.privacy_status() == ref.privacy_status() == "seeded: NOT private"


@pytest.mark.filterwarnings("ignore:the 'direction' purchase keys its cells:UserWarning")
@pytest.mark.filterwarnings("ignore:the summary is no closer to the validation rows:UserWarning")
def test_flower_strata_and_direction_equal_in_process(shared: SharedFederation) -> None:
    """The purchases by strata and by direction on Flower: every node's strata from its node config ``strata`` (a
    CSV of string and number columns), the run config's ``levels`` as text; the same summary, cells, quotas and
    ledger as in process (seeded on both sides: NOT private), the consumer's direction release answered through the
    node's one hand-over of its own requests."""
    from dpsumm.methods import ByDirection

    levels = (("low", "mid", "high"), (0, 1))
    as_owners = [
        dpsumm.Owner(a, labels=shared.labels[n], strata=shared.strata[n], name=n) for n, a in shared.owners.items()
    ]
    kw = dict(random_state=RANDOM_STATE, progress=False, gamma="median", validation_strata=shared.strata["consumer"])
    methods = {
        "strata": dpsumm.Nominations(dim=DIM, purchase=dpsumm.ByStrata(levels=levels)),
        "direction": dpsumm.Nominations(dim=DIM, purchase=ByDirection(levels=levels, bins=3)),
    }
    for k, method in methods.items():
        ref = dpsumm.summarize(as_owners, shared.validation, 6, method, **kw)  # type: ignore[arg-type]
        config = {
            "size": 6,
            "n-features": N_FEATURES,
            "dim": DIM,
            "random-state": RANDOM_STATE,
            "gamma": "median",
            "method": "nominations",
            "purchase": k,
            "levels": "low,mid,high;0,1",
            **({"bins": 3} if k == "direction" else {}),
        }
        res = shared.fed.run(config, timeout=run_bound(ref, len(shared.owners) + 1))
        np.testing.assert_array_equal(res.owner, ref.owner)
        np.testing.assert_array_equal(res.index, ref.index)
        np.testing.assert_array_equal(res.labels, ref.labels)
        assert res.accessed == ref.accessed and res.accessed.total <= 3 * 6 and res.events == ref.events == []
        assert res.extra["label_quotas"] == ref.extra["label_quotas"]
        assert [c["owners"] for c in res.extra["label_cells"]] == [c["owners"] for c in ref.extra["label_cells"]]
        # the direction: the owners' sums, the direction, their counts, the histogram, the sales
        assert res.extra["exchanges"] == ref.extra["exchanges"] == (5 if k == "direction" else 3)
        assert res.extra["validation_fit"] == ref.extra["validation_fit"]  # the aggregator's, on both transports
        assert res.privacy.to_dict() == ref.privacy.to_dict()
