"""`MetricCollection.compile_update()`: one cached `torch.compile` graph for every member's update.

The oracle is the same collection updated eagerly on the same batches: every state equal
(exactly for integer states, to float round-off for float ones), every value equal, the same
error counts and messages for bad values. Graphs are counted with Dynamo's own counters.

Unmarked tests that compare states compile with the `aot_eager` backend (Dynamo's capture and
AOTAutograd's functionalized graph: what decides what the compiled update does to the states);
those about the switch's bookkeeping (graphs counted, modes, copies) with Dynamo's `eager`
backend, the cheapest capture; the default inductor backend runs in `slow` tests.
"""

from __future__ import annotations

import copy
import io
import pickle
import re
import threading
import warnings
from collections.abc import Callable
from typing import Any

import pytest
import torch
from torch import Tensor
from torch._dynamo.testing import CompileCounterWithBackend
from torch._dynamo.utils import counters

from torchtally.metrics import (
    AccuracyMetric,
    AUROCMetric,
    ConfusionMatrixMetric,
    F1ScoreMetric,
    MAEMetric,
    MetricCollection,
    MetricValueError,
    MSEMetric,
    PrecisionMetric,
    R2ScoreMetric,
    SMAPEMetric,
    TopKAccuracyMetric,
    WordErrorRateMetric,
)

CLASSES = 10
#: Three batch sizes (none 0 or 1, which torch specializes), each seen twice.
SIZES = (7, 12, 5, 7, 12, 5)
Batch = tuple[Tensor, Tensor]


def six_metrics() -> MetricCollection:
    """The six-metric collection of benchmarks/bench_step_overhead.py."""
    return MetricCollection(
        {
            "accuracy": AccuracyMetric(),
            "precision": PrecisionMetric(CLASSES, average_type="macro"),
            "f1": F1ScoreMetric(CLASSES, average_type="macro"),
            "top3": TopKAccuracyMetric(3),
            "auroc": AUROCMetric(CLASSES, num_bins=128),
            "confusion": ConfusionMatrixMetric(CLASSES),
        }
    )


def regression() -> MetricCollection:
    return MetricCollection([MSEMetric(), MAEMetric(), SMAPEMetric(), R2ScoreMetric()])


def classification_batches(sizes: tuple[int, ...] = SIZES, seed: int = 0) -> list[Batch]:
    g = torch.Generator().manual_seed(seed)
    return [
        (
            torch.randint(0, CLASSES, (n,), generator=g),
            torch.randn(n, CLASSES, generator=g).softmax(-1),
        )
        for n in sizes
    ]


def regression_batches(sizes: tuple[int, ...] = SIZES, seed: int = 0) -> list[Batch]:
    g = torch.Generator().manual_seed(seed)
    batches = []
    for n in sizes:
        labels = torch.randn(n, generator=g)
        batches.append((labels, labels + 0.3 * torch.randn(n, generator=g)))
    return batches


CASES: dict[str, tuple[Callable[[], MetricCollection], Callable[..., list[Batch]]]] = {
    "six-classification": (six_metrics, classification_batches),
    "regression": (regression, regression_batches),
}


def feed(collection: MetricCollection, batches: list[Batch]) -> None:
    for labels, predictions in batches:
        collection.update(labels, predictions)


def assert_same_states(got: MetricCollection, want: MetricCollection) -> None:
    """Every buffer of every member: integers exactly, floats to a reordered sum's round-off."""
    mine, theirs = dict(got.named_buffers()), dict(want.named_buffers())
    assert mine.keys() == theirs.keys()
    for name, expected in theirs.items():
        actual = mine[name]
        if expected.is_floating_point():
            tight = expected.dtype == torch.float64
            torch.testing.assert_close(
                actual,
                expected,
                equal_nan=True,
                rtol=1e-12 if tight else 1e-5,
                atol=1e-12 if tight else 1e-6,
                msg=lambda m, name=name: f"state {name}: {m}",
            )
        else:
            assert torch.equal(actual, expected), f"state {name}: {actual} != {expected}"


def assert_same_values(got: dict[str, Any], want: dict[str, Any]) -> None:
    assert got.keys() == want.keys()
    for key, expected in want.items():
        torch.testing.assert_close(
            torch.as_tensor(got[key]), torch.as_tensor(expected), rtol=1e-6, atol=1e-7
        )


def member_counts(collection: MetricCollection) -> dict[str, int]:
    return {name: int(metric.num_updates) for name, metric in collection.items()}


