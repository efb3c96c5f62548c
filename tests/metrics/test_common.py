"""Invariants every built-in metric must satisfy, run over the registry in `cases_*.py`.

In the spirit of scikit-learn's `metrics/tests/test_common.py`: a metric is tested here by being
registered, so a new metric cannot skip traceability, batching, merging, reset, device moves or
the data checks.
"""

from __future__ import annotations

import copy
import itertools
import re
from typing import Any

import cases_calibration
import cases_classification
import cases_core
import cases_curves
import cases_histogram
import cases_image
import cases_multilabel
import cases_ranking
import cases_retrieval
import cases_wrappers
import pytest
import torch
from cases import Args, Case
from torch import Tensor

from torchtally.metrics import Metric, MetricCollection, MetricValueError
from torchtally.testing import assert_traceable

CASES: list[Case] = [*cases_core.CASES, *cases_classification.CASES, *cases_ranking.CASES]
CASES += cases_retrieval.CASES
CASES += cases_calibration.CASES
CASES += cases_curves.CASES
CASES += cases_image.CASES
CASES += cases_histogram.CASES
CASES += cases_multilabel.CASES
ALL_CASES: list[Case] = [*CASES, *cases_core.LAST_VALUE_CASES]
ALL_CASES += cases_wrappers.ORDER_DEPENDENT_CASES


def _ids(cases: list[Case]) -> list[str]:
    return [c.id for c in cases]


def _slice(args: Args, n: int, start: int, stop: int) -> Args:
    def cut(x: Any) -> Any:
        return x[start:stop] if isinstance(x, Tensor) and x.dim() and x.shape[0] == n else x

    positional, keyword = args
    return tuple(cut(a) for a in positional), {k: cut(v) for k, v in keyword.items()}


def _assert_values_equal(actual: Any, expected: Any, exact: bool) -> None:
    tolerance = {"rtol": 1e-9, "atol": 1e-12} if exact else {"rtol": 1e-3, "atol": 1e-3}
    torch.testing.assert_close(actual, expected, equal_nan=True, check_dtype=True, **tolerance)


def _run(metric: Metric, batches: list[Args]) -> Any:
    for positional, keyword in batches:
        metric.update(*positional, **keyword)
    return metric.compute()


@pytest.mark.parametrize("case", ALL_CASES, ids=_ids(ALL_CASES))
def test_update_and_compute_are_traceable(case: Case) -> None:
    positional, keyword = case.batch(torch.Generator().manual_seed(0), 16)
    report = assert_traceable(case.make(), *positional, **keyword)
    assert report.graphs == 1 and report.recompiles == 0


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_batches_accumulate_to_the_whole(case: Case) -> None:
    n = 40
    whole = case.batch(torch.Generator().manual_seed(1), n)
    bounds = [0, 7, 8, 25, 40]
    parts = [_slice(whole, n, a, b) for a, b in itertools.pairwise(bounds)]
    _assert_values_equal(_run(case.make(), parts), _run(case.make(), [whole]), case.exact)


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_an_empty_batch_changes_nothing(case: Case) -> None:
    """Ranks or loaders with no data send empty batches; they must be harmless."""
    n = 10
    batch = case.batch(torch.Generator().manual_seed(4), n)
    with_empty = case.make()
    _run(with_empty, [_slice(batch, n, 0, 0), batch, _slice(batch, n, 3, 3)])
    _assert_values_equal(with_empty.compute(), _run(case.make(), [batch]), exact=True)


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_merge_state_of_halves_equals_the_whole(case: Case) -> None:
    n = 30
    whole = case.batch(torch.Generator().manual_seed(2), n)
    first, second = case.make(), case.make()
    _run(first, [_slice(whole, n, 0, 13)])
    _run(second, [_slice(whole, n, 13, n)])
    merged = first.merge_state(second).compute()
    _assert_values_equal(merged, _run(case.make(), [whole]), case.exact)


@pytest.mark.parametrize("case", ALL_CASES, ids=_ids(ALL_CASES))
def test_reset_restores_the_initial_state(case: Case) -> None:
    fresh, used = case.make(), case.make()
    initial = copy.deepcopy(dict(fresh.named_buffers()))
    batch = case.batch(torch.Generator().manual_seed(3), 12)
    first_value = _run(used, [batch])
    addresses = {name: b.data_ptr() for name, b in used.named_buffers()}
    used.reset()
    assert int(used.num_updates) == 0
    for name, buffer in used.named_buffers():
        assert torch.equal(buffer, initial[name]), f"state {name} not reset"
        assert buffer.data_ptr() == addresses[name], f"state {name} re-allocated by reset"
    _assert_values_equal(_run(used, [batch]), first_value, exact=True)


@pytest.mark.parametrize("case", ALL_CASES, ids=_ids(ALL_CASES))
def test_state_follows_to(case: Case) -> None:
    metric = case.make().to("meta")
    assert all(b.is_meta for b in metric.buffers())
    for name in metric.state_names():
        assert getattr(metric, name).is_meta
    metric = metric.to_empty(device=torch.device("cpu"))
    metric.reset()  # defaults live apart from the buffers, so a meta metric can be materialised
    assert all(b.device.type == "cpu" for b in metric.buffers())
    fresh = case.make()
    for (name, got), (_, want) in zip(metric.named_buffers(), fresh.named_buffers()):
        assert torch.equal(got, want), name


