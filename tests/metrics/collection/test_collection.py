"""MetricCollection: shared statistics decided statically, derived metrics, state, splits."""

from __future__ import annotations

import io
from collections.abc import Hashable

import pytest
import torch
from torch import Tensor

from torchtally.metrics import (
    AccuracyMetric,
    MeanMetric,
    Metric,
    MetricCollection,
    MSEMetric,
    R2ScoreMetric,
)


class _Histogram(Metric):
    """Counts labels per class; `kind` picks what compute reports from the same state."""

    updates = 0

    def __init__(self, num_classes: int, kind: str) -> None:
        super().__init__(f"{kind}{num_classes}")
        self.num_classes, self.kind = num_classes, kind
        self.register_state("counts", torch.zeros(num_classes), persistent=True)

    def shared_statistic(self) -> Hashable:
        return ("histogram", self.num_classes)

    def update(self, labels: Tensor) -> None:
        type(self).updates += 1
        self.counts.index_add_(0, labels, torch.ones_like(labels, dtype=torch.float32))

    def compute(self) -> Tensor:
        return self.counts.max() if self.kind == "max" else self.counts.argmax().float()


class _Total(Metric):
    """Derives its state (a total count) from any histogram."""

    def __init__(self) -> None:
        super().__init__("total")
        self.register_state("total", torch.zeros(()))

    def derives_from(self, statistic: Hashable) -> bool:
        return isinstance(statistic, tuple) and statistic[0] == "histogram"

    def load_derived(self, source: Metric) -> None:
        self.total.copy_(source.counts.sum())

    def update(self, labels: Tensor) -> None:
        self.total.add_(labels.numel())

    def compute(self) -> Tensor:
        return self.total.clone()


def test_metrics_with_the_same_statistic_share_one_state_and_one_update() -> None:
    collection = MetricCollection(
        [_Histogram(4, "max"), _Histogram(4, "argmax"), _Histogram(3, "max")]
    )
    assert collection.groups == [["max4", "argmax4"], ["max3"]]
    assert collection["max4"].counts.data_ptr() == collection["argmax4"].counts.data_ptr()
    _Histogram.updates = 0
    collection.update(torch.tensor([1, 1, 2]))
    assert _Histogram.updates == 2  # one per group, not one per metric
    values = {k: float(v) for k, v in collection.compute().items()}
    assert values == {"max4": 2.0, "argmax4": 1.0, "max3": 2.0}


def test_a_derived_metric_is_filled_from_the_statistic_at_compute() -> None:
    collection = MetricCollection([_Histogram(4, "max"), _Total()])
    assert collection.derived == {"total": "max4"}
    assert collection.groups == [["max4"]]
    collection.update(torch.tensor([0, 3, 3]))
    collection.update(torch.tensor([2]))
    assert float(collection.compute()["total"]) == 4.0


def test_sharing_can_be_turned_off() -> None:
    collection = MetricCollection(
        [_Histogram(4, "max"), _Histogram(4, "argmax"), _Total()], share_statistics=False
    )
    assert collection.groups == [["max4"], ["argmax4"], ["total"]]
    collection.update(torch.tensor([1, 1]))
    assert float(collection.compute()["total"]) == 2.0


def test_a_shared_key_with_different_states_is_refused() -> None:
    class Wrong(_Histogram):
        def __init__(self) -> None:
            Metric.__init__(self, "wrong")
            self.num_classes, self.kind = 4, "max"
            self.register_state("counts", torch.zeros(5))

    with pytest.raises(
        ValueError, match=r"declare the same shared statistic .* but hold different states"
    ):
        MetricCollection([_Histogram(4, "max"), Wrong()])


def test_prefix_postfix_and_clone_per_split() -> None:
    train = MetricCollection([MSEMetric(), R2ScoreMetric()], prefix="train/")
    valid = train.clone(prefix="valid/", postfix="_epoch")
    y = torch.tensor([1.0, 2.0, 3.0])
    train.update(y, y + 1)
    valid.update(y, y)
    assert {k: float(v) for k, v in train.compute().items()} == {
        "train/mse": 1.0,
        "train/r2_score": -0.5,
    }
    assert {k: float(v) for k, v in valid.compute().items()} == {
        "valid/mse_epoch": 0.0,
        "valid/r2_score_epoch": 1.0,
    }


def test_aliasing_survives_device_moves() -> None:
    collection = MetricCollection([_Histogram(4, "max"), _Histogram(4, "argmax")]).to(torch.float64)
    assert collection["max4"].counts.dtype == torch.float64
    assert collection["max4"].counts.data_ptr() == collection["argmax4"].counts.data_ptr()


def test_arguments_are_checked() -> None:
    with pytest.raises(
        TypeError, match=r"must hold torchtally Metric objects. Received: 'x'=Linear"
    ):
        MetricCollection({"x": torch.nn.Linear(1, 1)})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match=r"must have unique names. Received: 'accuracy' twice"):
        MetricCollection([AccuracyMetric(), AccuracyMetric()])
    with pytest.raises(TypeError, match=r"Argument `prefix` must be a string. Received: prefix=1"):
        MetricCollection([AccuracyMetric()], prefix=1)  # type: ignore[arg-type]