@pytest.mark.parametrize("case", CASES)
def test_compiled_collection_equals_eager_in_one_graph_over_three_batch_sizes(case: str) -> None:
    make, batches_of = CASES[case]
    counter = CompileCounterWithBackend("aot_eager")
    eager, compiled = make(), make().compile_update(backend=counter)
    batches = batches_of()
    counters.clear()
    feed(eager, batches)
    feed(compiled, batches)
    # One graph for six calls of three sizes, holding every member's update.
    assert counter.frame_count == 1
    assert counters["stats"]["unique_graphs"] == 1
    assert_same_states(compiled, eager)
    assert member_counts(compiled) == member_counts(eager)
    assert_same_values(compiled.compute(), eager.compute())
    # Every member's cached value was dropped by the compiled update, as eagerly.
    feed(compiled, batches[:1])
    feed(eager, batches[:1])
    assert_same_values(compiled.compute(), eager.compute())


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES)
def test_compiled_with_inductor_equals_eager(case: str) -> None:
    make, batches_of = CASES[case]
    counter = CompileCounterWithBackend("inductor")
    eager, compiled = make(), make().compile_update(backend=counter)
    batches = batches_of()
    feed(eager, batches)
    feed(compiled, batches)
    assert counter.frame_count == 1
    assert_same_states(compiled, eager)
    assert_same_values(compiled.compute(), eager.compute())


def test_bad_values_count_the_same_errors_and_raise_the_same_message() -> None:
    eager, compiled = six_metrics(), six_metrics().compile_update(backend="aot_eager")
    good = classification_batches((6,))
    nan_scores = good[0][1].clone()
    nan_scores[2, 3] = float("nan")
    bad = [
        (torch.tensor([0, 1, 12, 3, 4, -1]), good[0][1]),  # labels out of range
        (good[0][0], nan_scores),  # a non-finite score
    ]
    for collection in (eager, compiled):
        feed(collection, good + bad)
    for name, metric in eager.items():
        assert torch.equal(compiled[name]._errors, metric._errors), name
    assert int(sum(m._errors.sum() for m in eager.values())) > 0
    with pytest.raises(MetricValueError) as expected:
        eager.compute()
    with pytest.raises(MetricValueError, match=re.escape(str(expected.value))):
        compiled.compute()


def test_reset_state_dict_and_merge_keep_the_graph() -> None:
    counter = CompileCounterWithBackend("aot_eager")
    first, second, third = regression_batches((9, 6, 11), seed=3)
    compiled = regression().compile_update(backend=counter).persistent(True)
    feed(compiled, [third])
    compiled.reset()
    feed(compiled, [first])
    eager = regression().persistent(True)
    feed(eager, [first])
    assert_same_states(compiled, eager)
    # A checkpoint loaded into another compiled collection, then more compiled updates.
    buffer = io.BytesIO()
    torch.save(compiled.state_dict(), buffer)
    buffer.seek(0)
    restored = regression().compile_update(backend=counter).persistent(True)
    restored.load_state_dict(torch.load(buffer, weights_only=True))
    feed(restored, [second])
    feed(eager, [second])
    assert_same_states(restored, eager)
    assert_same_values(restored.compute(), eager.compute())
    # Another rank's (or worker's) state merged into each updated member, then an update.
    other = regression()
    feed(other, [third])
    for group in restored.groups:
        restored[group[0]].merge_state(other[group[0]])
        eager[group[0]].merge_state(other[group[0]])
    feed(restored, [first])
    feed(eager, [first])
    assert_same_states(restored, eager)
    assert_same_values(restored.compute(), eager.compute())
    # One graph per collection; none after reset, load or merge.
    assert counter.frame_count == 2


@pytest.mark.slow
def test_copies_pickles_and_moves_rebuild_the_graph_lazily() -> None:
    first, second = regression_batches((8, 5), seed=4)
    compiled = regression().compile_update(backend="aot_eager")
    feed(compiled, [first])
    eager = regression()
    feed(eager, [first, second])
    copies = (
        copy.deepcopy(compiled),
        pickle.loads(pickle.dumps(compiled)),
        copy.deepcopy(compiled).to("cpu"),
        compiled.clone(prefix="test/"),
    )
    for copied in copies:
        assert copied.update_is_compiled
        assert copied._compiler.run is None  # rebuilt on first use
    for copied in copies[:3]:
        feed(copied, [second])
        assert copied._compiler.run is not None
        # Values first: compute fills derived members' states (and counters) in both.
        assert_same_values(copied.compute(), eager.compute())
        assert_same_states(copied, eager)
    assert int(compiled["mse"].num_updates) == 1  # the original is not touched
    compiled.to("cpu")
    assert compiled._compiler.run is None
    feed(compiled, [second])
    assert_same_values(compiled.compute(), eager.compute())


