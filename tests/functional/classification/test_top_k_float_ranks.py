"""Top-k accuracy's eager CPU ranks (float masks, a cached table, blocks; issue 16) against
independent oracles: scikit-learn's `top_k_accuracy_score` on tie-heavy scores, and a plain
Python count of the documented rule (higher score first, then higher index) for non-finite
scores, which scikit-learn refuses."""

from __future__ import annotations

import math
import threading
import warnings
from collections import OrderedDict

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.exceptions import UndefinedMetricWarning
from sklearn.metrics import top_k_accuracy_score

from torchtally._errors import MetricValueError
from torchtally.functional.classification import _top_k_accuracy as top_k_module
from torchtally.functional.classification._top_k_accuracy import top_k_accuracy
from torchtally.metrics import TopKAccuracyMetric


def _rule_hits(labels: list[int], scores: list[list[float]], k: int) -> int:
    """Labels in [0, C) whose rank (classes scoring higher, or equal with a higher index;
    NaN never ranks ahead) is below k."""
    hits = 0
    for label, row in zip(labels, scores, strict=True):
        if not 0 <= label < len(row):
            continue
        mine = row[label]
        rank = sum(
            1
            for j, value in enumerate(row)
            if value > mine or (value == mine and j > label)  # NaN compares false
        )
        hits += rank < k
    return hits


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    # float ranks from 64 scores, in blocks of 700 scores (ragged last block)
    monkeypatch.setattr(top_k_module, "_FLOAT_RANKS_FROM", 64)
    monkeypatch.setattr(top_k_module, "_SHORT_FLOAT_RANKS_FROM", 64)
    monkeypatch.setattr(top_k_module, "_BLOCK_FROM", 2000)
    monkeypatch.setattr(top_k_module, "_BLOCK", 700)


# the fixture only patches constants, the same for every example
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    rows=st.integers(1, 120),
    classes=st.integers(3, 40),  # scikit-learn refuses 2-column scores with binary labels
    levels=st.integers(1, 5),
    k=st.integers(1, 8),
    dtype=st.sampled_from([torch.float32, torch.float64, torch.float16]),
    seed=st.integers(0, 2**31 - 1),
)
def test_float_ranks_match_sklearn_with_ties(
    small_blocks: None, rows: int, classes: int, levels: int, k: int, dtype: torch.dtype, seed: int
) -> None:
    g = torch.Generator().manual_seed(seed)
    # few score levels: many ties, broken as scikit-learn breaks them (higher index first)
    scores = torch.randint(0, levels, (rows, classes), generator=g).to(dtype)
    labels = torch.randint(0, classes, (rows,), generator=g)
    with warnings.catch_warnings():  # k >= classes: scikit-learn warns that all hit
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        expected = top_k_accuracy_score(
            labels.numpy(), scores.double().numpy(), k=k, labels=np.arange(classes)
        )
    assert float(top_k_accuracy(labels, scores, k=k)) == pytest.approx(expected, abs=1e-12)
    metric = TopKAccuracyMetric(k)
    half = rows // 2
    metric.update(labels[:half], scores[:half])
    metric.update(labels[half:], scores[half:])
    assert float(metric.compute()) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("classes", [5, 17])  # short rows (label scores spread out), long rows
def test_float_ranks_follow_the_rule_for_non_finite_scores_and_bad_labels(
    small_blocks: None, classes: int
) -> None:
    g = torch.Generator().manual_seed(5)
    rows = 300
    specials = torch.tensor([math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0])
    scores = specials[torch.randint(0, 6, (rows, classes), generator=g)]
    labels = torch.randint(-2, classes + 2, (rows,), generator=g)  # some outside [0, C)
    for k in (1, 4, classes - 1, classes):
        metric = TopKAccuracyMetric(k, check_values=False)
        metric.update(labels, scores)
        valid = int(((labels >= 0) & (labels < classes)).sum())
        expected = _rule_hits(labels.tolist(), scores.tolist(), k) / valid
        assert float(metric.compute()) == pytest.approx(expected, abs=1e-12)
        # the weighted path shares the ranks
        weights = torch.ones(rows, dtype=torch.float64)
        got = top_k_accuracy(labels, scores, k=k, weights=weights)
        assert float(got) == pytest.approx(expected, abs=1e-12)