def _batches(seed: int, count: int) -> list[tuple[Tensor, Tensor]]:
    g = torch.Generator().manual_seed(seed)
    return [
        (
            torch.randn(9, generator=g, dtype=torch.float64),
            torch.randn(9, generator=g, dtype=torch.float64),
        )
        for _ in range(count)
    ]


def test_an_interrupted_and_resumed_evaluation_gives_the_uninterrupted_result() -> None:
    def make() -> MetricCollection:
        # Metric states are left out of state_dict() by default (as cstorch); opt in to resume.
        return MetricCollection(
            [MSEMetric(), R2ScoreMetric(), MeanMetric("mean_label")], prefix="valid/"
        ).persistent(True)

    batches = _batches(0, 10)
    uninterrupted = make()
    for labels, predictions in batches:
        uninterrupted["mse"].update(labels, predictions)
        uninterrupted["r2_score"].update(labels, predictions)
        uninterrupted["mean_label"].update(labels)

    first = make()
    for labels, predictions in batches[:6]:
        first["mse"].update(labels, predictions)
        first["r2_score"].update(labels, predictions)
        first["mean_label"].update(labels)
    checkpoint = io.BytesIO()
    torch.save(first.state_dict(), checkpoint)
    del first  # the process dies here

    resumed = make()
    checkpoint.seek(0)
    resumed.load_state_dict(torch.load(checkpoint, weights_only=True))
    for labels, predictions in batches[6:]:
        resumed["mse"].update(labels, predictions)
        resumed["r2_score"].update(labels, predictions)
        resumed["mean_label"].update(labels)
    expected, got = uninterrupted.compute(), resumed.compute()
    assert got.keys() == expected.keys()
    for key in expected:
        assert torch.equal(got[key], expected[key]), key
    assert int(resumed["mse"].num_updates) == 10


def test_errors_seen_before_an_interruption_still_raise_after_resuming() -> None:
    metric = AccuracyMetric()
    metric.update(torch.tensor([0, 1]), torch.tensor([[float("nan"), 0.0], [0.0, 1.0]]))
    resumed = AccuracyMetric()
    resumed.load_state_dict_all(metric.state_dict_all())  # the metrics-only state
    with pytest.raises(ValueError, match="non-finite predictions"):
        resumed.compute()
    persisted = AccuracyMetric().persistent(True)
    persisted.load_state_dict(metric.persistent(True).state_dict())
    with pytest.raises(ValueError, match="non-finite predictions"):
        persisted.compute()


def _classification_catalog(share: bool) -> MetricCollection:
    from torchtally.metrics import (
        ConfusionMatrixMetric,
        F1ScoreMetric,
        PrecisionMetric,
        RecallMetric,
    )

    return MetricCollection(
        {
            # With its classes and value checks on, accuracy is read off the counts exactly
            # (unchecked, or without its classes, it counts invalid samples its own way).
            "accuracy": AccuracyMetric(num_classes=4),
            "precision": PrecisionMetric(4, average_type="macro"),
            "recall": RecallMetric(4, average_type="weighted"),
            "f1": F1ScoreMetric(4, average_type="macro"),
            "confusion": ConfusionMatrixMetric(4),
        },
        share_statistics=share,
    )


def test_the_classification_catalog_runs_one_update_for_five_metrics() -> None:
    shared, separate = _classification_catalog(True), _classification_catalog(False)
    assert shared.groups == [["confusion"]]
    # recall and F1 share precision's class counts; those counts and accuracy are read off the
    # confusion matrix (accuracy through the counts), so only the confusion matrix is updated
    assert shared.derived == {"accuracy": "precision", "precision": "confusion"}
    recall, precision = shared["recall"], shared["precision"]
    assert recall.state_names() == precision.state_names()
    for name in recall.state_names():
        assert getattr(recall, name).data_ptr() == getattr(precision, name).data_ptr()
    g = torch.Generator().manual_seed(0)
    for _ in range(3):
        labels = torch.randint(0, 4, (25,), generator=g)
        scores = torch.randn(25, 4, generator=g)
        shared.update(labels, scores)
        separate.update(labels, scores)
    got, expected = shared.compute(), separate.compute()
    for key in expected:
        torch.testing.assert_close(got[key], expected[key], rtol=1e-12, atol=0)
    assert int(shared["accuracy"].num_updates) == 3


def test_weights_are_refused_where_a_derived_metric_cannot_express_them() -> None:
    shared = _classification_catalog(True)
    with pytest.raises(
        ValueError, match=r"Argument `weights` cannot be used with metrics \['accuracy'\]"
    ):
        shared.update(torch.tensor([0, 1]), torch.tensor([0, 1]), weights=torch.ones(2))


def test_errors_of_the_shared_statistic_surface_in_derived_metrics() -> None:
    shared = _classification_catalog(True)
    shared.update(torch.tensor([0, 7]), torch.tensor([0, 1]))
    with pytest.raises(ValueError, match=r"labels outside"):
        shared.compute()
