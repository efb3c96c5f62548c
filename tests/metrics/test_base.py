"""The Metric contract: cstorch's API, in-place state, caching, merging, value checks."""

from __future__ import annotations

import pytest
import torch
from torch import Tensor

from torchtally.metrics import AccuracyMetric, MeanMetric, Metric, MetricValueError
from torchtally.metrics._base import ErrorKinds


class _Sum(Metric):
    error_kinds = ErrorKinds(negative="negative values")

    def __init__(self, name: str | None = None, **kwargs: object) -> None:
        super().__init__(name, **kwargs)  # type: ignore[arg-type]
        self.register_state("total", torch.zeros(()), reduction="sum")
        self.register_state("largest", torch.full((), -torch.inf), reduction="max")
        self.register_state("smallest", torch.full((), torch.inf), reduction="min")

    def update(self, x: Tensor) -> None:
        if self.check_values:
            self.record_errors(negative=(x < 0).sum())
        self.total.add_(x.sum())
        self.largest.copy_(torch.maximum(self.largest, x.max()))
        self.smallest.copy_(torch.minimum(self.smallest, x.min()))

    def compute(self) -> Tensor:
        return torch.stack([self.total, self.largest, self.smallest])


class _Collect(Metric):
    error_kinds = ErrorKinds(capacity="capacity exceeded")

    def __init__(self, capacity: int) -> None:
        super().__init__()
        self.register_state("values", torch.zeros(capacity), reduction="cat")

    def update(self, x: Tensor) -> None:
        self.cat_state("values").append(x)
        if self.check_values:
            self.record_errors(capacity=self.cat_state("values").overflow() - self._errors[0])

    def compute(self) -> Tensor:
        values, count = self.cat_state("values").values()
        keep = torch.arange(values.shape[0]) < count
        return torch.where(keep, values, 0.0).sum()


def test_name_defaults_to_snake_case_of_the_class() -> None:
    assert AccuracyMetric().name == "accuracy"
    assert MeanMetric("loss").name == "loss"
    assert _Sum().name == "sum"
    assert _Collect(2).name == "collect"


def test_name_must_be_a_string() -> None:
    with pytest.raises(
        TypeError, match=r"Argument `name` must be a string or None. Received: name=3"
    ):
        AccuracyMetric(3)  # type: ignore[arg-type]


def test_call_runs_update_then_compute_and_float_reads_the_value() -> None:
    m = _Sum()
    value = m(torch.tensor([1.0, 2.0]))
    assert value.tolist() == [3.0, 2.0, 1.0]
    m.update(torch.tensor([5.0]))
    assert m.compute().tolist() == [8.0, 5.0, 1.0]
    assert int(m.num_updates) == 2
    assert float(MeanMetric()(torch.tensor([1.0, 2.0]))) == 1.5


class _CountedSum(_Sum):
    def __init__(self) -> None:
        super().__init__()
        self.computes = 0

    def compute(self) -> Tensor:
        self.computes += 1
        return super().compute()


def test_compute_is_cached_until_the_next_update() -> None:
    m = _CountedSum()
    m.update(torch.tensor([1.0]))
    first = m.compute()
    assert torch.equal(m.compute(), first) and m.computes == 1
    m.update(torch.tensor([1.0]))
    assert float(m.compute()[0]) == 2.0 and m.computes == 2


def test_a_cached_value_is_handed_out_as_a_copy() -> None:
    m = _Sum()
    m.update(torch.tensor([1.0]))
    m.compute().add_(100.0)  # a caller's in-place op on the value it got
    again = m.compute()
    again.mul_(0.0)
    assert m.compute().tolist() == [1.0, 1.0, 1.0]


def test_reset_keeps_addresses_and_restores_defaults() -> None:
    m = _Sum()
    pointers = [b.data_ptr() for b in m.buffers()]
    m.update(torch.tensor([-1.0, 4.0]))
    m.reset()
    assert [b.data_ptr() for b in m.buffers()] == pointers
    assert m.total.item() == 0.0 and m.largest.item() == -torch.inf and int(m.num_updates) == 0
    m.compute()  # the negative value seen before the reset is forgotten too


