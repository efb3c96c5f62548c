"""`Metric.compile_update()`: eager `update` calls through one cached `torch.compile` per metric.

The oracle is the same metric updated eagerly on the same batches: states equal (exactly for
integer states, to float round-off for float ones, as a compiler may reorder a float sum),
values equal, the same error counts for bad values. Recompiles are counted with Dynamo's own
counters: batches of three sizes compile once.

Compiling is slow on a small CPU (about 1-4 s per metric with inductor), so the sweep over every
registry case is `slow` and uses the `aot_eager` backend (Dynamo's capture and AOTAutograd's
functionalized graph, the part that decides what a compiled update does to the state); a few
representative metrics run unmarked through the default inductor backend.
"""

from __future__ import annotations

import copy
import pickle
import re
import warnings
from typing import Any

import pytest
import torch
from cases import Args, Case
from test_common import ALL_CASES, _slice
from torch._dynamo.testing import CompileCounterWithBackend
from torch._dynamo.utils import counters

from torchtally.metrics import (
    AUROCMetric,
    MeanMetric,
    Metric,
    MetricCollection,
    MetricValueError,
    WordErrorRateMetric,
)

#: Three batch sizes (none of them 0 or 1, which torch specializes), each seen twice.
SIZES = (7, 12, 5, 7, 12, 5)
BY_ID = {case.id: case for case in ALL_CASES}
#: One per kind of state: integer counts, float sums, a `cat` state, a float64 matrix.
REPRESENTATIVE = ("accuracy-scores", "mean", "auroc-exact-binary", "confusion-matrix-scores")


def _batches(case: Case, sizes: tuple[int, ...] = SIZES) -> list[Args]:
    return [case.batch(torch.Generator().manual_seed(20 + i), n) for i, n in enumerate(sizes)]


def _assert_same_state(compiled: Metric, eager: Metric) -> None:
    """Integer states equal exactly; float states to the round-off of a reordered sum."""
    for (name, got), (_, want) in zip(compiled.named_buffers(), eager.named_buffers()):
        if want.is_floating_point() or want.is_complex():
            tight = want.dtype == torch.float64
            torch.testing.assert_close(
                got,
                want,
                equal_nan=True,
                rtol=1e-12 if tight else 1e-5,
                atol=1e-12 if tight else 1e-6,
                msg=lambda m, name=name: f"state {name}: {m}",
            )
        else:
            assert torch.equal(got, want), f"state {name}: {got} != {want}"


def _assert_same_value(compiled: Any, eager: Any) -> None:
    torch.testing.assert_close(compiled, eager, equal_nan=True, rtol=1e-5, atol=1e-6)


def _counted_errors(metric: Metric) -> torch.Tensor:
    """The value errors counted so far, by kind: in `update` (the error-count state), plus
    those that a metric counts over its stored rows at compute (`stored_error_counts`, the
    first kinds), so that both placements of a check are compared alike."""
    counted = metric._errors.clone()
    stored = getattr(metric, "stored_error_counts", lambda: None)()
    if stored is not None:
        counted[: stored.shape[0]] += stored
    return counted


def _feed(metric: Metric, batches: list[Args]) -> None:
    for positional, keyword in batches:
        metric.update(*positional, **keyword)


def _compare_with_eager(
    case: Case, backend: str
) -> tuple[CompileCounterWithBackend, Metric, Metric]:
    counter = CompileCounterWithBackend(backend)
    eager, compiled = case.make(), case.make().compile_update(backend=counter)
    batches = _batches(case)
    _feed(eager, batches)
    _feed(compiled, batches)
    assert compiled.num_updates == eager.num_updates == len(SIZES)
    _assert_same_state(compiled, eager)
    _assert_same_value(compiled.compute(), eager.compute())
    return counter, eager, compiled


@pytest.mark.parametrize("case_id", REPRESENTATIVE)
def test_compiled_update_equals_eager_and_compiles_once_over_three_batch_sizes(
    case_id: str,
) -> None:
    case = BY_ID[case_id]
    counters.clear()
    counter, _, _ = _compare_with_eager(case, "inductor")
    # Dynamo's own counters: one graph for six calls of three sizes (the batch dimension is
    # marked dynamic up front, so no recompile when the size first changes).
    assert counters["stats"]["unique_graphs"] == 1
    assert counter.frame_count == 1


#: Registry cases whose update specializes the batch size under Dynamo, so each new size
#: compiles a graph (up to Dynamo's recompile limit, then the metric falls back to eager with a
#: warning). BootStrapper's `vmap` over the calibration update's `scatter_add` does.
SPECIALIZES_BATCH = {"bootstrap-calibration"}


