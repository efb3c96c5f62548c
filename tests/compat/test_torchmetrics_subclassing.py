"""Metrics written TorchMetrics' way (`add_state`, own `update` and `compute`), subclasses of
built-in metrics, metric arithmetic and the state API, each against TorchMetrics 1.9 running
the same class body."""

from __future__ import annotations

import pickle
import warnings
from typing import Any

import pytest
import torch
import torchmetrics as tm
from torch import Tensor, tensor

from torchtally.compat import torchmetrics as ttm
from torchtally.compat.torchmetrics.aggregation import NaNValuesError
from torchtally.compat.torchmetrics.metric import CompositionalMetric

LIBRARIES = pytest.mark.parametrize("lib", [tm, ttm], ids=["torchmetrics", "torchtally"])


def _classes(lib: Any) -> dict[str, type]:
    """The same metric bodies on either library's `Metric`."""

    class Total(lib.Metric):
        full_state_update = False

        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.add_state("total", tensor(0.0), dist_reduce_fx="sum")
            self.add_state("count", tensor(0), dist_reduce_fx="sum")

        def update(self, x: Tensor) -> None:
            self.total += x.sum()
            self.count += x.numel()

        def compute(self) -> Tensor:
            return self.total / self.count

    class Rows(lib.Metric):
        full_state_update = True

        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.add_state("rows", [], dist_reduce_fx="cat")

        def update(self, x: Tensor) -> None:
            self.rows.append(x)

        def compute(self) -> Tensor:
            return torch.cat(self.rows).sort().values

    class Extremes(lib.Metric):
        full_state_update = False

        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.add_state("high", tensor(float("-inf")), dist_reduce_fx="max")
            self.add_state("low", tensor(float("inf")), dist_reduce_fx="min")
            self.add_state("seen", [], dist_reduce_fx="cat")

        def update(self, x: Tensor) -> None:
            self.high = torch.maximum(self.high, x.max())
            self.low = torch.minimum(self.low, x.min())
            self.seen.append(x.mean().reshape(1))

        def compute(self) -> Tensor:
            return torch.stack([self.high, self.low, torch.cat(self.seen).mean()])

    class Weighted(lib.aggregation.SumMetric):
        full_state_update = True

        def update(self, values: Tensor, weights: Tensor) -> None:  # type: ignore[override]
            super().update(values * weights)

    return {"Total": Total, "Rows": Rows, "Extremes": Extremes, "Weighted": Weighted}


BATCHES = [torch.tensor([1.0, 4.0, 2.0]), torch.tensor([0.5, 7.0]), torch.tensor([3.0])]


@pytest.mark.parametrize("name", ["Total", "Rows", "Extremes"])
def test_forward_update_compute_and_reset_match_torchmetrics(name: str) -> None:
    results = []
    for lib in (tm, ttm):
        metric = _classes(lib)[name]()
        steps = [metric(batch) for batch in BATCHES]
        total = metric.compute()
        count = metric.update_count
        metric.reset()
        metric.update(BATCHES[0])
        results.append((steps, total, count, metric.compute(), metric.update_called))
    (
        (steps_a, total_a, count_a, again_a, called_a),
        (steps_b, total_b, count_b, again_b, called_b),
    ) = results
    for a, b in zip(steps_a, steps_b, strict=True):
        torch.testing.assert_close(a, b)
    torch.testing.assert_close(total_a, total_b)
    torch.testing.assert_close(again_a, again_b)
    assert (count_a, called_a) == (count_b, called_b) == (3, True)


def test_subclass_of_a_built_in_metric_with_its_own_update() -> None:
    values, weights = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([2.0, 0.5, 1.0])
    out = []
    for lib in (tm, ttm):
        metric = _classes(lib)["Weighted"]()
        batch = metric(values, weights)
        metric.update(values, weights)
        out.append((batch, metric.compute(), metric.update_count))
    torch.testing.assert_close(out[0][0], out[1][0].to(out[0][0].dtype))
    torch.testing.assert_close(out[0][1], out[1][1].to(out[0][1].dtype))
    assert out[0][2] == out[1][2] == 2


@LIBRARIES
def test_add_state_checks_and_reductions(lib: Any) -> None:
    metric = _classes(lib)["Total"]()
    metric.add_state("a", tensor(0), "sum")
    assert metric._reductions["a"](tensor([1, 1])) == 2
    metric.add_state("b", tensor(0), "mean")
    torch.testing.assert_close(metric._reductions["b"](tensor([1.0, 2.0])), tensor(1.5))
    metric.add_state("c", tensor(0), "cat")
    assert metric._reductions["c"]([tensor([1]), tensor([1])]).shape == (2,)
    for bad in ("xyz", 42):
        with pytest.raises(ValueError, match="`dist_reduce_fx` must be callable or one of"):
            metric.add_state("d", tensor(0), bad)
    for default in ([tensor(0)], 42):
        with pytest.raises(ValueError, match="state variable must be a tensor or any empty list"):
            metric.add_state("e", default, "sum")


