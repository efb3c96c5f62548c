"""Binary binned AUROC off the CPU (issue 26): each score goes to its bin or to a bad-value slot
by one `bucketize` against edges that reproduce the bin rule, each label to one of four kinds,
and compute folds them back. Run here on CPU tensors (the formulation is device-agnostic):
against a numpy count of the documented bin rule (bin = floor((score - low) * num_bins /
(high - low)) clamped, NaN in bin 0, labels > 0 positive), numpy counts of the error kinds,
and `binned_auroc_compute` of the arithmetic histogram, to the bit."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_auc_score

from torchtally.functional.ranking import binned_auroc_compute, binned_auroc_update
from torchtally.functional.ranking._binned_auroc import (
    _FORM_SLOTS,
    add_binned_slots,
    bin_slot_edges,
    binned_slot_auroc,
    binned_slot_errors,
    fold_binned_slots,
    slot_width,
)
from torchtally.metrics import AUROCMetric, MetricValueError
from torchtally.metrics.ranking import _auroc as auroc_module


def _numpy_bins(scores: np.ndarray, num_bins: int, low: float, high: float) -> np.ndarray:
    # in the scores' precision (float32 scores scale in float32, as torch does)
    kind = scores.dtype.type
    scale = kind(num_bins / (high - low))
    with np.errstate(invalid="ignore", over="ignore"):
        scaled = (scores - kind(low)) * scale if low else scores * scale
    scaled = np.nan_to_num(scaled, nan=0.0)
    return np.floor(np.clip(scaled, 0, num_bins - 1)).astype(np.int64)


def _slots(labels: torch.Tensor, scores: torch.Tensor, num_bins: int, low: float, high: float):
    dtype = torch.float64 if scores.dtype == torch.float64 else torch.float32
    edges = bin_slot_edges(num_bins, low, high, dtype)
    assert edges is not None
    histogram = torch.zeros(1, 4, slot_width(num_bins), dtype=torch.float64)
    kinds = torch.tensor([0.0, 1.0, 2.0], dtype=torch.float64)
    invalid = add_binned_slots(labels, scores, edges, kinds, histogram.view(-1), num_bins)
    return histogram, invalid


@settings(max_examples=120, deadline=None)
@given(
    n=st.integers(1, 600),
    num_bins=st.integers(1, 60),
    low_high=st.sampled_from([(0.0, 1.0), (-1.0, 1.0), (-0.8, 2.5), (0.0, 3.0), (0.1, 0.35)]),
    label_kind=st.sampled_from(["int", "bool", "float", "wild", "uint8"]),
    dtype=st.sampled_from([torch.float32, torch.float64, torch.float16]),
    seed=st.integers(0, 2**31 - 1),
)
def test_slots_fold_to_the_bin_rule_and_count_each_error(
    n: int,
    num_bins: int,
    low_high: tuple[float, float],
    label_kind: str,
    dtype: torch.dtype,
    seed: int,
) -> None:
    g = torch.Generator().manual_seed(seed)
    low, high = low_high
    # coarse scores (many on bin edges), some outside the range and some non-finite
    scores = (torch.randint(-3, 24, (n,), generator=g).double() / 20) * (high - low) + low
    specials = torch.tensor([math.nan, math.inf, -math.inf, 3e38, -3e38], dtype=torch.float64)
    pick = torch.rand(n, generator=g) < 0.08
    scores = torch.where(pick, specials[torch.randint(0, 5, (n,), generator=g)], scores)
    scores = scores.to(dtype)
    raw = torch.randint(-1, 3, (n,), generator=g)  # -1 and 2: invalid, positive iff > 0
    labels = {
        "int": raw,
        "bool": raw > 0,
        "float": raw.double() * 0.75,
        "wild": raw * 50,
        "uint8": (raw * 100).clamp(min=0).to(torch.uint8),
    }[label_kind]
    histogram, invalid_in_update = _slots(labels, scores, num_bins, low, high)
    as_numpy = scores.numpy() if dtype == torch.float64 else scores.float().numpy()
    y = labels.double().numpy()
    expected = np.zeros((1, 2, num_bins))
    np.add.at(
        expected[0], ((y > 0).astype(np.int64), _numpy_bins(as_numpy, num_bins, low, high)), 1
    )
    folded = fold_binned_slots(histogram, num_bins)
    np.testing.assert_array_equal(folded.numpy(), expected)
    # the arithmetic path's histogram and value, to the bit
    arithmetic = binned_auroc_update(labels, scores, num_bins, (low, high))
    assert torch.equal(folded, arithmetic)
    value, reference = binned_slot_auroc(histogram, num_bins), binned_auroc_compute(arithmetic)
    assert torch.equal(value, reference) or (value.isnan() and reference.isnan())
    # each error kind counted as the update-time checks count it
    with np.errstate(invalid="ignore"):
        outside = int(
            (
                (as_numpy < np.float32(low) if dtype != torch.float64 else as_numpy < low)
                | (as_numpy > (np.float32(high) if dtype != torch.float64 else high))
            ).sum()
        )
    nonfinite = int((~np.isfinite(as_numpy)).sum())
    invalid = int(((y != 0) & (y != 1)).sum())
    counts = binned_slot_errors(histogram, num_bins).tolist()
    if label_kind == "float":  # a float label has no kind of its own: counted in update
        assert invalid_in_update is not None and int(invalid_in_update) == invalid
        invalid = 0
    else:
        assert invalid_in_update is None
    assert counts == [invalid, nonfinite, outside]


@pytest.mark.parametrize("num_bins", [1, 7, 200, _FORM_SLOTS - 4, _FORM_SLOTS + 10, 3000])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_slot_value_equals_the_folded_histogram_value_on_both_formulas(
    num_bins: int, dtype: torch.dtype
) -> None:
    g = torch.Generator().manual_seed(num_bins)
    scores = (torch.rand(5000, generator=g, dtype=torch.float64) * 1.2 - 0.1).to(dtype)
    scores[::101] = math.nan
    scores[3::211] = -math.inf
    labels = torch.randint(0, 2, (5000,), generator=g)
    histogram, _ = _slots(labels, scores, num_bins, 0.0, 1.0)
    value = binned_slot_auroc(histogram, num_bins)
    assert torch.equal(value, binned_auroc_compute(fold_binned_slots(histogram, num_bins)))
    clean = torch.isfinite(scores) & (scores >= 0) & (scores <= 1)
    if num_bins == 3000:  # fine bins: near the exact AUROC of the clean samples
        histogram, _ = _slots(labels[clean], scores[clean], num_bins, 0.0, 1.0)
        exact = roc_auc_score(labels[clean].numpy(), scores[clean].double().numpy())
        assert float(binned_slot_auroc(histogram, num_bins)) == pytest.approx(exact, abs=1e-3)


def test_edges_are_refused_where_the_rule_cannot_be_reproduced() -> None:
    assert bin_slot_edges(10, 0.0, 1e39, torch.float32) is None  # high overflows float32
    assert bin_slot_edges(10, 0.0, 1e39, torch.float64) is not None
    assert bin_slot_edges(4, 0.0, 1.0, torch.float32) is not None


def test_the_metric_on_cpu_raises_and_values_as_the_slot_path_counts() -> None:
    # the CPU keeps the arithmetic path (bucketize's binary search is slower there): its
    # value and error message equal the slot path's on the same inputs
    labels = torch.tensor([0, 1, 1, 0, 2, -1, 1, 0])
    scores = torch.tensor([0.1, 0.9, math.nan, -0.5, 0.3, 0.7, math.inf, 1.5])
    metric = AUROCMetric(num_bins=10)
    metric.update(labels, scores)
    histogram, _ = _slots(labels, scores, 10, 0.0, 1.0)
    assert torch.equal(metric.binned_histogram(), fold_binned_slots(histogram, 10))
    with pytest.raises(MetricValueError) as raised:
        metric.compute()
    invalid, nonfinite, outside = binned_slot_errors(histogram, 10).tolist()
    assert (invalid, nonfinite, outside) == (2, 2, 3)
    assert "invalid labels (2 values); non-finite predictions (2 values); " in str(raised.value)
    assert "predictions outside score_range (3 values)" in str(raised.value)


@pytest.fixture
def slot_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Binary binned AUROC takes the slot path (its off-CPU update) on the CPU."""
    monkeypatch.setattr(auroc_module, "arithmetic_bins", lambda histogram: False)