@pytest.mark.slow
@pytest.mark.parametrize("case", ALL_CASES, ids=[c.id for c in ALL_CASES])
def test_every_registry_case_compiled_equals_eager_and_counts_the_same_errors(
    case: Case,
) -> None:
    counter, eager, compiled = _compare_with_eager(case, "aot_eager")
    graphs = len(set(SIZES)) if case.id in SPECIALIZES_BATCH else 1
    assert counter.frame_count <= graphs, f"{counter.frame_count} graphs for {len(SIZES)} calls"
    if not case.bad:
        return
    # Every bad value after those batches, into the same pair (one compile per case): identical
    # error counts kind by kind, and `compute` raises the same message.
    for positional, keyword, _ in case.bad:
        eager.update(*positional, **keyword)
        compiled.update(*positional, **keyword)
    assert int(_counted_errors(eager).sum()) > 0
    assert torch.equal(_counted_errors(compiled), _counted_errors(eager))
    with pytest.raises(MetricValueError) as expected:
        eager.compute()
    with pytest.raises(MetricValueError, match=re.escape(str(expected.value))):
        compiled.compute()


def test_bad_values_count_the_same_errors_compiled_with_inductor() -> None:
    case = BY_ID["accuracy-weighted"]
    eager, compiled = case.make(), case.make().compile_update()
    good = _batches(case, (6,))
    for positional, keyword, _ in case.bad:
        for metric in (eager, compiled):
            _feed(metric, good)
            metric.update(*positional, **keyword)
    assert int(compiled._errors.sum()) > 0
    assert torch.equal(compiled._errors, eager._errors)
    with pytest.raises(MetricValueError, match="negative weights"):
        compiled.compute()


def test_mixing_eager_and_compiled_updates_is_exact_for_a_cat_state() -> None:
    """Compiled appends write the fill count: a later eager append (which may use its host
    note of the fill for a single slice copy) must land after them, and back again."""
    case = BY_ID["auroc-exact-binary"]
    sizes = (9, 4, 11, 6, 3, 8)
    batches = _batches(case, sizes)
    eager, mixed = case.make(), case.make()
    for i, (positional, keyword) in enumerate(batches):
        mixed.compile_update(i % 2 == 1, backend="aot_eager")
        mixed.update(*positional, **keyword)
        eager.update(*positional, **keyword)
    assert mixed.num_updates == eager.num_updates == len(sizes)
    assert int(mixed.cat_state("codes").count) == sum(sizes)
    _assert_same_state(mixed, eager)
    _assert_same_value(mixed.compute(), eager.compute())
    # Switching back on with the same options reuses the graph: no recompile.
    assert mixed._runtime.compiler.run is not None


def test_switching_back_on_reuses_the_compiled_graph() -> None:
    counter = CompileCounterWithBackend("aot_eager")
    metric = MeanMetric().compile_update(backend=counter)
    for enabled in (True, False, True, False, True):
        metric.compile_update(enabled, backend=counter)
        metric.update(torch.arange(4.0))
    assert counter.frame_count == 1
    assert float(metric.compute()) == 1.5 and metric.num_updates == 5


def test_reset_state_dict_merge_and_collections_work_without_recompiling() -> None:
    case = BY_ID["auroc-exact-binary"]
    counter = CompileCounterWithBackend("aot_eager")
    first, second = _batches(case, (10, 6))
    compiled = case.make().compile_update(backend=counter).persistent(True)
    _feed(compiled, [first])
    compiled.reset()
    _feed(compiled, [first])
    eager = case.make().persistent(True)
    _feed(eager, [first])
    _assert_same_state(compiled, eager)
    # A checkpoint loaded into the compiled metric, then further compiled updates.
    restored = case.make().compile_update(backend=counter).persistent(True)
    restored.load_state_dict(compiled.state_dict())
    _feed(restored, [second])
    _feed(eager, [second])
    _assert_same_value(restored.compute(), eager.compute())
    # merge_state into a compiled metric, then another compiled update.
    other = case.make()
    _feed(other, [second])
    compiled.merge_state(other)
    _feed(compiled, [first])
    _feed(eager, [first])
    _assert_same_value(compiled.compute(), eager.compute())
    assert counter.frame_count == 2  # one graph per metric instance, none after reset/load/merge
    # In a collection (which may alias states between metrics sharing a statistic).
    collection = MetricCollection({"m": case.make().compile_update(backend="aot_eager")})
    _feed(collection, [first, second])
    alone = case.make()
    _feed(alone, [first, second])
    _assert_same_value(collection.compute()["m"], alone.compute())