def test_float_ranks_in_blocks_and_batch_shapes(small_blocks: None) -> None:
    g = torch.Generator().manual_seed(6)
    labels = torch.randint(0, 20, (9, 41), generator=g)  # (9, 41) samples, 20 classes
    scores = torch.randint(0, 3, (9, 41, 20), generator=g).float()
    expected = _rule_hits(labels.view(-1).tolist(), scores.view(-1, 20).tolist(), 3) / 369
    assert float(top_k_accuracy(labels, scores, k=3)) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("rows", [40, 300])  # one piece; blocks of 700 scores
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
@pytest.mark.parametrize("classes", [5, 23])  # short rows (spread, class table), long rows
def test_float_ranks_count_samples_with_non_finite_scores_and_bad_labels(
    small_blocks: None, rows: int, dtype: torch.dtype, classes: int
) -> None:
    g = torch.Generator().manual_seed(7)
    scores = torch.randn(rows, classes, generator=g).to(dtype)
    flat = scores.view(-1)
    picks = torch.randperm(flat.numel(), generator=g)[:37]
    for i, where in enumerate(picks.tolist()):
        flat[where] = (math.nan, math.inf, -math.inf)[i % 3]
    scores[3, :5] = math.nan  # several in one sample: it counts once
    labels = torch.randint(-1, classes + 1, (rows,), generator=g)
    metric = TopKAccuracyMetric(5)
    metric.update(labels, scores)
    outside = int(((labels < 0) | (labels >= classes)).sum())
    # the samples whose ranking has a NaN or an infinite score in it
    nonfinite = int((~np.isfinite(scores.double().numpy())).any(axis=-1).sum())
    with pytest.raises(MetricValueError) as raised:
        metric.compute()
    message = str(raised.value)
    assert f"labels outside [0, num_classes) ({outside} values)" in message
    assert f"non-finite predictions ({nonfinite} values)" in message


def test_float_ranks_take_scores_that_require_grad(small_blocks: None) -> None:
    # model outputs passed without detach: the float masks and counts write into buffers
    g = torch.Generator().manual_seed(8)
    scores = torch.randint(0, 3, (300, 20), generator=g).float().requires_grad_()
    labels = torch.randint(0, 20, (300,), generator=g)
    metric = TopKAccuracyMetric(2)
    metric.update(labels, scores)
    expected = _rule_hits(labels.tolist(), scores.tolist(), 2) / 300
    assert float(metric.compute()) == pytest.approx(expected, abs=1e-12)


def test_functional_tallies_take_scores_that_require_grad(small_blocks: None) -> None:
    # the unweighted counts (the metric's path, also public) write into float buffers with
    # out= ops, which refuse tensors that require grad unless detached first
    g = torch.Generator().manual_seed(9)
    scores = torch.randint(0, 3, (300, 20), generator=g).float().requires_grad_()
    labels = torch.randint(-1, 21, (300,), generator=g)
    outside, total, hits, nonfinite = top_k_module.top_k_accuracy_tallies(labels, scores, 2, True)
    valid = sum(0 <= x < 20 for x in labels.tolist())
    expected = _rule_hits(labels.tolist(), scores.tolist(), 2)  # it skips labels outside
    assert (int(hits), int(total)) == (expected, valid)
    assert (int(outside), int(nonfinite)) == (300 - valid, 0)


@pytest.mark.parametrize(
    ("rows", "classes"),
    # one piece (long, short rows); two even blocks (550 rows); blocks of at most 2^16 scores
    # (long rows, short rows)
    [(700, 100), (2000, 12), (1100, 90), (9000, 64), (12000, 12)],
)
@pytest.mark.parametrize("column_major", [False, True])  # a transposed view: strided rows
def test_float_ranks_at_the_default_sizes_match_sklearn(
    rows: int, classes: int, column_major: bool
) -> None:
    # the real size switches (no patched constants): ties at every score level
    g = torch.Generator().manual_seed(rows)
    if column_major:
        scores = torch.randint(0, 4, (classes, rows), generator=g).float().t()
    else:
        scores = torch.randint(0, 4, (rows, classes), generator=g).float()
    labels = torch.randint(0, classes, (rows,), generator=g)
    expected = top_k_accuracy_score(
        labels.numpy(), scores.double().numpy(), k=5, labels=np.arange(classes)
    )
    metric = TopKAccuracyMetric(5)
    metric.update(labels, scores)
    assert float(metric.compute()) == pytest.approx(expected, abs=1e-12)
    assert float(top_k_accuracy(labels, scores, k=5)) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("classes", [5, 17])  # short rows (label scores spread out), long rows