def test_merge_state_combines_by_reduction() -> None:
    a, b = _Sum(), _Sum()
    a.update(torch.tensor([1.0, 5.0]))
    b.update(torch.tensor([-2.0, 3.0]))
    with pytest.raises(MetricValueError):
        b.compute()
    merged = a.merge_state(b)
    assert merged is a
    with pytest.raises(MetricValueError, match=r"negative values \(1 value\)"):
        a.compute()
    a._errors.zero_()
    assert a.compute().tolist() == [7.0, 5.0, -2.0]
    assert int(a.num_updates) == 2


def test_merge_state_rejects_other_metric_types() -> None:
    with pytest.raises(TypeError, match=r"must hold metrics of type _Sum. Received: MeanMetric"):
        _Sum().merge_state(MeanMetric())


def test_value_errors_are_deferred_to_compute_and_can_be_turned_off() -> None:
    checked, unchecked = _Sum(), _Sum(check_values=False)
    for m in (checked, unchecked):
        m.update(torch.tensor([-1.0, -2.0, 3.0]))
    with pytest.raises(
        MetricValueError,
        match=r"`sum` received invalid data: negative values \(2 values\).*check_values=False",
    ):
        checked.compute()
    assert unchecked.compute().tolist() == [0.0, 3.0, -2.0]


def test_cat_state_appends_counts_overflow_and_merges() -> None:
    m = _Collect(capacity=4)
    m.update(torch.tensor([1.0, 2.0, 3.0]))
    assert float(m.compute()) == 6.0
    m.update(torch.tensor([10.0, 20.0]))  # one row past the capacity
    assert int(m.values_count) == 5 and int(m.cat_state("values").overflow()) == 1
    with pytest.raises(MetricValueError, match=r"capacity exceeded \(1 value\)"):
        m.compute()
    a, b = _Collect(capacity=4), _Collect(capacity=4)
    a.update(torch.tensor([1.0]))
    b.update(torch.tensor([2.0, 3.0]))
    assert float(a.merge_state(b).compute()) == 6.0
    merged = a.cat_state("values")
    rows, count = merged.values()  # the filled rows alone once compute has noted the fill
    assert rows[: int(count)].tolist() == merged.filled_rows().tolist() == [1.0, 2.0, 3.0]
    assert merged.buffer[:4].tolist() == [1.0, 2.0, 3.0, 0.0]  # the rest: the initial value


def test_register_state_validates_its_arguments() -> None:
    m = _Sum()
    with pytest.raises(
        ValueError, match=r"Argument `reduction` must be one of .* Received: reduction='mean'"
    ):
        m.register_state("x", torch.zeros(()), reduction="mean")  # type: ignore[arg-type]
    with pytest.raises(
        TypeError, match=r"Argument `tensor` must be a torch.Tensor. Received: tensor=list"
    ):
        m.register_state("x", [0.0])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"must have a capacity dimension for reduction='cat'"):
        m.register_state("x", torch.zeros(()), reduction="cat")


def test_persistent_states_go_into_state_dict_and_come_back() -> None:
    class Persistent(Metric):
        def __init__(self) -> None:
            super().__init__()
            self.register_state("total", torch.zeros(()), persistent=True)

        def update(self, x: Tensor) -> None:
            self.total.add_(x.sum())

        def compute(self) -> Tensor:
            return self.total.clone()

    a = Persistent()
    a.update(torch.tensor([2.0, 3.0]))
    b = Persistent()
    b.compute()
    b.load_state_dict(a.state_dict())
    assert float(b.compute()) == 5.0  # the cached value was dropped by the load


def test_zero_dim_states_survive_compilation() -> None:
    """torch 2.13 drops in-place updates of 0-d graph inputs; the base stores them as (1,)."""
    m = AccuracyMetric()
    step = torch.compile(m.update, backend="aot_eager", fullgraph=True)
    step(torch.tensor([0, 1, 1]), torch.tensor([0, 1, 0]))
    step(torch.tensor([0, 1, 1]), torch.tensor([0, 1, 0]))
    assert m.correct.item() == 4.0 and m.total.item() == 6.0 and int(m.num_updates) == 2


def test_num_updates_is_an_int_as_in_cstorch() -> None:
    from torchtally.metrics import MeanMetric

    metric = MeanMetric("m")
    assert metric.num_updates == 0 and isinstance(metric.num_updates, int)
    metric.update(torch.ones(2))
    metric.update(torch.ones(2))
    assert metric.num_updates + 1 == 3 and metric.num_updates > 1
    assert f"{metric.num_updates:d}" == "2"
    metric.reset()
    assert metric.num_updates == 0