def test_a_replaced_state_tensor_is_the_one_updated() -> None:
    """A sync or a collection's aliasing replaces state tensors: the graph takes the states
    as inputs, so it must update the new tensor, not the one it was compiled with."""
    metric = MeanMetric().compile_update(backend="aot_eager")
    metric.update(torch.ones(3))
    name = next(n for n in metric.state_names() if metric._buffers[n].is_floating_point())
    old = metric._buffers[name]
    metric._buffers[name] = old.clone()
    metric.update(torch.ones(3))
    assert not torch.equal(metric._buffers[name], old)
    assert float(metric.compute()) == 1.0 and metric.num_updates == 2


def test_copies_pickles_and_device_moves_rebuild_the_compiled_update() -> None:
    case = BY_ID["accuracy-scores"]
    first, second = _batches(case, (8, 5))
    compiled = case.make().compile_update(backend="aot_eager")
    _feed(compiled, [first])
    eager = case.make()
    _feed(eager, [first, second])
    for copied in (
        copy.deepcopy(compiled),
        pickle.loads(pickle.dumps(compiled)),
        copy.deepcopy(compiled).to("cpu"),
    ):
        assert copied.update_is_compiled
        assert copied._runtime.compiler.run is None  # rebuilt on first use
        _feed(copied, [second])
        assert copied._runtime.compiler.run is not None
        _assert_same_value(copied.compute(), eager.compute())
    # The original is unaffected by its copies' updates.
    assert compiled.num_updates == 1


def test_grad_and_no_grad_callers_share_one_graph() -> None:
    """A training loop (grad mode) and an eval loop (no_grad) update the same metric."""
    case = BY_ID["f1-multiclass-macro"]
    counter = CompileCounterWithBackend("aot_eager")
    compiled, eager = case.make().compile_update(backend=counter), case.make()
    for i, (positional, keyword) in enumerate(_batches(case, (6, 9, 7, 5))):
        with torch.set_grad_enabled(i % 2 == 0):
            compiled.update(*positional, **keyword)
            eager.update(*positional, **keyword)
        assert torch.is_grad_enabled()  # the caller's mode is restored
    assert counter.frame_count == 1
    _assert_same_state(compiled, eager)


def test_assert_traceable_accepts_a_metric_with_compile_update_on() -> None:
    from torchtally.testing import assert_traceable

    metric = BY_ID["accuracy-scores"].make().compile_update(backend="aot_eager")
    positional, keyword = _batches(BY_ID["accuracy-scores"], (6,))[0]
    report = assert_traceable(metric, *positional, **keyword)
    assert report.graphs == 1 and report.recompiles == 0
    assert metric.num_updates == 0  # checked on copies


def test_inference_mode_inputs_get_one_more_graph_not_one_per_call() -> None:
    counter = CompileCounterWithBackend("aot_eager")
    metric = MeanMetric().compile_update(backend=counter)
    for i in range(6):
        with torch.inference_mode(i % 2 == 1):
            metric.update(torch.full((4 + i,), float(i)))
    assert counter.frame_count == 2
    assert float(metric.compute()) == pytest.approx(sum(i * (4 + i) for i in range(6)) / 39)


def test_a_compiled_metric_is_freed_with_its_graphs() -> None:
    """The registry holds metrics weakly; the compiled callable must not keep one alive."""
    import gc
    import weakref

    metric = AUROCMetric(capacity=32).compile_update(backend="aot_eager")
    metric.update(torch.tensor([0, 1, 1]), torch.tensor([0.2, 0.7, 0.6]))
    alive = weakref.ref(metric)
    del metric
    gc.collect()
    assert alive() is None


def test_boundary_stays_eager_lists_and_dtype_work_compiled() -> None:
    metric = MeanMetric().compile_update(backend="aot_eager")
    metric.update([1.0, 2.0, 3.0], dtype=torch.float16)
    value = metric.compute()
    assert value.dtype == torch.float16 and float(value) == 2.0
    metric.update(torch.tensor([6.0, 8.0]))
    assert metric.compute().dtype != torch.float16  # an update without dtype= clears it


def test_argument_errors_are_the_eager_ones() -> None:
    metric = AUROCMetric(capacity=64).compile_update(backend="aot_eager")
    metric.update(torch.tensor([0, 1, 1]), torch.tensor([0.2, 0.7, 0.6]))
    with pytest.raises(ValueError) as compiled_error:
        metric.update(torch.tensor([0, 1, 1]), torch.tensor([0.2, 0.7]))
    with pytest.raises(ValueError) as eager_error:
        AUROCMetric(capacity=64).update(torch.tensor([0, 1, 1]), torch.tensor([0.2, 0.7]))
    assert str(compiled_error.value) == str(eager_error.value)
    assert metric.update_is_compiled and metric.num_updates == 1