def test_adding_a_member_after_compiling_rebuilds_the_graph() -> None:
    counter = CompileCounterWithBackend("eager")
    first, second = regression_batches((8, 5), seed=5)
    compiled = MetricCollection([MSEMetric(), R2ScoreMetric()]).compile_update(backend=counter)
    feed(compiled, [first])
    compiled.metrics["mae"] = MAEMetric()
    feed(compiled, [second])
    assert counter.frame_count == 2
    mae, mse = MAEMetric(), MSEMetric()
    mae.update(*second)
    for batch in (first, second):
        mse.update(*batch)
    values = compiled.compute()
    assert float(values["mae"]) == pytest.approx(float(mae.compute()), rel=1e-6)
    assert float(values["mse"]) == pytest.approx(float(mse.compute()), rel=1e-6)


def test_members_compiled_on_their_own_are_inlined_not_nested() -> None:
    own = CompileCounterWithBackend("eager")
    collection_counter = CompileCounterWithBackend("eager")
    members = regression()
    for metric in members.values():
        metric.compile_update(backend=own)
    members.compile_update(backend=collection_counter)
    eager = regression()
    batches = regression_batches()
    feed(members, batches)
    feed(eager, batches)
    assert collection_counter.frame_count == 1
    assert own.frame_count == 0  # no member compiled a graph of its own inside
    assert_same_states(members, eager)
    assert_same_values(members.compute(), eager.compute())
    # Updated alone, a member still uses its own compiled update.
    members["mse"].update(*batches[0])
    eager["mse"].update(*batches[0])
    assert own.frame_count == 1
    assert_same_states(members, eager)


def test_grad_and_no_grad_callers_share_one_graph_and_the_mode_is_restored() -> None:
    counter = CompileCounterWithBackend("eager")
    compiled, eager = regression().compile_update(backend=counter), regression()
    for i, (labels, predictions) in enumerate(regression_batches((6, 9, 7, 5))):
        predictions.requires_grad_(True)  # a model's output, not detached
        with torch.set_grad_enabled(i % 2 == 0):
            compiled.update(labels, predictions)
            eager.update(labels, predictions)
        assert torch.is_grad_enabled()
    assert counter.frame_count == 1
    assert_same_states(compiled, eager)
    assert all(not b.requires_grad for b in compiled.buffers())


def test_the_boundary_stays_eager_lists_and_dtype_work_compiled() -> None:
    compiled = MetricCollection([MSEMetric(), MAEMetric()]).compile_update(backend="aot_eager")
    eager = MetricCollection([MSEMetric(), MAEMetric()])
    for collection in (compiled, eager):
        collection.update([1.0, 2.0, 4.0], [1.5, 2.0, 3.0], dtype=torch.float16)
    got, want = compiled.compute(), eager.compute()
    assert all(v.dtype == torch.float16 for v in got.values())
    assert_same_values(got, want)
    for collection in (compiled, eager):
        collection.update(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 1.0]))
    got = compiled.compute()
    assert all(v.dtype != torch.float16 for v in got.values())  # dtype= cleared
    assert_same_values(got, eager.compute())


def test_argument_errors_are_the_eager_ones_and_compiling_stays_on() -> None:
    compiled = regression().compile_update(backend="eager")
    feed(compiled, regression_batches((4,)))
    with pytest.raises(ValueError) as compiled_error:
        compiled.update(torch.zeros(3), torch.zeros(4))
    with pytest.raises(ValueError) as eager_error:
        regression().update(torch.zeros(3), torch.zeros(4))
    assert str(compiled_error.value) == str(eager_error.value)
    assert compiled.update_is_compiled
    # Every member released its thread claim: an update from another thread works.
    worker = threading.Thread(target=lambda: feed(compiled, regression_batches((4,), seed=1)))
    worker.start()
    worker.join()
    assert int(compiled["mse"].num_updates) == 2


