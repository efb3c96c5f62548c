"""Eager coalescing of small batches (`Metric.coalesce_updates`, metrics/_coalesce.py).

A metric that holds back small eager batches must be indistinguishable from one that updates
every call directly: same values, states, update counts and errors, whatever reads the state
(an attribute, compute, state_dict, a merge, a copy, a move, a compiled step) and whenever.
"""

from __future__ import annotations

import copy
import pickle
from typing import Any

import pytest
import torch
from cases import Args
from test_common import CASES, _ids

from torchtally.metrics import (
    AccuracyMetric,
    ConfusionMatrixMetric,
    F1ScoreMetric,
    MAEMetric,
    MeanMetric,
    Metric,
    MetricCollection,
    MetricValueError,
    MSEMetric,
    R2ScoreMetric,
    SMAPEMetric,
    TopKAccuracyMetric,
)


def _batches(case: Any, count: int = 9, n: int = 6) -> list[Args]:
    g = torch.Generator().manual_seed(7)
    return [case.batch(g, n) for _ in range(count)]


def _held_calls(metric: Metric) -> int:
    stage = metric._runtime.stage
    return 0 if stage is None else stage.calls


def _assert_same(a: Any, b: Any, exact: bool) -> None:
    tolerance = {"rtol": 1e-9, "atol": 1e-12} if exact else {"rtol": 1e-3, "atol": 1e-3}
    torch.testing.assert_close(a, b, equal_nan=True, **tolerance)


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_held_batches_give_the_direct_value_and_state(case: Any) -> None:
    batches = _batches(case)
    held, direct = case.make(), case.make().coalesce_updates(False)
    for positional, keyword in batches:
        held.update(*positional, **keyword)
        direct.update(*positional, **keyword)
    assert held.num_updates == direct.num_updates == len(batches)
    _assert_same(held.compute(), direct.compute(), case.exact)
    for (name, mine), (_, theirs) in zip(
        held.state_dict_all().items(), direct.state_dict_all().items(), strict=True
    ):
        assert name and mine.dtype == theirs.dtype
        _assert_same(mine, theirs, case.exact)


#: Metrics whose small class-score batches are held (the families this was built for).
HOLDERS = [
    lambda: AccuracyMetric(),
    lambda: F1ScoreMetric(5, average_type="macro"),
    lambda: ConfusionMatrixMetric(5),
]


def _scores(seed: int, n: int = 8) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, 5, (n,), generator=g), torch.randn(n, 5, generator=g)


@pytest.mark.parametrize("make", HOLDERS)
def test_batches_are_held_and_every_state_read_applies_them(make: Any) -> None:
    metric, direct = make(), make().coalesce_updates(False)
    for seed in range(4):
        metric.update(*_scores(seed))
        direct.update(*_scores(seed))
    assert _held_calls(metric) == 3  # the first call of a signature runs directly
    state_name = metric.state_names()[0]
    torch.testing.assert_close(getattr(metric, state_name), getattr(direct, state_name))
    assert _held_calls(metric) == 0
    reads = [
        lambda m: m.state_dict(),
        lambda m: m.num_updates,
        lambda m: dict(m.named_buffers()),
        lambda m: list(m.states()),
        lambda m: copy.deepcopy(m),
        lambda m: pickle.loads(pickle.dumps(m)),
    ]
    for seed, read in enumerate(reads, start=10):
        metric.update(*_scores(seed))
        direct.update(*_scores(seed))
        assert _held_calls(metric) == 1
        read(metric)
        assert _held_calls(metric) == 0
    torch.testing.assert_close(metric.compute(), direct.compute())
    assert metric.num_updates == direct.num_updates == 4 + len(reads)


