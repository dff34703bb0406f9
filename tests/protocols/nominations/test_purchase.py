"""dpsumm.protocols.nominations.purchase: the Purchase base class, what every purchase inherits, and what each
registered purchase declares about itself."""

from __future__ import annotations

import dataclasses

import pytest

from dpsumm.protocols.nominations import PURCHASES, ByLabel, Nominees, Winners
from dpsumm.protocols.nominations.purchase import Purchase, PurchaseShape


def test_the_base_declares_a_certified_nominating_purchase_without_labels():
    assert (Purchase.name, Purchase.owner_release, Purchase.uncertified, Purchase.needs_labels, Purchase.nominates) == (
        "",
        False,
        None,
        False,
        True,
    )
    p = Nominees()
    assert p.public_labels() is None
    assert p.default_choice("points") == "kernel" and p.default_choice("hashes") == "hashes"
    assert p.check_method(object()) is None
    assert p.check_plan(object(), PurchaseShape(5, 2, [10, 10], 20, None, 0.0, 0.0)) is None


def test_buy_is_what_a_purchase_must_define():
    @dataclasses.dataclass(frozen=True, repr=False)
    class Bare(Purchase):
        name = "bare"

    with pytest.raises(NotImplementedError):
        Bare().buy(None, 3)


@pytest.mark.parametrize("cls", sorted(PURCHASES.values(), key=lambda c: c.name), ids=lambda c: c.name)
def test_every_purchase_is_a_frozen_purchase_with_its_own_name(cls):
    assert issubclass(cls, Purchase) and cls.name and cls.name == cls.name.lower()
    required = {"label_set": (0, 1)} if "label_set" in cls.option_names() else {}
    if "levels" in cls.option_names() and cls.name == "strata":
        required["levels"] = ((0, 1),)
    p = cls(**required)
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.x = 1
    assert (cls.uncertified is None) or isinstance(cls.uncertified, str)
    assert p.commitment("points", "kernel") in ("hashes", "digests")


def test_what_the_shipped_purchases_declare():
    assert not Nominees.owner_release and Nominees.uncertified is None and not Nominees.needs_labels
    assert Winners.uncertified  # the winners' rows are chosen on the owners' data: not certified
    assert ByLabel.needs_labels and ByLabel.owner_release
    assert ByLabel(label_set=(2, 0, 1)).public_labels() == (2, 0, 1)  # the public set, in the order given