@pytest.mark.parametrize(
    ("case", "bad"),
    [(c, b) for c in CASES for b in c.bad],
    ids=[f"{c.id}-{i}" for c in CASES for i in range(len(c.bad))],
)
def test_bad_values_raise_at_compute(case: Case, bad: tuple) -> None:
    positional, keyword, fragment = bad
    metric = case.make()
    metric.update(*positional, **keyword)  # never raises: update does not read data
    with pytest.raises(MetricValueError, match=re.escape(fragment)):
        metric.compute()
    with pytest.raises(MetricValueError):
        float(metric)


def test_every_case_with_bad_inputs_is_registered() -> None:
    """Each metric that declares error kinds has at least one bad-input case."""
    for case in CASES:
        if case.make().error_kinds and not case.bad:
            # multi-configuration metrics may register bad inputs on one configuration only
            assert any(c.bad for c in CASES if type(c.make()) is type(case.make())), case.id


@pytest.mark.parametrize("case", ALL_CASES, ids=_ids(ALL_CASES))
def test_reset_drops_the_cached_value(case: Case) -> None:
    """After `reset`, `compute` reflects the empty state, not the value cached before it."""
    batch = case.batch(torch.Generator().manual_seed(5), 12)
    metric, fresh = case.make(), case.make()
    _run(metric, [batch])
    float_before = metric.compute()
    metric.reset()
    after, empty = metric.compute(), fresh.compute()
    if isinstance(empty, Tensor):
        torch.testing.assert_close(after, empty, equal_nan=True)
    elif isinstance(empty, float):
        assert after == pytest.approx(empty, nan_ok=True)
    # and the value comes back when the same data is seen again
    _assert_values_equal(_run(metric, [batch]), float_before, exact=True)


@pytest.mark.parametrize("case", ALL_CASES, ids=_ids(ALL_CASES))
def test_update_takes_cstorchs_dtype_argument(case: Case) -> None:
    """`update(..., dtype=)` casts `compute`'s floating value, as cstorch; an update without
    it clears it; so does `reset`."""
    positional, keyword = case.batch(torch.Generator().manual_seed(6), 12)
    metric = case.make()
    metric.update(*positional, **keyword, dtype=torch.float16)
    value = metric.compute()
    plain = case.make()
    plain.update(*positional, **keyword)
    expected = plain.compute()
    if isinstance(value, Tensor) and isinstance(expected, Tensor):
        if expected.is_floating_point():
            assert value.dtype == torch.float16
            torch.testing.assert_close(value, expected.to(torch.float16), equal_nan=True)
        else:
            assert torch.equal(value, expected)
    metric.reset()
    metric.update(*positional, **keyword)
    _assert_values_equal(metric.compute(), expected, exact=True)
    with pytest.raises(TypeError, match=r"Argument `dtype` must be a torch.dtype"):
        case.make().update(*positional, **keyword, dtype="float16")


@pytest.mark.parametrize("case", ALL_CASES, ids=_ids(ALL_CASES))
def test_a_model_holding_the_metric_loads_a_plain_checkpoint_strictly(case: Case) -> None:
    """Metric states are non-persistent by default (cstorch): a model with a metric and the same
    model without one load each other's state_dict with strict=True."""
    plain = torch.nn.Sequential(torch.nn.Linear(2, 2))
    with_metric = torch.nn.Sequential(torch.nn.Linear(2, 2))
    with_metric.add_module("metric", case.make())
    _run(with_metric.metric, [case.batch(torch.Generator().manual_seed(7), 8)])
    with_metric.load_state_dict(plain.state_dict(), strict=True)
    plain.load_state_dict(with_metric.state_dict(), strict=True)
    # Opting in saves every state, and the metrics-only state holds them all regardless.
    metric = with_metric.metric
    assert set(metric.persistent(True).state_dict()) == {n for n, _, _ in metric.states()}
    assert set(metric.persistent(False).state_dict_all()) == {n for n, _, _ in metric.states()}
    restored = case.make()
    restored.load_state_dict_all(metric.state_dict_all())
    assert restored.num_updates == metric.num_updates == 1
    _assert_values_equal(restored.compute(), metric.compute(), exact=True)


@pytest.mark.parametrize("case", ALL_CASES, ids=_ids(ALL_CASES))
def test_state_dict_round_trip_resumes_the_value(case: Case) -> None:
    """A persistent metric's `state_dict()` restores its value in a fresh one, and further
    batches continue from it as if nothing had happened."""
    first, second = (case.batch(torch.Generator().manual_seed(s), 12) for s in (6, 7))
    saved = case.make().persistent(True)
    _run(saved, [first])
    restored = case.make().persistent(True)
    restored.load_state_dict(saved.state_dict())
    _assert_values_equal(restored.compute(), saved.compute(), exact=True)
    _assert_values_equal(_run(restored, [second]), _run(saved, [second]), exact=True)


@pytest.mark.parametrize("case", ALL_CASES, ids=_ids(ALL_CASES))
def test_in_a_collection_equals_standalone(case: Case) -> None:
    batches = [case.batch(torch.Generator().manual_seed(s), 12) for s in (8, 9)]
    collection = MetricCollection({"m": case.make()})
    for positional, keyword in batches:
        collection.update(*positional, **keyword)
    _assert_values_equal(collection.compute()["m"], _run(case.make(), batches), exact=True)