def test_a_parent_module_reading_buffers_directly_sees_held_batches() -> None:
    model, direct = torch.nn.Module(), AccuracyMetric().coalesce_updates(False)
    model.accuracy = AccuracyMetric()
    for seed in range(4):
        model.accuracy.update(*_scores(seed))
        direct.update(*_scores(seed))
    assert _held_calls(model.accuracy) == 3
    buffers = dict(model.named_buffers())  # iterates the metric's `_buffers` itself
    torch.testing.assert_close(buffers["accuracy.counts"], direct._buffers["counts"])
    torch.testing.assert_close(buffers["accuracy._num_updates"], direct._buffers["_num_updates"])


def test_a_compiled_step_between_held_cycles_compiles_once() -> None:
    from torch._dynamo.testing import CompileCounter

    counter = CompileCounter()
    metric, direct = AccuracyMetric(), AccuracyMetric().coalesce_updates(False)

    @torch.compile(fullgraph=True, backend=counter)
    def step(m: Metric, labels: torch.Tensor, scores: torch.Tensor) -> None:
        m.update(labels, scores)

    for cycle in range(4):
        for seed in range(3):
            metric.update(*_scores(10 * cycle + seed))
            direct.update(*_scores(10 * cycle + seed))
        step(metric, *_scores(10 * cycle + 5))
        direct.update(*_scores(10 * cycle + 5))
    torch.testing.assert_close(metric.compute(), direct.compute())
    assert counter.frame_count == 1  # the held batches stay out of the graph


def test_a_copy_holds_the_same_updates() -> None:
    metric = AccuracyMetric()
    for seed in range(3):
        metric.update(*_scores(seed))
    clone = copy.deepcopy(metric)
    restored = pickle.loads(pickle.dumps(metric))
    torch.testing.assert_close(clone.compute(), metric.compute())
    torch.testing.assert_close(restored.compute(), metric.compute())


def test_inputs_reused_in_place_by_the_caller_are_held_by_value() -> None:
    """A loop that refills one input tensor per step (a static buffer) must count every step's
    values, not the last step's values once per held call."""
    metric, direct = AccuracyMetric(), AccuracyMetric().coalesce_updates(False)
    labels, scores = torch.empty(8, dtype=torch.int64), torch.empty(8, 5)
    for seed in range(5):
        fresh = _scores(seed)
        labels.copy_(fresh[0])
        scores.copy_(fresh[1])
        metric.update(labels, scores)
        direct.update(labels, scores)
    torch.testing.assert_close(metric.compute(), direct.compute())


def test_forward_returns_the_value_over_everything_so_far() -> None:
    metric, direct = AccuracyMetric(), AccuracyMetric().coalesce_updates(False)
    for seed in range(4):
        torch.testing.assert_close(metric(*_scores(seed)), direct(*_scores(seed)))


def test_reset_drops_held_batches() -> None:
    metric = AccuracyMetric()
    for seed in range(3):
        metric.update(*_scores(seed))
    metric.reset()
    metric.update(*_scores(5))
    reference = AccuracyMetric().coalesce_updates(False)
    reference.update(*_scores(5))
    torch.testing.assert_close(metric.compute(), reference.compute())
    assert metric.num_updates == 1


def test_merge_applies_both_sides() -> None:
    a, b, whole = AccuracyMetric(), AccuracyMetric(), AccuracyMetric().coalesce_updates(False)
    for seed in range(3):
        a.update(*_scores(seed))
        whole.update(*_scores(seed))
    for seed in range(3, 7):
        b.update(*_scores(seed))
        whole.update(*_scores(seed))
    torch.testing.assert_close(a.merge_state(b).compute(), whole.compute())
    assert a.num_updates == whole.num_updates == 7


def test_load_state_dict_after_held_batches_restores_the_checkpoint() -> None:
    saved = F1ScoreMetric(5, average_type="macro").persistent()
    saved.update(*_scores(1))
    checkpoint = saved.state_dict()
    metric = F1ScoreMetric(5, average_type="macro").persistent()
    for seed in range(2, 5):
        metric.update(*_scores(seed))
    metric.load_state_dict(checkpoint)
    torch.testing.assert_close(metric.compute(), saved.compute())


