"""Adding a purchase is one module, one registration line, one test module and one docs page: a toy purchase,
written here as a user would write its module, registered, and run through the entry points unchanged."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pytest

import dpsumm
from dpsumm.messages import Message, OwnerRequest
from dpsumm.methods import PURCHASES, method_from_options
from dpsumm.protocols.base import option
from dpsumm.protocols.nominations.aggregator import Aggregator, Pool
from dpsumm.protocols.nominations.purchase import Purchase


@dataclass(frozen=True)
class SampleRequest(OwnerRequest):
    """Sell ``count`` of your rows drawn uniformly (a public seed: the request depends on nobody's data)."""

    kind: ClassVar[str] = "toy_sample_request"
    count: int
    sample_seed: int

    def answer(self, owner: Any) -> Message:
        picked = np.random.default_rng(self.sample_seed).choice(
            owner.n_rows, min(self.count, owner.n_rows), replace=False
        )
        tokens = np.sort(picked).astype(np.int64)
        return Sample(
            tokens=tokens,
            points=np.array(owner.data[tokens]),
            labels=None if owner.labels is None else np.asarray(owner.labels)[tokens],
        )


@dataclass(frozen=True)
class Sample(Message):
    kind: ClassVar[str] = "toy_sample"
    tokens: np.ndarray = field(repr=False)
    points: np.ndarray = field(repr=False)
    labels: np.ndarray | None = field(repr=False)


@dataclass(frozen=True, repr=False)
class UniformSample(Purchase):
    """Buy ``rows_per_owner`` uniformly drawn rows of every owner; owners' epsilon 0 (the request is public)."""

    name: ClassVar[str] = "toy-uniform"
    nominates: ClassVar[bool] = False

    rows_per_owner: int = option(20, help="rows each owner sells, drawn uniformly")

    def buy(self, aggregator: Aggregator, size: int) -> Pool:
        release = aggregator.target()  # the consumer's hashed mean (certified) and D_v's rows for the choice
        seeds = aggregator.rng.derive("toy-samples")
        requests = {
            o: SampleRequest(count=self.rows_per_owner, sample_seed=int(seeds.integers(2**63)))
            for o in aggregator.owners
        }
        n_features = aggregator.config.n_features

        def check(owner: str, reply: object) -> str | None:
            if not isinstance(reply, Sample) or np.shape(reply.points)[1:] != (n_features,):
                return "sent a malformed sample"
            return None

        pool = Pool(exact_mean=np.asarray(release.exact_mean))
        for o, r in aggregator.request_owners(requests, "toy-sample", check).items():
            pool.offered[o] = (r.tokens, aggregator.hasher.transform(r.points))
            pool.rows[o], pool.labels[o] = r.points, r.labels
            aggregator.accessed[o] += len(r.tokens)
        return pool


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(PURCHASES, UniformSample.name, UniformSample)  # the one registration line


def test_the_toy_purchase_runs_through_summarize_with_its_own_option() -> None:
    rng = np.random.default_rng(3)
    owners = [dpsumm.Owner(rng.random((50, 3)).astype(np.float32), name=f"o{k}") for k in range(4)]
    result = dpsumm.summarize(
        owners,
        rng.random((30, 3)).astype(np.float32),
        12,
        dpsumm.Nominations(purchase=UniformSample(rows_per_owner=10)),
        random_state=1,
        progress=False,
    )
    assert len(result.points) == 12 and result.accessed.total == 40
    assert result.extra["purchase"] == "toy-uniform"
    assert result.privacy is not None and result.privacy.epsilon("owners") == 0.0
    for row, k, i in zip(result.points, result.owner, result.index):
        np.testing.assert_array_equal(row, owners[k].data[i])


def test_the_entry_points_build_the_registered_toy_from_flat_options(registered: None) -> None:
    method = method_from_options("nominations", {"purchase": "toy-uniform", "rows_per_owner": 7})
    assert method == dpsumm.Nominations(purchase=UniformSample(rows_per_owner=7))
    with pytest.raises(dpsumm.InvalidParameterError) as info:
        method_from_options("nominations", {"purchase": "toy-uniform", "label_set": "0,1"})
    assert info.value.argument == "label_set"


def test_a_purchase_name_or_message_kind_is_registered_once() -> None:
    """Registering a name already taken by another purchase (or a message kind by another message class) is refused
    naming it, instead of silently replacing the first; the same class again changes nothing."""

    @dataclass(frozen=True, repr=False)
    class Impostor(UniformSample):
        name: ClassVar[str] = "labels"

    before = dict(PURCHASES)
    with pytest.raises(dpsumm.InvalidParameterError) as info:
        PURCHASES["labels"] = Impostor
    assert info.value.argument == "name"
    with pytest.raises(dpsumm.InvalidParameterError) as info:
        PURCHASES.update({"labels": Impostor})
    assert info.value.argument == "name"
    with pytest.raises(dpsumm.InvalidParameterError) as info:
        PURCHASES["other"] = UniformSample  # not its own name
    assert info.value.argument == "name"
    PURCHASES["labels"] = before["labels"]
    assert dict(PURCHASES) == before
    with pytest.raises(dpsumm.InvalidParameterError) as kind_info:

        @dataclass(frozen=True)
        class Shadow(Message):
            kind: ClassVar[str] = "toy_sample"

    assert kind_info.value.argument == "kind"
    from dpsumm.messages import from_dict

    assert type(from_dict({"kind": "toy_sample", "tokens": [], "points": [], "labels": None})) is Sample
