"""The wrappers TorchMetrics 1.9 has (MinMaxMetric, MultioutputWrapper, the input
transformers, MultitaskWrapper's mapping methods) and collections holding wrappers, nested
collections and metrics written TorchMetrics' way, each against TorchMetrics."""

from __future__ import annotations

from typing import Any

import pytest
import torch
import torchmetrics as tm
from torch import Tensor, tensor

from torchtally.compat import torchmetrics as ttm

LIBS = (tm, ttm)


def _close(ours: Any, theirs: Any) -> None:
    if isinstance(theirs, dict):
        assert list(ours) == list(theirs)
        for key in theirs:
            _close(ours[key], theirs[key])
        return
    theirs = torch.as_tensor(theirs)
    ours = torch.as_tensor(ours)
    torch.testing.assert_close(ours.to(theirs.dtype), theirs, rtol=1e-5, atol=1e-6)


def _batches(seed: int = 0) -> list[tuple[Tensor, Tensor]]:
    g = torch.Generator().manual_seed(seed)
    return [
        (torch.rand(12, 3, generator=g), torch.randint(0, 3, (12,), generator=g)) for _ in range(3)
    ]


def test_min_max_metric_matches_torchmetrics() -> None:
    preds = ([[0.9, 0.1], [0.2, 0.8]], [[0.1, 0.9], [0.2, 0.8]], [[0.1, 0.9], [0.8, 0.2]])
    labels = tensor([[0, 1], [0, 1]])
    out = []
    for lib in LIBS:
        metric = lib.wrappers.MinMaxMetric(lib.classification.BinaryAccuracy())
        steps = []
        for p in preds:
            steps.append(metric(tensor(p), labels))
            steps.append(metric.compute())
        metric.update(tensor(preds[0]), labels)
        steps.append(metric.compute())
        out.append(steps)
    for ours, theirs in zip(out[1], out[0], strict=True):
        _close(ours, theirs)
    with pytest.raises(ValueError, match="Expected base metric to be an instance"):
        ttm.wrappers.MinMaxMetric([])
    with pytest.raises(RuntimeError, match="should be a float or scalar tensor"):
        ttm.wrappers.MinMaxMetric(ttm.BinaryConfusionMatrix()).compute()


@pytest.mark.parametrize("remove_nans", [True, False])
def test_multioutput_wrapper_matches_torchmetrics(remove_nans: bool) -> None:
    g = torch.Generator().manual_seed(1)
    out = []
    for lib in LIBS:
        metric = lib.wrappers.MultioutputWrapper(
            lib.regression.MeanSquaredError(), num_outputs=2, remove_nans=remove_nans
        )
        g.manual_seed(1)
        steps = []
        for _ in range(3):
            preds, target = torch.randn(10, 2, generator=g), torch.randn(10, 2, generator=g)
            if remove_nans:
                preds[3, 0] = float("nan")
            steps.append(metric(preds, target))
        steps.append(metric.compute())
        metric.reset()
        out.append(steps)
    for ours, theirs in zip(out[1], out[0], strict=True):
        _close(ours, theirs)