@LIBRARIES
def test_reductions_swapped_then_synced(lib: Any) -> None:
    """TorchMetrics' own DDP test assigns `_reductions` and sets states by hand before
    `_sync_dist`; here the transport is a stand-in for two ranks holding the same states."""
    metric = _classes(lib)["Total"]()
    metric._reductions = {"foo": torch.cat, "bar": torch.sum}
    metric.foo = [tensor([1]), tensor([2])]
    metric.bar = tensor(3)
    metric._sync_dist(lambda value, group=None: [value, value.clone()])
    # `torch.cat` is not `dim_zero_cat`: each list element is gathered on its own
    assert metric.foo.tolist() == [1, 1, 2, 2]
    assert metric.bar.item() == 6


def test_reductions_of_a_built_in_metric_are_read_only() -> None:
    with pytest.raises(AttributeError, match=r"`MeanSquaredError\._reductions` is read-only"):
        ttm.MeanSquaredError()._reductions = {"sum_squared_error": torch.sum}


def test_add_state_is_for_metrics_with_their_own_update() -> None:
    with pytest.raises(TypeError, match="register_state"):
        ttm.BinaryAccuracy().add_state("x", tensor(0), "sum")


def test_state_dict_holds_persistent_states_as_torchmetrics() -> None:
    dicts = []
    for lib in (tm, ttm):
        module = torch.nn.Module()
        module.metric = _classes(lib)["Total"]()
        module.metric.add_state("a", tensor(3), persistent=True)
        module.metric.add_state("b", [], persistent=True)
        module.metric.register_buffer("c", tensor(0))
        dicts.append(module.state_dict())
    assert dicts[0].keys() == dicts[1].keys() == {"metric.a", "metric.b", "metric.c"}
    target = _classes(ttm)["Total"]()
    target.add_state("a", tensor(0), persistent=True)
    target.load_state_dict({"a": tensor(7)}, strict=False)
    assert int(target.a) == 7


@LIBRARIES
def test_metric_state_merge_and_pickle(lib: Any) -> None:
    extremes = _classes(lib)["Extremes"]
    first, second = extremes(), extremes()
    first.update(BATCHES[0])
    second.update(BATCHES[1])
    first.merge_state(second)
    whole = extremes()
    whole.update(BATCHES[0])
    whole.update(BATCHES[1])
    torch.testing.assert_close(first.compute(), whole.compute())
    clone = first.clone()
    torch.testing.assert_close(clone.compute(), first.compute())
    assert set(first.metric_state) == {"high", "low", "seen"}


@LIBRARIES
def test_merge_state_refusals(lib: Any) -> None:
    class FullState(lib.aggregation.SumMetric):
        full_state_update = True

    with pytest.raises(ValueError, match="Expected incoming state to be a"):
        FullState().merge_state(2)
    with pytest.raises(RuntimeError, match="``merge_state`` is not supported"):
        FullState().merge_state({"sum_value": tensor(2.0)})
    with pytest.raises(ValueError, match="Expected incoming state to be an"):
        lib.aggregation.SumMetric().merge_state(lib.aggregation.MeanMetric())


def test_built_in_merge_state_with_a_dict_matches_torchmetrics() -> None:
    values = []
    for lib in (tm, ttm):
        metric = lib.aggregation.SumMetric()
        metric.update(1.0)
        metric.merge_state({"sum_value": tensor(2.0)})
        values.append(float(metric.compute()))
    assert values == [3.0, 3.0]


@pytest.mark.parametrize(
    "op",
    [
        lambda a, b: a + b,
        lambda a, b: a - 2,
        lambda a, b: 3 * a,
        lambda a, b: a / b,
        lambda a, b: abs(-a),
        lambda a, b: a**2,
        lambda a, b: -a,
        lambda a, b: a >= b,
        lambda a, b: a > 1.0,
        lambda a, b: 10 // a,
    ],
)
def test_metric_arithmetic_matches_torchmetrics(op: Any) -> None:
    out = []
    for lib in (tm, ttm):
        total = _classes(lib)["Total"]
        composed = op(total(), total())
        assert isinstance(
            composed, lib.metric.CompositionalMetric if lib is tm else CompositionalMetric
        )
        batch = composed(BATCHES[0])
        composed.update(BATCHES[1])
        out.append((batch, composed.compute()))
        composed.reset()
    for a, b in zip(out[0], out[1], strict=True):
        torch.testing.assert_close(a, b)


class _Listed(ttm.Metric):
    def __init__(self) -> None:
        super().__init__()
        self.add_state("rows", [], dist_reduce_fx="cat")
        self.add_state("total", tensor(0.0), dist_reduce_fx="sum")

    def update(self, x: Tensor) -> None:
        self.rows.append(x)
        self.total += x.sum()

    def compute(self) -> Tensor:
        return torch.cat(self.rows).sum() + self.total


def test_a_metric_with_list_states_pickles() -> None:
    metric = _Listed()
    metric.update(BATCHES[0])
    copy = pickle.loads(pickle.dumps(metric))
    assert float(copy.compute()) == float(metric.compute()) == 14.0
    copy.update(BATCHES[2])
    assert copy.update_count == 2 and float(copy.compute()) == 20.0