def test_float_ranks_keep_float64_scores_apart_that_float32_would_tie(
    small_blocks: None, classes: int
) -> None:
    # 1 + j * 1e-12 are distinct in float64 and all 1.0 in float32: a label score rounded to
    # float32 would tie with every class and rank by index instead of by score
    g = torch.Generator().manual_seed(9)
    rows = 300
    steps = torch.stack([torch.randperm(classes, generator=g) for _ in range(rows)])
    scores = 1.0 + steps.to(torch.float64) * 1e-12
    labels = torch.randint(0, classes, (rows,), generator=g)
    for k in (1, 3):
        expected = _rule_hits(labels.tolist(), scores.tolist(), k) / rows
        metric = TopKAccuracyMetric(k)
        metric.update(labels, scores)
        assert float(metric.compute()) == pytest.approx(expected, abs=1e-12)


def test_float_ranks_of_subnormal_scores(small_blocks: None) -> None:
    # the short-row spread is an outer product with ones: subnormal scores stay themselves
    g = torch.Generator().manual_seed(10)
    rows, classes = 200, 6
    scores = torch.randint(1, 5, (rows, classes), generator=g).float() * 1e-45
    labels = torch.randint(0, classes, (rows,), generator=g)
    expected = _rule_hits(labels.tolist(), scores.tolist(), 2) / rows
    metric = TopKAccuracyMetric(2)
    metric.update(labels, scores)
    assert float(metric.compute()) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("check_values", [True, False])
@pytest.mark.parametrize("classes", [5, 23])  # short rows, long rows
def test_metric_tallies_count_hits_of_valid_labels_and_each_error(
    small_blocks: None, check_values: bool, classes: int
) -> None:
    # the metric adds the eager counts with one index_add_: each lands in its own slot
    g = torch.Generator().manual_seed(10)
    rows = 300
    scores = torch.randint(0, 3, (rows, classes), generator=g).float()
    scores[7, 2] = math.nan
    scores[11, 0] = -math.inf
    labels = torch.randint(-2, classes + 2, (rows,), generator=g)
    metric = TopKAccuracyMetric(3, check_values=check_values)
    metric.update(labels, scores)
    metric.update(labels[:100], scores[:100])
    both = (torch.cat([labels, labels[:100]]), torch.cat([scores, scores[:100]]))
    inside = sum(0 <= x < classes for x in both[0].tolist())
    finite = torch.isfinite(both[1]).all(-1).tolist()
    # with value checks a sample with a non-finite score is no hit (compute raises for it)
    ranked = [i for i, ok in enumerate(finite) if ok or not check_values]
    expected_hits = _rule_hits(both[0][ranked].tolist(), both[1][ranked].tolist(), 3)
    assert (float(metric.hits), float(metric.total)) == (expected_hits, inside)
    nonfinite = finite.count(False)
    errors = metric._errors.tolist()
    if check_values:
        assert errors == [len(both[0]) - inside, nonfinite, 0, 0]
    else:
        assert errors == [0, 0, 0, 0]


@pytest.mark.parametrize("eager_cpu", [True, False])
def test_tallies_are_the_counts_in_their_documented_order(
    small_blocks: None, monkeypatch: pytest.MonkeyPatch, eager_cpu: bool
) -> None:
    # the same counts whether the float ranks run (eager CPU) or the bool form (compiled,
    # traced, another device), against the rule counted in Python
    if not eager_cpu:
        monkeypatch.setattr(top_k_module, "_eager_cpu", lambda *_: False)
    g = torch.Generator().manual_seed(11)
    scores = torch.randint(0, 3, (200, 9), generator=g).float()
    scores[4, 4] = math.inf
    scores[9, 0] = math.nan
    labels = torch.randint(-1, 10, (200,), generator=g)
    # (with value checks, whether a sample with a non-finite score is a hit is left to the
    # path: compute raises for it; here those samples name no class, so neither counts them)
    labels[4], labels[9] = -1, 9
    tallies = top_k_module.top_k_accuracy_tallies(labels, scores, 2, True)
    unchecked = top_k_module.top_k_accuracy_tallies(labels, scores, 2, False)
    assert tallies.dtype == unchecked.dtype == torch.float64
    inside = sum(0 <= x < 9 for x in labels.tolist())
    hits = _rule_hits(labels.tolist(), scores.tolist(), 2)  # it skips labels outside
    assert tallies.tolist() == [200 - inside, inside, hits, 2]
    assert unchecked.tolist() == [inside, hits]


def test_row_sums_of_more_ones_than_float32_counts_exactly() -> None:
    # past 2**24 a float32 running sum of ones stops growing; the pieces keep it exact
    ones = torch.ones(2, (1 << 24) + 3)
    ones[1, :5] = 0
    assert top_k_module._exact_row_sums(ones).tolist() == [(1 << 24) + 3, (1 << 24) - 2]