def _batches(seed: int, sizes: tuple[int, ...]) -> list[tuple[torch.Tensor, torch.Tensor]]:
    g = torch.Generator().manual_seed(seed)
    out = []
    for n in sizes:
        labels = torch.randint(0, 2, (n,), generator=g)
        scores = (torch.rand(n, generator=g) * 20).round() / 20  # ties, the range's ends
        out.append((labels, scores))
    return out


def test_the_slot_path_metric_equals_the_arithmetic_metric(slot_path: None) -> None:
    batches = _batches(1, (30, 0, 17, 64))
    slots, arithmetic = AUROCMetric(num_bins=16), AUROCMetric(num_bins=16)
    for labels, scores in batches:
        slots.update(labels, scores)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(auroc_module, "arithmetic_bins", lambda histogram: True)
        for labels, scores in batches:
            arithmetic.update(labels, scores)
    assert not torch.equal(slots.histogram, torch.zeros_like(slots.histogram))
    assert torch.equal(slots.binned_histogram(), arithmetic.binned_histogram())
    assert torch.equal(slots.compute(), arithmetic.compute())
    assert torch.equal(slots.error_bound(), arithmetic.error_bound())
    # merged, and through a checkpoint, with the arithmetic path's state
    merged = AUROCMetric(num_bins=16).merge_state([slots, arithmetic])
    twice = torch.cat([torch.cat([b[0] for b in batches])] * 2)
    reference = binned_auroc_update(twice, torch.cat([torch.cat([b[1] for b in batches])] * 2), 16)
    assert torch.equal(merged.binned_histogram(), reference)
    restored = AUROCMetric(num_bins=16).persistent(True)
    restored.load_state_dict(slots.persistent(True).state_dict())
    assert torch.equal(restored.compute(), arithmetic.compute())