def test_equality_is_identity_and_torch_eq_composes_explicitly() -> None:
    # TorchMetrics' `a == b` builds a composition; here metrics compare by identity (as
    # torch's module traversal and torch.compile require), and the composition is explicit.
    a, b = _classes(ttm)["Total"](), _classes(ttm)["Total"]()
    assert a == a and a != b
    composed = CompositionalMetric(torch.eq, a, b)
    composed.update(BATCHES[0])
    assert bool(composed.compute())


def test_metrics_hash_by_identity_and_are_not_iterable() -> None:
    a, b = _classes(ttm)["Rows"](), _classes(ttm)["Rows"]()
    assert hash(a) != hash(b)
    a.rows.append(tensor(5))
    assert isinstance(hash(a), int)
    with pytest.raises(TypeError, match="object is not iterable"):
        iter(a)


def test_dtype_methods_leave_states_and_set_dtype_casts() -> None:
    for lib in (tm, ttm):
        metric = _classes(lib)["Total"]()
        assert metric.half().double().float().type(torch.half).total.dtype == torch.float32
        metric.set_dtype(torch.float64)
        assert metric.dtype == torch.float64 and metric.total.dtype == torch.float64
        metric.reset()
        assert metric.total.dtype == torch.float64
    built_in = ttm.MeanMetric().half()
    assert built_in.mean_value.dtype == torch.float64


def test_update_errors_on_other_devices_say_so() -> None:
    class Device(ttm.Metric):
        def __init__(self) -> None:
            super().__init__()
            self.add_state("x", tensor(0.0), "sum")

        def update(self, x: Tensor) -> None:
            raise RuntimeError("Expected all tensors to be on the same device")

        def compute(self) -> Tensor:
            return self.x

    with pytest.raises(RuntimeError, match="Encountered different devices"):
        Device().update(tensor(1.0))


NAN = float("nan")


@pytest.mark.parametrize("name", ["CatMetric", "SumMetric", "MeanMetric", "MaxMetric", "MinMetric"])
@pytest.mark.parametrize("strategy", ["ignore", "warn", "disable", 2.0])
@pytest.mark.parametrize(
    "value",
    [tensor([1.0, 2.0, NAN, 4.0]), NAN * torch.ones(3), tensor([[1.0, 2.0], [3.0, 4.0]])],
    ids=["some-nan", "all-nan", "2d"],
)
def test_aggregators_nan_strategies_match_torchmetrics(
    name: str, strategy: Any, value: Tensor
) -> None:
    out = []
    for lib in (tm, ttm):
        metric = getattr(lib.aggregation, name)(nan_strategy=strategy)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            batch = metric(value.clone())
            metric.update(value.clone())
            total = metric.compute()
        warned = any("Encountered `nan` values in tensor" in str(w.message) for w in seen)
        out.append((batch, total, warned))
    for ours, theirs in zip(out[1][:2], out[0][:2], strict=True):
        theirs = (
            torch.as_tensor(theirs, dtype=torch.float32) if isinstance(theirs, list) else theirs
        )
        assert ours.shape == theirs.shape
        torch.testing.assert_close(ours.to(theirs.dtype), theirs, equal_nan=True)
    assert out[0][2] == out[1][2]


def test_nan_strategy_error_raises_runtime_error_as_torchmetrics() -> None:
    for lib, error in ((tm, RuntimeError), (ttm, NaNValuesError)):
        with pytest.raises(error, match="Encountered `nan` values in tensor"):
            lib.aggregation.SumMetric(nan_strategy="error")(tensor([1.0, NAN]))
    assert issubclass(NaNValuesError, RuntimeError)


def test_cat_metric_concatenates_along_the_first_dimension() -> None:
    out = []
    for lib in (tm, ttm):
        metric = lib.aggregation.CatMetric()
        metric.update(tensor([[1.0, 2.0]]))
        metric.update(tensor([[3.0, 4.0], [5.0, 6.0]]))
        metric.update(torch.zeros(0, 2))
        out.append(metric.compute())
    torch.testing.assert_close(out[1], out[0])
    metric = ttm.aggregation.CatMetric(capacity=2)
    metric.update(torch.ones(3))
    with pytest.raises(Exception, match="capacity"):
        metric.compute()


@LIBRARIES
def test_wrong_nan_strategy_message(lib: Any) -> None:
    with pytest.raises(ValueError, match="Arg `nan_strategy` should either"):
        lib.aggregation.MinMetric(nan_strategy=[])


@pytest.mark.slow
def test_metric_written_torchmetrics_way_syncs_as_torchmetrics_over_two_ranks() -> None:
    from _tm_ddp_workers import user_metric_synced

    from torchtally.distributed import run_local_ranks

    for rank in run_local_ranks(user_metric_synced, 2, timeout=300):
        for synced in (True, False):
            ours_steps, ours_total = rank[f"ours/{synced}"]
            theirs_steps, theirs_total = rank[f"theirs/{synced}"]
            torch.testing.assert_close(ours_steps, theirs_steps)
            torch.testing.assert_close(ours_total, theirs_total)