def test_registry_get_all_metrics_and_compute_all_metrics_as_cstorch() -> None:
    import gc

    from torchtally.metrics import (
        AccuracyMetric,
        MeanMetric,
        compute_all_metrics,
        get_all_metrics,
    )

    gc.collect()
    before = {name for name, _ in get_all_metrics()}
    first, second = AccuracyMetric("reg_acc"), AccuracyMetric("reg_acc")
    alone = MeanMetric("reg_mean")
    assert Metric.registry["reg_acc"] == [first, second]
    assert "reg_mean" in Metric.registry
    named = {name: metric for name, metric in get_all_metrics() if name not in before}
    # a shared name gets the creation index, as cstorch's get_all_metrics
    assert named == {"reg_acc.0": first, "reg_acc.1": second, "reg_mean": alone}
    first.update(torch.tensor([1, 0]), torch.tensor([1, 1]))
    second.update(torch.tensor([1]), torch.tensor([1]))
    alone.update(torch.tensor([2.0, 4.0]))
    values = compute_all_metrics()
    assert float(values["reg_acc.0"]) == 0.5 and float(values["reg_acc.1"]) == 1.0
    assert float(values["reg_mean"]) == 3.0
    # the registry does not keep metrics alive
    del first, second, alone, named, values
    gc.collect()
    assert "reg_acc" not in Metric.registry
    assert not [n for n, _ in get_all_metrics() if n.startswith("reg_")]


class _Rows(Metric):
    """A user metric with a `cat` state and no overflow handling of its own."""

    def __init__(self, capacity: int) -> None:
        super().__init__()
        self.register_state("rows", torch.zeros(capacity, 2), reduction="cat")

    def update(self, x: Tensor) -> None:
        self.cat_state("rows").append(x)

    def compute(self) -> Tensor:
        values, count = self.cat_state("rows").values()
        return torch.where((torch.arange(values.shape[0]) < count)[:, None], values, 0.0).sum()


def test_every_cat_state_raises_on_overflow() -> None:
    metric = _Rows(capacity=3)
    metric.update(torch.ones(2, 2))
    assert float(metric) == 4.0
    metric.update(torch.ones(2, 2))  # 4 rows into 3
    with pytest.raises(
        MetricValueError,
        match=r"received 4 rows into its `cat` state 'rows' of capacity 3: 1 rows were dropped",
    ):
        metric.compute()
    unchecked = _Rows(capacity=1)
    unchecked.check_values = False  # the overflow is not a value check: it still raises
    unchecked.update(torch.ones(2, 2))
    with pytest.raises(MetricValueError, match="capacity of at least 2"):
        unchecked.compute()


def test_a_cat_state_is_saved_as_its_filled_rows_and_restored_into_its_buffer() -> None:
    metric = _Rows(capacity=100).persistent(True)
    metric.update(torch.arange(6.0).reshape(3, 2))
    saved = metric.state_dict()
    assert saved["rows"].shape == (3, 2)  # not the 100-row buffer
    assert torch.equal(saved["rows"], torch.arange(6.0).reshape(3, 2))
    restored = _Rows(capacity=100).persistent(True)
    address = restored.rows.data_ptr()
    restored.load_state_dict(saved, strict=True)
    assert restored.rows.shape == (101, 2) and restored.rows.data_ptr() == address
    restored.update(torch.ones(1, 2))
    assert float(restored) == 15.0 + 2.0
    assert int(restored.rows_count) == 4
    only = _Rows(capacity=100)
    only.load_state_dict_all(metric.state_dict_all())
    assert metric.state_dict_all()["rows"].shape == (3, 2)
    assert float(only) == 15.0
    with pytest.raises(ValueError, match=r"at most capacity=1 rows for the `cat` state 'rows'"):
        _Rows(capacity=1).persistent(True).load_state_dict(saved)


def test_update_with_cstorchs_dtype_stays_one_graph_without_recompiles() -> None:
    from torchtally.testing import assert_traceable

    labels, predictions = torch.tensor([0, 1, 1]), torch.tensor([0, 1, 0])
    report = assert_traceable(AccuracyMetric(), labels, predictions, dtype=torch.float16)
    assert report.graphs == 1 and report.recompiles == 0
