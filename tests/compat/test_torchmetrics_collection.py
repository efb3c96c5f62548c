"""The compat MetricCollection against TorchMetrics' MetricCollection (same keys, values)."""

from __future__ import annotations

import pytest
import torch
import torchmetrics as tm

from torchtally.compat import torchmetrics as ttm
from torchtally.testing import assert_traceable


def _pair(prefix: str | None = None, postfix: str | None = None) -> tuple[object, object]:
    def build(lib: object) -> object:
        return lib.MetricCollection(  # type: ignore[attr-defined]
            [
                lib.classification.MulticlassAccuracy(4),  # type: ignore[attr-defined]
                lib.classification.MulticlassPrecision(4, average="micro"),  # type: ignore[attr-defined]
                lib.classification.MulticlassF1Score(4),  # type: ignore[attr-defined]
                lib.classification.MulticlassConfusionMatrix(4),  # type: ignore[attr-defined]
            ],
            prefix=prefix,
            postfix=postfix,
        )

    return build(ttm), build(tm)


def _equal(ours: dict, theirs: dict) -> None:  # type: ignore[type-arg]
    assert list(ours) == list(theirs)
    for key in ours:
        torch.testing.assert_close(ours[key].double(), theirs[key].double(), msg=key)


def test_forward_compute_clone_match_torchmetrics() -> None:
    ours, theirs = _pair(prefix="val/", postfix="_x")
    g = torch.Generator().manual_seed(0)
    for _ in range(3):
        preds, target = torch.randn(32, 4, generator=g), torch.randint(0, 4, (32,), generator=g)
        _equal(ours(preds, target), theirs(preds, target))  # type: ignore[operator]
    _equal(ours.compute(), theirs.compute())  # type: ignore[attr-defined]
    _equal(ours.clone(prefix="test/").compute(), theirs.clone(prefix="test/").compute())  # type: ignore[attr-defined]
    ours.reset()  # type: ignore[attr-defined]
    theirs.reset()  # type: ignore[attr-defined]
    ours.update(preds, target)  # type: ignore[attr-defined]
    theirs.update(preds, target)  # type: ignore[attr-defined]
    _equal(ours.compute(), theirs.compute())  # type: ignore[attr-defined]


def test_one_shared_state_for_the_stat_family() -> None:
    ours, _ = _pair()
    # as TorchMetrics: each member alone until the first update settles the groups
    assert not ours._groups_checked  # type: ignore[attr-defined]
    assert len(ours.compute_groups_list) == 4  # type: ignore[attr-defined]
    ours.update(torch.randn(8, 4), torch.randint(0, 4, (8,)))  # type: ignore[attr-defined]
    assert ours._groups_checked  # type: ignore[attr-defined]
    assert ours.compute_groups_list == [  # type: ignore[attr-defined]
        [
            "MulticlassAccuracy",
            "MulticlassPrecision",
            "MulticlassF1Score",
            "MulticlassConfusionMatrix",
        ]
    ]
    collection = ttm.MetricCollection({"acc": ttm.BinaryAccuracy(), "mse": ttm.MeanSquaredError()})
    assert collection.keys() == ["acc", "mse"]
    with pytest.raises(ValueError, match="two metrics named"):
        ttm.MetricCollection([ttm.BinaryAccuracy(), ttm.BinaryAccuracy()])


def test_owner_update_is_traceable() -> None:
    ours, _ = _pair()
    owner = ours["MulticlassAccuracy"]  # type: ignore[index]
    assert_traceable(owner, torch.randn(8, 4), torch.randint(0, 4, (8,)))