def test_input_transformers_match_torchmetrics() -> None:
    preds, target = tensor([0.2, 0.7, 0.9, 0.4]), tensor([0.1, 0.8, 0.3, 0.6])
    out = []
    for lib in LIBS:
        binary = lib.wrappers.BinaryTargetTransformer(
            lib.classification.BinaryAccuracy(), threshold=0.5
        )
        lam = lib.wrappers.LambdaInputTransformer(
            lib.classification.BinaryAccuracy(), transform_pred=lambda p: 1 - p
        )
        out.append([binary(preds, target), lam(preds, (target > 0.5).long()), binary.compute()])
    for ours, theirs in zip(out[1], out[0], strict=True):
        _close(ours, theirs)
    with pytest.raises(TypeError, match="Expected `threshold` to be of type"):
        ttm.wrappers.BinaryTargetTransformer(ttm.BinaryAccuracy(), threshold="a")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Expected `transform_pred` to be of type `Callable`"):
        ttm.wrappers.LambdaInputTransformer(ttm.BinaryAccuracy(), transform_pred=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Expected wrapped metric to be an instance"):
        ttm.wrappers.MetricInputTransformer(1)  # type: ignore[arg-type]


def test_multitask_mapping_methods_and_clone_match_torchmetrics() -> None:
    out = []
    for lib in LIBS:
        wrapper = lib.wrappers.MultitaskWrapper(
            {
                "cls": lib.classification.BinaryAccuracy(),
                "reg": lib.MetricCollection(
                    [lib.regression.MeanSquaredError(), lib.regression.MeanAbsoluteError()]
                ),
            },
            prefix="p_",
        )
        clone = wrapper.clone(prefix="new_", postfix="_x")
        out.append(
            (
                list(wrapper.keys()),
                list(wrapper.keys(flatten=False)),
                [type(m).__name__ for m in wrapper.values()],
                [k for k, _ in wrapper.items(flatten=False)],
                list(clone.keys()),
            )
        )
    assert out[0] == out[1]
    with pytest.raises(ValueError, match="Expected input `prefix` to be a string"):
        ttm.wrappers.MultitaskWrapper._check_arg(1, "prefix")  # type: ignore[arg-type]


def test_collection_takes_wrappers_and_nested_collections_as_torchmetrics() -> None:
    def build(lib: Any) -> Any:
        inner = lib.MetricCollection(
            [lib.classification.MulticlassRecall(3, average=None)], prefix="in_"
        )
        return lib.MetricCollection(
            {
                "zeta": lib.wrappers.ClasswiseWrapper(
                    lib.classification.MulticlassAccuracy(3, average=None), labels=["a", "b", "c"]
                ),
                "alpha": lib.wrappers.Running(lib.classification.MulticlassAccuracy(3), window=2),
                "nested": inner,
            },
            prefix="p/",
        )

    ours, theirs = build(ttm), build(tm)
    assert ours.keys() == list(theirs.keys())
    for preds, target in _batches():
        _close(ours(preds, target), theirs(preds, target))
    _close(ours.compute(), theirs.compute())


def test_collection_sorts_dict_keys_and_filters_keyword_arguments() -> None:
    out = []
    for lib in LIBS:
        collection = lib.MetricCollection(
            {"b": lib.regression.MeanSquaredError(), "a": lib.regression.MeanAbsoluteError()}
        )
        collection.update(preds=tensor([1.0, 2.0]), target=tensor([1.5, 2.5]))
        out.append(collection.compute())
    assert list(out[1]) == list(out[0]) == ["a", "b"]
    _close(out[1], out[0])
    aggregation = ttm.MetricCollection(
        ttm.MinMetric(), ttm.MaxMetric(), ttm.SumMetric(), ttm.MeanMetric(), compute_groups=True
    )
    assert len(aggregation.compute_groups) == 4
    aggregation.update(1)
    aggregation.update(2)
    assert {k: float(v) for k, v in aggregation.compute().items()} == {
        "MinMetric": 1.0,
        "MaxMetric": 2.0,
        "SumMetric": 3.0,
        "MeanMetric": 1.5,
    }


def test_collection_groups_are_reported_and_user_groups_checked() -> None:
    collection = ttm.MetricCollection(
        [ttm.MulticlassAccuracy(3), ttm.MulticlassPrecision(3), ttm.MeanSquaredError()]
    )
    # as TorchMetrics: each member alone until the first update settles the groups
    assert len(collection.compute_groups) == 3
    collection.update(torch.tensor([0, 1, 2, 0]), torch.tensor([0, 1, 1, 0]))
    assert collection.compute_groups == {
        0: ["MulticlassAccuracy", "MulticlassPrecision"],
        1: ["MeanSquaredError"],
    }
    with pytest.raises(ValueError, match="does not match a metric in the collection"):
        ttm.MetricCollection([ttm.MeanSquaredError()], compute_groups=[["MeanAbsoluteError"]])


class _Sum(ttm.Metric):
    full_state_update = False

    def __init__(self) -> None:
        super().__init__()
        self.add_state("total", tensor(0.0), dist_reduce_fx="sum")

    def update(self, x: Tensor) -> None:
        self.total += x.sum()

    def compute(self) -> Tensor:
        return self.total


class _TmSum(tm.Metric):
    full_state_update = False

    def __init__(self) -> None:
        super().__init__()
        self.add_state("total", tensor(0.0), dist_reduce_fx="sum")

    def update(self, x: Tensor) -> None:
        self.total += x.sum()

    def compute(self) -> Tensor:
        return self.total


def test_running_and_collection_take_metrics_written_torchmetrics_way() -> None:
    ours, theirs = ttm.wrappers.Running(_Sum(), window=2), tm.wrappers.Running(_TmSum(), window=2)
    for x in (tensor([1.0, 2.0]), tensor([3.0]), tensor([4.0, 5.0])):
        _close(ours(x), theirs(x))
        _close(ours.compute(), theirs.compute())
    collection = ttm.MetricCollection({"mine": _Sum(), "mean": ttm.MeanMetric()})
    collection.update(tensor([1.0, 3.0]))
    assert {k: float(v) for k, v in collection.compute().items()} == {"mean": 2.0, "mine": 4.0}


def test_class_constants_are_torchmetrics() -> None:
    for module in ("classification", "regression", "retrieval", "aggregation", "image", "text"):
        for name in getattr(ttm, module).__all__:
            ours, theirs = (
                getattr(getattr(ttm, module), name),
                getattr(getattr(tm, module), name, None),
            )
            if not isinstance(ours, type) or theirs is None:
                continue
            for attribute in (
                "full_state_update",
                "is_differentiable",
                "higher_is_better",
                "plot_lower_bound",
                "plot_upper_bound",
                "plot_legend_name",
            ):
                assert getattr(ours, attribute) == getattr(theirs, attribute), (name, attribute)
