"""dpsumm.flower.config (FlowerRunConfig): bad and inapplicable keys are refused naming the key, caps hold, the
run config must be a mapping.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpsumm  # noqa: E402
from dpsumm.flower.config import RUN_CONFIG_DEFAULTS, FlowerRunConfig, write_app  # noqa: E402
from dpsumm.methods import MethodOptionError
from refusal import config_junk, refused

RC = {"owners": 3, "n-features": 4, "size": 5}


@pytest.mark.parametrize(
    "change,argument",
    [
        ({"size": 2**70}, "size"),
        ({"n-features": 2**40}, "n-features"),
        ({"random-state": 2**70}, "random-state"),
        ({"node-wait": 1e300}, "node-wait"),
        ({"reply-timeout": 1e300}, "reply-timeout"),
        ({"poll-interval": 1e300}, "poll-interval"),
        ({"seed-set": 2**70, "gamma": "median"}, "seed-set"),
    ],
)
def test_run_config_caps(change, argument):
    refused(lambda: FlowerRunConfig.from_run_config({**RC, **change}), argument)


@pytest.mark.parametrize("value", [None, "size=5", 5])
def test_run_config_must_be_a_mapping(value):
    refused(lambda: FlowerRunConfig.from_run_config(value), "run_config")


flwr = pytest.importorskip("flwr", reason="Flower is not installed: pip install 'dpsumm[flower]' (flwr==1.41.0)")


def test_run_config_names_bad_keys(tmp_path: Path) -> None:
    with pytest.raises(dpsumm.InvalidParameterError, match="`owners`") as info:
        FlowerRunConfig.from_run_config({"n-features": 3})
    assert info.value.argument == "owners"
    with pytest.raises(dpsumm.InvalidParameterError, match="unknown run config keys"):
        FlowerRunConfig.from_run_config({"owners": 1, "n-features": 3, "sise": 3})
    with pytest.raises(dpsumm.InvalidParameterError, match="`method`"):
        FlowerRunConfig.from_run_config({"owners": 1, "n-features": 3, "method": "exact-greedy"})
    base = {"owners": 2, "n-features": 3, "method": "nominations", "purchase": "labels"}
    for bad, why in (
        ("0,,1", "empty label"),
        ("[0, 1", "not a valid JSON list"),
        ("[[0], 1]", "JSON list of numbers"),
        ("", "needs run config `label-set`"),
        (3, "must be a string"),
        ("0,1,1", "repeats a label"),
        ("0,cat", "mixes strings and numbers"),
        ("[NaN]", "finite numbers or strings"),
    ):
        with pytest.raises(dpsumm.InvalidParameterError, match=why) as info:
            FlowerRunConfig.from_run_config({**base, "label-set": bad})
        assert info.value.argument == "label_set"
        assert bad == "" or "run config `label-set`" in str(info.value)
    with pytest.raises(
        dpsumm.InvalidParameterError, match="run config `label-set` does not apply to purchase 'winners'"
    ):
        FlowerRunConfig.from_run_config({**base, "purchase": "winners", "label-set": "0,1"})
    with pytest.raises(dpsumm.InvalidParameterError, match="run config `purchase` must be one of"):
        FlowerRunConfig.from_run_config({**base, "purchase": "quotas"})
    for text, labels in (("0, 1,2", (0, 1, 2)), ('["0", "cat"]', ("0", "cat")), ("0.5,1.5", (0.5, 1.5))):
        method = FlowerRunConfig.from_run_config({**base, "label-set": text}).method
        assert method == dpsumm.Nominations(purchase=dpsumm.ByLabel(label_set=labels))
        assert method.purchase.label_set == labels
    # Without `purchase`, a label set is crossed with the default purchase's cells (as the CLI's --label-set);
    # without both, the default ByDirection() reads no labels.
    auto = FlowerRunConfig.from_run_config({"owners": 2, "n-features": 3, "method": "nominations", "label-set": "0,1"})
    assert auto.method.purchase == dpsumm.ByDirection(label_set=(0, 1)) and auto.method.needs_labels
    plain = FlowerRunConfig.from_run_config({"owners": 2, "n-features": 3, "method": "nominations"})
    assert plain.method.purchase == dpsumm.ByDirection() and not plain.method.needs_labels
    text = write_app(tmp_path / "app", size=4).read_text()
    assert 'serverapp = "dpsumm.flower.server_app:app"' in text and "size = 4" in text


def test_flower_run_config_refuses_inapplicable_and_bad_keys():
    base = {"size": 10, "owners": 2, "n-features": 4}
    with pytest.raises(MethodOptionError, match="run config `nominees` does not apply"):
        FlowerRunConfig.from_run_config({**base, "method": "paper", "nominees": 5})
    with pytest.raises(dpsumm.InvalidParameterError, match="`candidates`"):
        FlowerRunConfig.from_run_config({**base, "nominees": 20, "candidates": 5})
    with pytest.raises(dpsumm.InvalidParameterError):  # 0 is a value, not "default"
        FlowerRunConfig.from_run_config({**base, "nominees": 0})
    with pytest.raises(dpsumm.InvalidParameterError):  # nominees x owners < size: before any node is asked
        FlowerRunConfig.from_run_config({**base, "nominees": 4})


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("a=3", "every one of the 2 owners"),
        ("a=3,a=4", "names owner 'a' twice"),
        ("a=3,b=-1", "NAME=ROWS"),
        ("a=3,b=x", "NAME=ROWS"),
        ("a=3,=4", "NAME=ROWS"),
        ("a=3,b=\u00b2", "NAME=ROWS"),
        (f"a=3,b={2**41}", "above the cap"),
        (5, "must be text"),
    ],
)
def test_owner_rows_are_refused_naming_the_key(text: object, match: str) -> None:
    from dpsumm.flower.config import FlowerRunConfig

    with pytest.raises(dpsumm.InvalidParameterError, match=match) as info:
        FlowerRunConfig.from_run_config({"owners": 2, "n-features": 3, "owner-rows": text})
    assert info.value.argument == "owner-rows"


def test_owner_rows_are_the_plan_s_public_sizes() -> None:
    from dpsumm.flower.config import FlowerRunConfig

    cfg = FlowerRunConfig.from_run_config({"owners": 2, "n-features": 3, "owner-rows": " a = 30, b=40"})
    assert cfg.owner_rows == {"a": 30, "b": 40}
    with pytest.raises(dpsumm.InvalidParameterError, match="exceeds the owners. total rows"):  # the plan reads them
        FlowerRunConfig.from_run_config({"owners": 2, "n-features": 3, "size": 10, "owner-rows": "a=3,b=4"})


@settings(max_examples=300, deadline=None)
@given(key=st.sampled_from(sorted(RUN_CONFIG_DEFAULTS)), value=config_junk)
def test_any_run_config_value_is_accepted_or_refused_with_a_dpsumm_error(key: str, value: object) -> None:
    """Every run config key with values of every type: the run config is read, or refused as a DpsummError before
    any node is asked anything; never a generic exception from deep inside."""
    try:
        FlowerRunConfig.from_run_config({"owners": 2, "n-features": 3, key: value})
    except dpsumm.DpsummError as exc:
        assert exc.argument, str(exc)


def test_the_waits_scale_with_the_owners_unless_set() -> None:
    """Unset, ``node-wait`` and ``reply-timeout`` are a base plus half a second per owner (one declaration,
    default_timeouts): 61.5 s and 121.5 s for 3 owners, 560 s and 620 s for 1,000, above the K = 1,000 simulation's
    longest exchange and its discovery (benches/results/simulation.json); a value set is kept as it is."""
    import json

    from dpsumm.flower.config import default_timeouts

    assert RUN_CONFIG_DEFAULTS["node-wait"] == RUN_CONFIG_DEFAULTS["reply-timeout"] == ""
    small = FlowerRunConfig.from_run_config(RC)
    assert (small.node_wait, small.reply_timeout) == default_timeouts(3) == (121.5, 61.5)
    big = FlowerRunConfig.from_run_config({**RC, "owners": 1000})
    assert (big.node_wait, big.reply_timeout) == (620.0, 560.0)
    sim = json.loads((Path(__file__).parents[2] / "benches/results/simulation.json").read_text())
    assert sim["owners"] == 1000
    assert big.reply_timeout > 2 * max(e["seconds"] for e in sim["simulation"]["exchanges"])
    assert big.node_wait > 2 * sim["simulation"]["discovery_s"]
    kept = FlowerRunConfig.from_run_config({**RC, "owners": 1000, "node-wait": 7.0, "reply-timeout": 9.0})
    assert (kept.node_wait, kept.reply_timeout) == (7.0, 9.0)