def test_row_sums_in_pieces_match_one_sum(monkeypatch: pytest.MonkeyPatch) -> None:
    g = torch.Generator().manual_seed(12)
    table = torch.randint(0, 2, (4, 1000), generator=g).float()
    whole = top_k_module._exact_row_sums(table)
    monkeypatch.setattr(top_k_module, "_EXACT_FLOAT32_ROWS", 64)  # 16 pieces, a ragged last
    assert torch.equal(top_k_module._exact_row_sums(table), whole)
    assert whole.tolist() == table.sum(1).tolist()


def _kept_plans() -> list[tuple[object, ...]]:
    return list(top_k_module._LOCAL.__dict__.get("plans", {}))


def test_batches_past_the_reuse_cap_are_not_kept(
    small_blocks: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a plan of a large batch is made per call: plans kept at the largest batch ever seen
    # would hold that memory for good
    g = torch.Generator().manual_seed(13)
    small = torch.randint(0, 3, (40, 20), generator=g).float()
    small_labels = torch.randint(0, 20, (40,), generator=g)
    top_k_module.top_k_accuracy_tallies(small_labels, small, 2, True)
    before = _kept_plans()
    assert any(key[:3] == (40, 20, torch.float32) for key in before)
    monkeypatch.setattr(top_k_module, "_KEPT_ROWS", 200)
    scores = torch.randint(0, 3, (300, 20), generator=g).float()
    labels = torch.randint(0, 20, (300,), generator=g)
    fresh = TopKAccuracyMetric(2).coalesce_updates(False)
    fresh.update(labels, scores)
    assert _kept_plans() == before
    assert float(fresh.hits) == _rule_hits(labels.tolist(), scores.tolist(), 2)


# the fixture only patches constants, the same for every example
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    shapes=st.lists(
        st.tuples(
            st.integers(1, 90),
            st.integers(3, 24),  # short rows (< 16 classes) and long ones
            st.sampled_from([torch.float32, torch.float64, torch.float16]),
        ),
        min_size=1,
        max_size=12,
    ),
    check_values=st.booleans(),
    seed=st.integers(0, 2**31 - 1),
)
def test_kept_plans_count_every_shape_sequence_as_a_fresh_call(
    small_blocks: None,
    shapes: list[tuple[int, int, torch.dtype]],
    check_values: bool,
    seed: int,
) -> None:
    # Batches of shapes coming back after others (more shapes or rows than the plans kept, so
    # some are evicted and made again), against the rule counted in Python: a kept plan
    # carries nothing from one call to the next.
    g = torch.Generator().manual_seed(seed)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(top_k_module, "_KEPT_ROWS", 150)
        patch.setattr(top_k_module._LOCAL, "plans", OrderedDict())  # none from other tests
        for rows, classes, dtype in shapes:
            scores = torch.randint(0, 3, (rows, classes), generator=g).to(dtype)
            labels = torch.randint(-1, classes + 1, (rows,), generator=g)
            tallies = top_k_module.top_k_accuracy_tallies(labels, scores, 2, check_values)
            inside = sum(0 <= x < classes for x in labels.tolist())
            counts = [inside, _rule_hits(labels.tolist(), scores.tolist(), 2)]
            assert tallies.tolist() == ([rows - inside, *counts, 0] if check_values else counts)
            kept = _kept_plans()
            if rows * classes >= top_k_module._float_ranks_from(classes):  # the float path
                assert kept[-1][:3] == (rows, classes, dtype)  # the newest is kept
            assert len(kept) <= top_k_module._PLANS_KEPT
            assert sum(int(str(key[0])) for key in kept) <= 150


