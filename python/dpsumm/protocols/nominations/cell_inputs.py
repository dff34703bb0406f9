"""The cell purchases' checks of the parties' inputs (:meth:`.cell_purchase.CellPurchase.check_party_data`): the
owners' and the consumer's labels against the public label set, their strata against the declared levels, and
enough sellable rows to fill the summary. Each in-process party's own check of its rows, before anything is
released (no budget is spent).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ..._validation import label_vector
from ...errors import InvalidParameterError
from ...strata import check_strata_against, strata_columns
from ..base import PartyData
from .cell_rule import key_counts

__all__ = ["check_cell_party_data"]


def check_cell_party_data(method: Any, data: PartyData, size: int) -> PartyData:
    """``data`` as a run of the cell family reads it (labels in the public label set, strata as columns checked
    against the declared levels), or InvalidParameterError naming the argument."""
    labels = data.labels
    validation_labels = _validation_labels(
        data.validation_labels, data.validation_rows, method, labels[0] is not None, data.transport_given
    )
    validation_strata = _validation_strata(data.validation_strata, data.validation_rows, method, data.transport_given)
    strata = _owner_strata(data.strata, data.datas, data.names, method, size)
    if method.needs_labels and labels[0] is not None:  # labels for every owner or none (summarize's _as_owners)
        # The owners count their rows per public label: labels of the set's kind, enough of them in the set.
        label_set = tuple(method.public_labels() or ())
        in_set: list[np.ndarray | None] = []
        for k, lab in enumerate(labels):
            try:
                in_set.append(label_vector(lab, f"labels of {data.names[k]!r}", data.datas[k].shape[0], label_set))
            except InvalidParameterError as exc:
                raise InvalidParameterError(str(exc), "owners") from None
        _check_sellable([lab for lab in in_set if lab is not None], label_set, size)
        labels = in_set
    return dataclasses.replace(
        data,
        labels=labels,
        strata=strata,
        validation_labels=validation_labels,
        validation_strata=validation_strata,
    )


def _owner_strata(
    given: list[object], datas: list[np.ndarray], names: list[str], method: Any, size: int
) -> list[list[np.ndarray] | None]:
    """The owners' strata as columns, checked against the method's declared levels, with enough rows inside them
    to fill ``size`` (rows outside the levels are never sold); all None when the method reads no strata. A check
    each in-process owner makes on its own rows before anything is released (no budget is spent)."""
    levels = method.public_levels() if method.needs_strata else None
    if levels is None:  # owners built with strata serve every purchase: one that reads none leaves them aside
        return [None] * len(given)
    if any(st is None for st in given):
        raise InvalidParameterError(
            f"{method!r} buys rows by stratum: give strata for every owner (dpsumm.Owner(X, strata=...))", "owners"
        )
    out: list[list[np.ndarray] | None] = []
    inside = 0
    for st, d, name in zip(given, datas, names):
        try:
            cols = strata_columns(st, f"strata of {name!r}", d.shape[0])
            inside += int((check_strata_against(cols, levels, f"strata of {name!r}") >= 0).sum())
        except InvalidParameterError as exc:
            raise InvalidParameterError(str(exc), "owners") from None
        out.append(cols)
    if inside == 0:
        raise InvalidParameterError(
            f"no owner holds a row whose strata are all in the declared levels {levels!r:.200}: rows outside them "
            "are never sold; check that the strata and the levels use the same values",
            "owners",
        )
    if inside < size:
        raise InvalidParameterError(
            f"`size` ({size}) exceeds the owners' rows whose strata are in the declared levels ({inside}; the "
            "others are never sold)",
            "size",
        )
    return out


def _validation_strata(value: object, m: int, method: Any, transport_given: bool) -> list[np.ndarray] | None:
    """``validation_strata`` checked against the method's declared levels (before any budget is spent)."""
    if value is None:
        if method.needs_strata and not transport_given:
            raise InvalidParameterError(
                f"{method!r} releases the validation set's histogram over strata: pass `validation_strata` (and "
                "strata for every owner)",
                "validation_strata",
            )
        return None
    levels = method.public_levels() if method.needs_strata else None
    if levels is None:
        raise InvalidParameterError(
            f"`validation_strata` applies only to a purchase by strata (Nominations(purchase=ByStrata(levels="
            f"...))), not to {method!r}",
            "validation_strata",
        )
    cols = strata_columns(value, "validation_strata", m)
    if not (check_strata_against(cols, levels, "validation_strata") >= 0).any():
        raise InvalidParameterError(
            f"no validation row has strata in the declared levels {levels!r:.200}: check that both use the same "
            "values and types",
            "validation_strata",
        )
    return cols


def _check_sellable(labels: list[np.ndarray], label_set: tuple[Any, ...], size: int) -> None:
    """Refuse a label purchase that cannot fill ``size`` rows: only rows whose label is in the public ``label_set`` are
    ever sold (an owner short of a label makes it up from its other labels in the set, never from outside it).

    A check each in-process owner makes on its own rows before anything is released (no budget is spent).
    """
    allowed = np.asarray(label_set)
    total = 0
    for lab in labels:  # what the owners count (cell_rule.key_counts), owner by owner until the summary is filled
        total += int(key_counts(lab, allowed).sum())
        if total >= size:
            return
    if total == 0:
        examples = np.unique(np.concatenate([lab[:1000] for lab in labels]))[:5]
        raise InvalidParameterError(
            f"no owner holds a row whose label is in the method's label_set {label_set[:10]!r} (owners' labels such "
            f"as {examples.tolist()!r}): rows with other labels are never sold; check that the owners' labels and "
            "the label_set use the same values",
            "owners",
        )
    if total < size:
        outside = sum(len(lab) for lab in labels) - total
        raise InvalidParameterError(
            f"`size` ({size}) exceeds the owners' rows whose label is in label_set ({total}; {outside} rows hold "
            "labels outside it and are never sold)",
            "size",
        )


def _validation_labels(
    value: object, m: int, method: Any, owners_labelled: bool, transport_given: bool
) -> np.ndarray | None:
    """``validation_labels`` checked against the method (before any budget is spent)."""
    needs = method.needs_labels
    if value is None:
        if needs and not transport_given:
            raise InvalidParameterError(
                f"{method!r} releases the validation set's label histogram: pass "
                "`validation_labels` (and labels for every owner)",
                "validation_labels",
            )
        return None
    if not needs:
        raise InvalidParameterError(
            "`validation_labels` applies only to a purchase by label (the default crossed with the labels: "
            f"Nominations(purchase=ByDirection(label_set=...)); or ByLabel(label_set=...)), not to {method!r}",
            "validation_labels",
        )
    label_set = tuple(method.public_labels() or ())
    arr = label_vector(value, "validation_labels", m, label_set)
    if not owners_labelled and not transport_given:
        raise InvalidParameterError(
            f"{method!r} buys rows by label: give labels for every owner (dpsumm.Owner(X, labels=y))", "owners"
        )
    if label_set and not np.isin(arr, np.asarray(label_set)).any():
        raise InvalidParameterError(
            f"no validation label is in the method's label_set {tuple(label_set)!r} (labels "
            f"such as {arr[:3].tolist()!r}): check that both use the same values and type",
            "validation_labels",
        )
    return arr
