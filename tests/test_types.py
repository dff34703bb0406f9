"""dpsumm.types: the public API's type aliases resolve, and ``Method`` names exactly the methods the library runs."""

from __future__ import annotations

import typing

import numpy.typing as npt

import dpsumm
from dpsumm import types
from dpsumm.methods import resolve_method
from dpsumm.privacy import Csprng


def test_the_aliases_resolve_to_what_they_say():
    assert set(types.__all__) == {"Method", "ArrayLike", "RandomState"}
    assert types.ArrayLike is npt.ArrayLike
    args = typing.get_args(types.RandomState)
    assert type(None) in args and int in args
    forward = [a for a in args if isinstance(a, typing.ForwardRef)]
    assert len(forward) == 1 and forward[0].__forward_arg__ == "Csprng"
    resolved = typing.get_type_hints(_annotated, globalns={"types": types, "Csprng": Csprng})["random_state"]
    assert set(typing.get_args(resolved)) == {type(None), int, Csprng}


def _annotated(random_state: types.RandomState) -> None: ...


def test_every_method_name_resolves_to_a_method_class():
    names = typing.get_args(types.Method)
    assert len(names) == len(set(names)) == 6
    for name in names:
        method = resolve_method(name)
        assert type(method).__name__ in dpsumm.__all__, name