def test_a_bad_call_still_raises_at_the_call() -> None:
    metric = AccuracyMetric()
    for seed in range(3):
        metric.update(*_scores(seed))
    labels, scores = _scores(9)
    with pytest.raises(ValueError, match="num_classes"):
        AccuracyMetric(num_classes=5).update(labels, scores[:, :4])
    with pytest.raises(TypeError, match="labels"):
        metric.update(scores[:, 0], scores)  # floating labels: another signature, checked
    reference = AccuracyMetric().coalesce_updates(False)
    for seed in range(3):
        reference.update(*_scores(seed))
    torch.testing.assert_close(metric.compute(), reference.compute())


def test_bad_values_in_a_held_batch_raise_at_compute() -> None:
    metric = AccuracyMetric()
    metric.update(*_scores(0))
    labels, scores = _scores(1)
    scores[2, 1] = float("nan")
    labels[3] = 7
    metric.update(labels, scores)
    assert _held_calls(metric) == 1
    with pytest.raises(MetricValueError, match="labels outside"):
        metric.compute()


def test_batch_wide_score_reading_is_never_held() -> None:
    """'auto' reads a binary batch as logits when any score is outside [0, 1]: concatenating a
    probability batch with a logit batch would read both as logits."""
    labels = torch.tensor([1, 0, 1, 0])
    probabilities = torch.tensor([0.9, 0.2, 0.4, 0.1])
    logits = torch.tensor([2.0, -1.0, -0.5, -3.0])
    metric, direct = AccuracyMetric(), AccuracyMetric().coalesce_updates(False)
    for scores in (probabilities, logits, probabilities, logits):
        metric.update(labels, scores)
        direct.update(labels, scores)
    assert _held_calls(metric) == 0
    torch.testing.assert_close(metric.compute(), direct.compute())


def test_large_batches_and_keyword_calls_go_direct() -> None:
    metric = AccuracyMetric()
    big = (torch.randint(0, 5, (20_000,)), torch.randn(20_000, 5))
    for _ in range(3):
        metric.update(*big)
    assert _held_calls(metric) == 0
    labels, scores = _scores(0)
    metric.update(labels, scores)
    metric.update(labels, scores)
    metric.update(labels=labels, predictions=scores)
    assert _held_calls(metric) == 0