def test_a_collection_that_cannot_compile_falls_back_to_eager_with_one_warning() -> None:
    def make() -> MetricCollection:
        return MetricCollection([WordErrorRateMetric(), WordErrorRateMetric("wer2")])

    compiled, eager = make().compile_update(), make()
    batches = [(["hello world"], ["hello there world"]), (["a b c", "d"], ["a c", "d e"])]
    with pytest.warns(RuntimeWarning, match=r"update cannot be compiled.*runs eagerly"):
        compiled.update(*batches[0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compiled.update(*batches[1])
    for batch in batches:
        eager.update(*batch)
    assert not compiled.update_is_compiled
    assert member_counts(compiled) == member_counts(eager) == {"word_error_rate": 2, "wer2": 2}
    assert_same_values(compiled.compute(), eager.compute())


def test_inside_an_outer_compile_the_update_is_traced_as_usual() -> None:
    collection = regression().compile_update(backend="eager")
    step = torch.compile(collection.update, backend="eager", fullgraph=True)
    eager = regression()
    for labels, predictions in regression_batches((5, 5)):
        step(labels, predictions)
        eager.update(labels, predictions)
    assert collection._compiler is None or collection._compiler.run is None
    assert_same_values(collection.compute(), eager.compute())


def test_switching_off_and_on_reuses_the_graph() -> None:
    counter = CompileCounterWithBackend("eager")
    compiled, eager = regression(), regression()
    for i, batch in enumerate(regression_batches((5, 6, 7, 8, 9))):
        compiled.compile_update(i % 2 == 0, backend=counter)
        assert compiled.update_is_compiled == (i % 2 == 0)
        compiled.update(*batch)
        eager.update(*batch)
    assert counter.frame_count == 1
    assert_same_states(compiled, eager)
    assert compiled.compile_update() is compiled


def test_mixing_compiled_collection_and_eager_member_updates_is_exact_for_a_cat_state() -> None:
    """The graph appends to an exact AUROC's buffer and writes its fill count: an eager append
    after it (which may trust a host note of the fill) must land after those rows, and back."""

    def make() -> MetricCollection:
        return MetricCollection({"auroc": AUROCMetric(capacity=128), "accuracy": AccuracyMetric()})

    g = torch.Generator().manual_seed(7)
    sizes = (9, 4, 11, 6, 3, 8)
    batches = [(torch.randint(0, 2, (n,), generator=g), torch.rand(n, generator=g)) for n in sizes]
    counter = CompileCounterWithBackend("aot_eager")
    mixed, eager = make(), make()
    for i, (labels, scores) in enumerate(batches):
        mixed.compile_update(i % 2 == 0, backend=counter)
        mixed.update(labels, scores)
        eager.update(labels, scores)
        mixed["auroc"].update(labels, 1 - scores)  # a member updated on its own, eagerly
        eager["auroc"].update(labels, 1 - scores)
    assert counter.frame_count == 1
    assert int(mixed["auroc"].cat_state("codes").count) == 2 * sum(sizes)
    assert_same_states(mixed, eager)
    assert_same_values(mixed.compute(), eager.compute())


@pytest.mark.parametrize(
    ("kwargs", "error", "fragment"),
    [
        ({"enabled": 1}, TypeError, "Argument `enabled` must be a bool. Received: enabled=1"),
        ({"fullgraph": False}, ValueError, "Argument `fullgraph` must be True"),
        ({"backnd": "inductor"}, TypeError, "Received: ['backnd']"),
    ],
)
def test_bad_compile_arguments_are_named(
    kwargs: dict[str, Any], error: type[Exception], fragment: str
) -> None:
    with pytest.raises(error, match=re.escape(fragment)):
        regression().compile_update(**kwargs)


def test_a_compiled_collection_is_freed_with_its_graph() -> None:
    import gc
    import weakref

    collection = regression().compile_update(backend="eager")
    feed(collection, regression_batches((4,)))
    alive = weakref.ref(collection)
    members = [weakref.ref(m) for m in collection.values()]
    del collection
    gc.collect()
    assert alive() is None and all(m() is None for m in members)


def _sync_worker(rank: int, world: int) -> tuple[dict[str, Any], dict[str, int], dict[str, int]]:
    """Each gloo rank: compiled and eager updates of its own batches, then `compute` (one sync
    each); the compiled values and both collections' update counters."""
    batches = classification_batches((7, 12, 5, 9), seed=40)[rank::world]
    compiled, eager = six_metrics().compile_update(backend="aot_eager"), six_metrics()
    feed(compiled, batches)
    feed(eager, batches)
    values = compiled.compute()
    eager.compute()
    return values, member_counts(compiled), member_counts(eager)


@pytest.mark.slow
def test_compiled_collections_sync_over_two_gloo_ranks() -> None:
    from torchtally.distributed import run_local_ranks

    results = run_local_ranks(_sync_worker, 2, timeout=240)
    everything = six_metrics()
    feed(everything, classification_batches((7, 12, 5, 9), seed=40))
    expected = everything.compute()
    for values, compiled_counts, eager_counts in results:
        assert_same_values(values, expected)
        assert compiled_counts == eager_counts
        assert compiled_counts["confusion"] == 2  # the local count, restored after the sync


@pytest.mark.slow
def test_batches_across_the_functional_size_thresholds_compile_one_graph() -> None:
    """Some functional updates pick an eager formulation by input size (value checks over
    4096 elements, one shared max pass from 32768 class scores): inside a graph they take one
    branch whatever the size, so batches on both sides of a threshold share one graph."""
    counter = CompileCounterWithBackend("aot_eager")
    eager, compiled = six_metrics(), six_metrics().compile_update(backend=counter)
    batches = classification_batches((64, 100, 1024, 3000, 16384, 5000, 64, 1024))
    feed(eager, batches)
    feed(compiled, batches)
    assert counter.frame_count == 1
    assert_same_values(compiled.compute(), eager.compute())
    assert_same_states(compiled, eager)
