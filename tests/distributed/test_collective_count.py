"""One sync issues one collective per (dtype, reduction) group, however many metrics, plus
one two-element all-reduce that checks every rank syncs the same configuration."""

from __future__ import annotations

from collections import Counter

import pytest
import torch
from torch import Tensor

import torchtally.metrics._sync as sync_module
import torchtally.metrics.collection._collection as collection_module
from torchtally.metrics import (
    AccuracyMetric,
    LearningRateMetric,
    MeanMetric,
    Metric,
    MetricCollection,
    MSEMetric,
    R2ScoreMetric,
)

WORLD = 3


class _Values(Metric):
    """A metric with a `cat` state, as exact AUROC has."""

    def __init__(self, name: str, capacity: int = 8) -> None:
        super().__init__(name)
        self.register_state("values", torch.zeros(capacity), reduction="cat")

    def update(self, x: Tensor, *_: object) -> None:
        self.cat_state("values").append(x.float())

    def compute(self) -> Tensor:
        values, count = self.cat_state("values").values()
        return torch.where(torch.arange(values.shape[0]) < count, values, 0.0).sum()


@pytest.fixture
def collectives(monkeypatch: pytest.MonkeyPatch) -> Counter:
    """Pretend to be one of WORLD identical ranks; count every collective by kind and dtype."""
    calls: Counter = Counter()

    def all_reduce(tensor: Tensor, op: str, group: object, what: str) -> Tensor:
        calls[("all_reduce", op, tensor.dtype)] += 1
        return tensor * WORLD if op == "sum" else tensor.clone()

    def all_gather(tensor: Tensor, group: object, what: str) -> Tensor:
        calls[("all_gather", tensor.dtype)] += 1
        return torch.cat([tensor] * WORLD, 0)

    monkeypatch.setattr(sync_module, "all_reduce", all_reduce)
    monkeypatch.setattr(sync_module, "all_gather", all_gather)
    monkeypatch.setattr(sync_module, "distributed_world_size", lambda group=None: WORLD)
    monkeypatch.setattr(collection_module, "distributed_world_size", lambda group=None: WORLD)
    monkeypatch.setattr(sync_module.dist, "get_world_size", lambda group=None: WORLD)
    monkeypatch.setattr(sync_module, "_group", lambda group: group)
    return calls


def test_a_collection_syncs_with_one_collective_per_dtype_and_reduction(
    collectives: Counter,
) -> None:
    collection = MetricCollection(
        {
            "r2": R2ScoreMetric(),
            "mse": MSEMetric(),
            "mean": MeanMetric(),
            "lr": LearningRateMetric(),
            "collected": _Values("collected"),
        }
    )
    x = torch.tensor([1.0, 2.0, 4.0], dtype=torch.float64)
    collection["r2"].update(x, x * 0.5)
    collection["mse"].update(x, x * 0.5)
    collection["mean"].update(x)
    collection["lr"].update(0.1)
    collection["collected"].update(x)
    result = collection.compute()
    assert collectives == Counter(
        {
            ("all_reduce", "sum", torch.float64): 1,  # every float64 sum state of 4 metrics
            ("all_reduce", "sum", torch.int64): 1,  # update counts and error counts
            ("all_reduce", "max", torch.float64): 1,  # the learning rate
            ("all_reduce", "max", torch.int64): 1,  # the configuration fingerprint (2 values)
            ("all_gather", torch.int64): 1,  # the fill counts of every cat state
            ("all_gather", torch.float32): 1,  # the cat rows of that dtype
        }
    )
    # WORLD identical ranks: sums triple, means and rates stay, cat rows are all kept
    assert float(result["mse"]) == pytest.approx(float(((x - x * 0.5) ** 2).mean()))
    assert float(result["mean"]) == pytest.approx(float(x.mean()))
    assert float(result["lr"]) == pytest.approx(0.1)
    assert float(result["collected"]) == pytest.approx(WORLD * 7.0)
    assert float(collection["mse"].count) == 3.0  # the local state is back after compute


def test_a_single_metric_syncs_in_compute(collectives: Counter) -> None:
    metric = AccuracyMetric()
    metric.update(torch.tensor([0, 1]), torch.tensor([0, 0]))
    assert float(metric.compute()) == 0.5
    assert collectives[("all_reduce", "sum", torch.float64)] == 1
    assert float(metric.total) == 2.0


def test_cat_overflow_on_any_rank_still_raises_after_sync(collectives: Counter) -> None:
    metric = _Values("values", capacity=2)
    metric.update(torch.tensor([1.0, 2.0, 3.0]))  # one row past the capacity on every rank
    metric.sync()
    assert int(metric.cat_state("values").overflow()) == WORLD
    assert metric.cat_state("values").values()[0].tolist() == [1.0, 2.0] * WORLD
    metric.unsync()
    assert int(metric.cat_state("values").overflow()) == 1


def test_sync_twice_is_refused(collectives: Counter) -> None:
    metric = MeanMetric()
    metric.sync()
    with pytest.raises(RuntimeError, match="already synced; call unsync"):
        metric.sync()
    metric.unsync()
    assert not metric.is_synced