def test_an_update_doing_host_work_falls_back_to_eager_with_a_warning() -> None:
    compiled, eager = WordErrorRateMetric().compile_update(), WordErrorRateMetric()
    batches = [(["hello world"], ["hello there world"]), (["a b c", "d"], ["a c", "d e"])]
    with pytest.warns(RuntimeWarning, match=r"update cannot be compiled.*runs eagerly"):
        compiled.update(*batches[0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once, then plainly eager
        compiled.update(*batches[1])
    for batch in batches:
        eager.update(*batch)
    assert not compiled.update_is_compiled
    assert compiled.num_updates == eager.num_updates == 2
    assert float(compiled.compute()) == float(eager.compute())


def test_inside_an_outer_compile_the_update_is_traced_as_usual() -> None:
    metric = MeanMetric().compile_update(backend="aot_eager")
    step = torch.compile(lambda x: metric.update(x), backend="aot_eager", fullgraph=True)
    step(torch.ones(4))
    step(torch.full((4,), 3.0))
    assert float(metric.compute()) == 2.0 and metric.num_updates == 2


@pytest.mark.parametrize(
    ("kwargs", "error", "fragment"),
    [
        (
            {"enabled": "yes"},
            TypeError,
            "Argument `enabled` must be a bool. Received: enabled='yes'",
        ),
        ({"fullgraph": False}, ValueError, "Argument `fullgraph` must be True"),
        ({"backnd": "inductor"}, TypeError, "Received: ['backnd']"),
    ],
)
def test_bad_compile_arguments_are_named(
    kwargs: dict[str, Any], error: type[Exception], fragment: str
) -> None:
    with pytest.raises(error, match=re.escape(fragment)):
        MeanMetric().compile_update(**kwargs)


def test_update_is_compiled_reports_the_switch() -> None:
    metric = MeanMetric()
    assert not metric.update_is_compiled
    assert metric.compile_update() is metric and metric.update_is_compiled
    assert not metric.compile_update(False).update_is_compiled


class _Scaled(Metric):
    """Specializes on a string argument: every new value compiles a new graph."""

    def __init__(self) -> None:
        super().__init__()
        self.register_state("total", torch.zeros((), dtype=torch.float64))

    def update(self, x: torch.Tensor, scale: str) -> None:
        self.total.add_(x.sum() * float(scale))

    def compute(self) -> torch.Tensor:
        return self.total.clone()


def test_hitting_the_recompile_limit_falls_back_to_eager_with_a_warning() -> None:
    compiled, eager = _Scaled().compile_update(backend="eager"), _Scaled()
    limit = torch._dynamo.config.recompile_limit
    with pytest.warns(RuntimeWarning, match=r"update cannot be compiled.*runs eagerly"):
        for i in range(limit + 3):
            compiled.update(torch.ones(3, dtype=torch.float64), str(i))
            eager.update(torch.ones(3, dtype=torch.float64), str(i))
    assert not compiled.update_is_compiled
    assert compiled.num_updates == eager.num_updates == limit + 3
    assert float(compiled.compute()) == float(eager.compute()) == 3.0 * sum(range(limit + 3))


def _sync_worker(rank: int, world: int) -> tuple[Any, Any, int]:
    """Each gloo rank: a compiled update on half its shard, `compute` (syncs and unsyncs the
    `cat` state), a compiled update on the other half, `compute` again."""
    case = BY_ID["auroc-exact-binary"]
    whole = case.batch(torch.Generator().manual_seed(30), SYNC_N)
    start, stop = (0, SYNC_SPLIT) if rank == 0 else (SYNC_SPLIT, SYNC_N)
    middle = (start + stop) // 2
    metric = case.make().compile_update(backend="aot_eager")
    positional, keyword = _slice(whole, SYNC_N, start, middle)
    metric.update(*positional, **keyword)
    first = metric.compute()
    positional, keyword = _slice(whole, SYNC_N, middle, stop)
    metric.update(*positional, **keyword)
    return first, metric.compute(), int(metric.num_updates)


SYNC_N, SYNC_SPLIT = 40, 17


@pytest.mark.slow
def test_compiled_updates_sync_over_two_gloo_ranks() -> None:
    from torchtally.distributed import run_local_ranks

    results = run_local_ranks(_sync_worker, 2, timeout=240)
    case = BY_ID["auroc-exact-binary"]
    whole = case.batch(torch.Generator().manual_seed(30), SYNC_N)
    halves = [(0, SYNC_SPLIT // 2), (SYNC_SPLIT, (SYNC_SPLIT + SYNC_N) // 2)]
    first = case.make()
    for start, stop in halves:
        positional, keyword = _slice(whole, SYNC_N, start, stop)
        first.update(*positional, **keyword)
    everything = case.make()
    positional, keyword = whole
    everything.update(*positional, **keyword)
    for rank_first, rank_all, updates in results:
        _assert_same_value(rank_first, first.compute())
        _assert_same_value(rank_all, everything.compute())
        assert updates == 2