def test_the_slot_path_metric_raises_what_the_arithmetic_path_raises(slot_path: None) -> None:
    bad = [
        (torch.tensor([0, 2, 1]), torch.tensor([0.1, 0.2, 0.3])),
        (torch.tensor([0, 1]), torch.tensor([math.nan, 0.3])),
        (torch.tensor([0, 1, 1]), torch.tensor([-0.5, 1.0, 1.5])),
        (torch.tensor([0.0, 0.5, 1.0]), torch.tensor([0.1, math.inf, 0.3])),  # float labels
    ]
    for labels, scores in bad:
        messages = []
        for arithmetic in (False, True):
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(auroc_module, "arithmetic_bins", lambda _, a=arithmetic: a)
                metric = AUROCMetric(num_bins=8)
                metric.update(labels, scores)
            with pytest.raises(MetricValueError) as raised:
                metric.compute()
            messages.append(str(raised.value))
        assert messages[0] == messages[1]
    unchecked = AUROCMetric(num_bins=8, check_values=False)
    unchecked.update(torch.tensor([0, 2, 1, -1]), torch.tensor([0.1, math.nan, 0.9, 1.5]))
    reference = binned_auroc_update(
        torch.tensor([0, 2, 1, -1]), torch.tensor([0.1, math.nan, 0.9, 1.5]), 8
    )
    assert torch.equal(unchecked.compute(), binned_auroc_compute(reference))


def test_a_checkpoint_of_the_former_binary_layout_loads(slot_path: None) -> None:
    labels, scores = _batches(2, (50,))[0]
    histogram = binned_auroc_update(labels, scores, 12)
    metric = AUROCMetric(num_bins=12).persistent(True)
    state = metric.state_dict()
    state["histogram"] = histogram  # (1, 2, 12), as saved before the slots
    metric.load_state_dict(state)
    assert torch.equal(metric.binned_histogram(), histogram)
    assert torch.equal(metric.compute(), binned_auroc_compute(histogram))


@pytest.mark.slow
def test_the_slot_path_compiled_equals_eager(slot_path: None) -> None:
    batches = _batches(3, (9, 4, 11, 6))
    eager = AUROCMetric(num_bins=10)
    compiled = AUROCMetric(num_bins=10).compile_update(backend="aot_eager")
    for labels, scores in batches:
        eager.update(labels, scores)
        compiled.update(labels, scores)
    assert torch.equal(compiled.histogram, eager.histogram)
    assert torch.equal(compiled.compute(), eager.compute())