def test_threads_rank_with_their_own_plans(small_blocks: None) -> None:
    # every thread ranks batches of the same shape at once: a shared plan would mix them
    g = torch.Generator().manual_seed(14)
    batches = [
        (torch.randint(0, 30, (120,), generator=g), torch.randint(0, 3, (120, 30), generator=g))
        for _ in range(4)
    ]
    expected = [_rule_hits(y.tolist(), s.tolist(), 3) for y, s in batches]
    results: dict[int, list[float]] = {}
    start = threading.Barrier(len(batches))

    def work(i: int) -> None:
        labels, scores = batches[i]
        start.wait()
        results[i] = [
            float(top_k_module.top_k_accuracy_tallies(labels, scores.float(), 3, True)[2])
            for _ in range(50)
        ]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(batches))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == list(range(len(batches)))
    for i, hits in results.items():
        assert hits == [expected[i]] * 50


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    classes=st.integers(3, 20),
    k=st.integers(1, 6),
    check_values=st.booleans(),
    sizes=st.lists(st.integers(1, 60), min_size=1, max_size=8),
    seed=st.integers(0, 2**31 - 1),
)
def test_held_direct_and_bool_path_states_agree(
    small_blocks: None, classes: int, k: int, check_values: bool, sizes: list[int], seed: int
) -> None:
    # The float ranks with their one-table counts (held batches flushed together, or each batch
    # directly) against the bool form that compiled and traced updates take, state for state.
    # Non-finite scores only without value checks: with them, such a sample's hit is left to
    # the path (compute raises for it).
    g = torch.Generator().manual_seed(seed)
    batches = []
    for n in sizes:
        scores = torch.randint(0, 3, (n, classes), generator=g).float()
        if not check_values:
            specials = torch.tensor([math.nan, math.inf, -math.inf])
            where = torch.rand(n, classes, generator=g) < 0.05
            scores = torch.where(
                where, specials[torch.randint(0, 3, (n, classes), generator=g)], scores
            )
        batches.append((torch.randint(-1, classes + 1, (n,), generator=g), scores))

    def states(bool_path: bool) -> list[torch.Tensor]:
        with pytest.MonkeyPatch.context() as patch:
            if bool_path:
                patch.setattr(top_k_module, "_eager_cpu", lambda *_: False)
            held = TopKAccuracyMetric(k, check_values=check_values)
            direct = TopKAccuracyMetric(k, check_values=check_values).coalesce_updates(False)
            for labels, scores in batches:
                held.update(labels, scores)
                direct.update(labels, scores)
            return [held.counts.clone(), direct.counts.clone()]

    held, direct = states(bool_path=False)
    reference = states(bool_path=True)[1]
    assert torch.equal(held, reference) and torch.equal(direct, reference)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    classes=st.integers(3, 20),
    calls=st.lists(
        st.tuples(st.integers(1, 60), st.integers(1, 6), st.booleans()), min_size=1, max_size=8
    ),
    seed=st.integers(0, 2**31 - 1),
)
def test_settings_changed_between_calls_count_as_the_bool_path(
    small_blocks: None, classes: int, calls: list[tuple[int, int, bool]], seed: int
) -> None:
    # `k` and `check_values` set on the metric between updates: the eager CPU path (tested
    # first in `update`, with its own slot constants) reads them on every call as the bool
    # form does. Finite scores: with value checks a non-finite sample's hit is left to the path.
    g = torch.Generator().manual_seed(seed)
    batches = [
        (
            torch.randint(-1, classes + 1, (n,), generator=g),
            torch.randint(0, 3, (n, classes), generator=g).float(),
            k,
            check_values,
        )
        for n, k, check_values in calls
    ]

    def state(bool_path: bool) -> torch.Tensor:
        with pytest.MonkeyPatch.context() as patch:
            if bool_path:
                patch.setattr(top_k_module, "_eager_cpu", lambda *_: False)
            metric = TopKAccuracyMetric(1).coalesce_updates(False)
            for labels, scores, k, check_values in batches:
                metric.k, metric.check_values = k, check_values
                metric.update(labels, scores)
            return metric.counts.clone()

    assert torch.equal(state(bool_path=False), state(bool_path=True))


def test_under_a_dispatch_mode_the_update_takes_the_general_path(small_blocks: None) -> None:
    # Under a mode (a profiler's, an op counter's, a fake one) the update leaves the eager CPU
    # path's first test, with its plain CPU slot constants, to the general path, whose
    # constants are made for the mode (`device_constant`); the counts are the same.
    from torch.utils._python_dispatch import TorchDispatchMode

    class Recording(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.ops: list[str] = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            self.ops.append(str(func))
            return func(*args, **(kwargs or {}))

    g = torch.Generator().manual_seed(12)
    labels = torch.randint(-1, 8, (300,), generator=g)
    scores = torch.randint(0, 3, (300, 7), generator=g).float()
    plain = TopKAccuracyMetric(2).coalesce_updates(False)
    plain.update(labels, scores)
    inspected = TopKAccuracyMetric(2).coalesce_updates(False)
    with Recording() as mode:
        assert top_k_module.top_k_accuracy_cpu_tallies(labels, scores, 2, True) is None
        inspected.update(labels, scores)
    assert torch.equal(inspected.counts, plain.counts)
    assert any("index_add" in op for op in mode.ops)  # the update ran under the mode
    assert top_k_module.top_k_accuracy_cpu_tallies(labels, scores, 2, True) is not None
