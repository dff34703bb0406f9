"""dpsumm.protocols.nominations (the package): its registry of purchases, one line per purchase."""

from __future__ import annotations

import dpsumm
from dpsumm.protocols import nominations
from dpsumm.protocols.nominations import PURCHASES


def test_the_registry_maps_each_name_to_its_purchase():
    assert PURCHASES == {
        "direction": nominations.ByDirection,
        "nominees": nominations.Nominees,
        "labels": nominations.ByLabel,
        "strata": nominations.ByStrata,
        "winners": nominations.Winners,
    }
    assert {cls.name for cls in PURCHASES.values()} == set(PURCHASES)
    assert list(PURCHASES)[0] == "direction"  # the default first


def test_the_default_purchase_is_registered_and_the_top_level_exports_the_registered_ones():
    assert type(dpsumm.Nominations().purchase) is PURCHASES["direction"]
    for cls in PURCHASES.values():  # every purchase from dpsumm.methods and the top level
        assert getattr(dpsumm.methods, cls.__name__) is cls
        assert getattr(dpsumm, cls.__name__) is cls and cls.__name__ in dpsumm.__all__


def test_the_package_exports_what_it_names():
    for name in nominations.__all__:
        assert getattr(nominations, name) is not None, name