def test_a_metric_caps_the_batches_it_holds() -> None:
    # top-k ranks held batches in blocks: a batch past its `max_held_elements` goes direct
    # (applying what is held first), whether or not a stage of its signature exists, and the
    # smaller batches around it are still held
    metric, direct = TopKAccuracyMetric(3), TopKAccuracyMetric(3).coalesce_updates(False)
    cap = TopKAccuracyMetric.max_held_elements
    assert cap is not None
    g = torch.Generator().manual_seed(11)
    rows = [cap // 100 // 2, cap // 100 + 1, cap // 100 // 2, cap // 100 // 2, cap // 100 + 1]
    held = []
    for n in rows:
        labels, scores = torch.randint(0, 100, (n,), generator=g), torch.randn(n, 100, generator=g)
        metric.update(labels, scores)
        direct.update(labels, scores)
        held.append(_held_calls(metric))
    # the first small batch stages, the large one flushes and goes direct, the small ones
    # are held, the last large one flushes them again
    assert held == [0, 0, 1, 2, 0]
    assert torch.equal(metric.counts, direct.counts)


@pytest.mark.parametrize("kind", [MSEMetric, MAEMetric, SMAPEMetric, R2ScoreMetric, MeanMetric])
def test_float64_sum_metrics_hold_batches_up_to_their_cap(kind: type[Metric]) -> None:
    # past the cap their blocked update costs no more per element than holding the batch
    cap = kind.max_held_elements
    assert cap is not None and cap < 1 << 16  # below the engine's own limit: a cap of its own
    metric, direct = kind(), kind().coalesce_updates(False)
    g = torch.Generator().manual_seed(5)
    held = []
    for n in (cap // 4, cap, cap + 1, cap // 4, 4 * cap):
        labels = torch.randn(n, generator=g)
        args = (labels,) if kind is MeanMetric else (labels, labels + torch.randn(n, generator=g))
        metric.update(*args)
        direct.update(*args)
        held.append(_held_calls(metric))
    # the first batch stages, one at the cap is held, one past it flushes and goes direct
    assert held == [0, 1, 0, 1, 0]
    _assert_same(metric.compute(), direct.compute(), exact=True)


def test_collection_members_update_directly() -> None:
    collection = MetricCollection([AccuracyMetric(), F1ScoreMetric(5, average_type="macro")])
    reference = [AccuracyMetric().coalesce_updates(False), F1ScoreMetric(5, average_type="macro")]
    for seed in range(4):
        collection.update(*_scores(seed))
        reference[0].update(*_scores(seed))
        reference[1].update(*_scores(seed))
    for member in collection.metrics.values():
        assert _held_calls(member) == 0
    values = collection.compute()
    for expected in reference:
        torch.testing.assert_close(values[expected.name], expected.compute())


def test_compiled_updates_mix_with_held_eager_ones() -> None:
    """Eager batches held back, then updates inside a compiled step, then eager reads: the
    state is the sum of both, as if every update had gone in directly."""
    metric, direct = ConfusionMatrixMetric(5), ConfusionMatrixMetric(5).coalesce_updates(False)
    for seed in range(3):
        metric.update(*_scores(seed))
        direct.update(*_scores(seed))

    @torch.compile(fullgraph=True, backend="eager")
    def step(m: Metric, labels: torch.Tensor, scores: torch.Tensor) -> None:
        m.update(labels, scores)

    for seed in range(3, 6):
        step(metric, *_scores(seed))
        direct.update(*_scores(seed))
    for seed in range(6, 8):
        metric.update(*_scores(seed))
        direct.update(*_scores(seed))
    torch.testing.assert_close(metric.compute(), direct.compute())
    assert metric.num_updates == direct.num_updates == 8


def test_compile_update_applies_held_batches_first() -> None:
    metric, direct = AccuracyMetric(), AccuracyMetric().coalesce_updates(False)
    for seed in range(3):
        metric.update(*_scores(seed))
        direct.update(*_scores(seed))
    metric.compile_update(backend="eager")
    assert _held_calls(metric) == 0 or metric.update_is_compiled
    for seed in range(3, 5):
        metric.update(*_scores(seed))
        direct.update(*_scores(seed))
    torch.testing.assert_close(metric.compute(), direct.compute())
    assert metric.num_updates == 5


def test_updates_under_inference_mode_are_held_and_counted() -> None:
    metric, direct = AccuracyMetric(), AccuracyMetric().coalesce_updates(False)
    with torch.inference_mode():
        for seed in range(4):
            metric.update(*_scores(seed))
            direct.update(*_scores(seed))
    torch.testing.assert_close(metric.compute(), direct.compute())


def test_batches_held_in_and_out_of_inference_mode() -> None:
    """Across several flushes, so that slots first written under inference mode are written
    again outside it (and the other way round)."""
    metric, direct = AccuracyMetric(), AccuracyMetric().coalesce_updates(False)
    for seed in range(6):
        with torch.inference_mode(seed % 2 == 1):
            metric.update(*_scores(seed))
            direct.update(*_scores(seed))
        metric.flush()
    for seed in range(6):
        with torch.inference_mode(seed % 2 == 0):
            metric.update(*_scores(seed))
            direct.update(*_scores(seed))
    torch.testing.assert_close(metric.compute(), direct.compute())


def test_error_counts_first_recorded_under_inference_mode_then_outside_it() -> None:
    metric = AccuracyMetric().coalesce_updates(False)
    labels, scores = _scores(0)
    labels[0] = 9
    with torch.inference_mode():
        metric.update(labels, scores)
    metric.update(labels, scores)
    with pytest.raises(MetricValueError, match=r"\(2 values\)"):
        metric.compute()


def _held_confusion_matrices(batches: int = 4) -> tuple[Metric, Metric]:
    metric, direct = ConfusionMatrixMetric(5), ConfusionMatrixMetric(5).coalesce_updates(False)
    for seed in range(batches):
        metric.update(*_scores(seed))
        direct.update(*_scores(seed))
    assert _held_calls(metric) == batches - 1
    return metric, direct


def test_a_make_fx_trace_reading_held_state_does_not_replay_the_flush() -> None:
    """The held batches are applied eagerly while tracing, not recorded: replaying the trace
    must not add them again."""
    from torch.fx.experimental.proxy_tensor import make_fx

    metric, direct = _held_confusion_matrices()
    traced = make_fx(lambda: metric.confusion_matrix.clone())()
    for _ in range(3):
        torch.testing.assert_close(traced(), direct.confusion_matrix)
    torch.testing.assert_close(metric.compute(), direct.compute())
    assert metric.num_updates == direct.num_updates


def test_a_jit_trace_reading_held_state_does_not_replay_the_flush() -> None:
    metric, direct = _held_confusion_matrices()
    traced = torch.jit.trace(lambda x: metric.confusion_matrix + x, torch.zeros(()))
    for _ in range(3):
        torch.testing.assert_close(traced(torch.zeros(())), direct.confusion_matrix)
    torch.testing.assert_close(metric.compute(), direct.compute())


def test_a_compiled_compute_applies_held_batches_once() -> None:
    metric, direct = _held_confusion_matrices()
    compiled = torch.compile(lambda: metric.confusion_matrix.clone(), backend="eager")
    for round_ in range(3):
        torch.testing.assert_close(compiled(), direct.confusion_matrix)
        for seed in range(10 * round_, 10 * round_ + 3):  # hold more, read again compiled
            metric.update(*_scores(100 + seed))
            direct.update(*_scores(100 + seed))
    torch.testing.assert_close(metric.compute(), direct.compute())
    assert metric.num_updates == direct.num_updates


def test_coalesce_updates_argument_is_checked() -> None:
    with pytest.raises(TypeError, match="Argument `enabled` must be a bool"):
        AccuracyMetric().coalesce_updates(1)  # type: ignore[arg-type]


def test_calls_unlike_the_held_ones_leave_the_lean_path_and_stay_exact() -> None:
    # The lean path holds a call only when it matches the held batches' signature exactly;
    # every other kind of call in between must still land, in order, in the same state.
    g = torch.Generator().manual_seed(11)

    def batch(n: int, dtype: torch.dtype = torch.float32) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.randint(0, 5, (n,), generator=g), torch.randn(n, 5, generator=g).to(dtype)

    labels, scores = batch(8)
    calls: list[tuple[Any, ...]] = [
        batch(8),
        batch(8),
        batch(8, torch.float64),  # another dtype
        batch(8),
        (labels, scores.clone().requires_grad_()),  # tracked by autograd
        batch(8),
        batch(3),  # another row count: same signature, held too
        (labels.tolist(), scores.tolist()),  # not tensors: refused by name
        batch(8),
        batch(60_000),  # too large to hold
        batch(8),
        (labels[:4], scores[:5]),  # unequal leading sizes: the update's own error
        batch(8),
    ]
    held, direct = F1ScoreMetric(5), F1ScoreMetric(5).coalesce_updates(False)
    for args in calls:
        for metric in (held, direct):
            try:
                metric.update(*args)
            except (TypeError, ValueError) as error:  # the same refusal on both paths
                assert "Argument `labels`" in str(error) or "Argument `predictions`" in str(error)
    assert held.num_updates == direct.num_updates
    torch.testing.assert_close(held.class_counts, direct.class_counts, rtol=0, atol=0)
    torch.testing.assert_close(held._errors, direct._errors, rtol=0, atol=0)
    torch.testing.assert_close(held.compute(), direct.compute(), rtol=0, atol=0)
