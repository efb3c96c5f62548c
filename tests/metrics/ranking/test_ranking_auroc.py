"""AUROCMetric against scikit-learn's `roc_auc_score`: exact mode to round-off, binned mode
within its stated bound, accumulated over random batch splits."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_auc_score

from torchtally._errors import MetricValueError
from torchtally.functional.ranking import bits_to_keys_
from torchtally.metrics.ranking import AUROCMetric
from torchtally.metrics.ranking._auroc import DEFAULT_CAPACITY


@st.composite
def binary_data(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """Labels with both classes, scores that are often tied, and batch cut points."""
    n = draw(st.integers(2, 120))
    labels = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    negative = draw(st.integers(0, n - 1))
    labels[negative] = 0
    labels[(negative + draw(st.integers(1, n - 1))) % n] = 1
    grid = draw(st.sampled_from([None, 3, 10, 1000]))  # None: continuous scores
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    if grid is None:
        scores = rng.normal(size=n) * 10.0 ** draw(st.integers(-3, 3))
    else:
        scores = rng.integers(-grid, grid + 1, size=n) / grid  # ties, and -0.0 vs 0.0 below
        scores[scores == 0] *= rng.choice([-1.0, 1.0], size=int((scores == 0).sum()))
    cuts = sorted(draw(st.lists(st.integers(0, n), max_size=4)))
    return labels, scores, cuts


def _accumulate(metric: AUROCMetric, labels: np.ndarray, scores: np.ndarray, cuts: list[int]):
    bounds = [0, *cuts, len(labels)]
    for a, b in itertools.pairwise(bounds):
        metric.update(torch.as_tensor(labels[a:b]), torch.as_tensor(scores[a:b]))
    return metric.compute()


@settings(max_examples=60, deadline=None)
@given(data=binary_data())
def test_exact_binary_matches_sklearn_in_float64(data) -> None:
    labels, scores, cuts = data
    metric = AUROCMetric(capacity=128, dtype=torch.float64)
    got = _accumulate(metric, labels, scores, cuts)
    assert got.dtype == torch.float64
    assert float(got) == pytest.approx(roc_auc_score(labels, scores), rel=1e-9, abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(data=binary_data())
def test_exact_binary_matches_sklearn_in_float32(data) -> None:
    labels, scores, cuts = data
    scores32 = scores.astype(np.float32)
    got = _accumulate(AUROCMetric(capacity=128), labels, scores32, cuts)
    expected = roc_auc_score(labels, scores32.astype(np.float64))
    assert float(got) == pytest.approx(expected, rel=1e-5, abs=1e-9)


@st.composite
def multiclass_data(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, list[int]]:
    classes = draw(st.integers(2, 5))
    n = draw(st.integers(classes, 90))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    labels = np.concatenate([np.arange(classes), rng.integers(0, classes, n - classes)])
    rng.shuffle(labels)
    logits = rng.normal(size=(n, classes))
    if draw(st.booleans()):
        logits = np.round(logits)  # ties within each class column
    logits[np.arange(n), labels] += draw(st.floats(0.0, 2.0))
    cuts = sorted(draw(st.lists(st.integers(0, n), max_size=3)))
    return labels, logits, cuts


def _sklearn_ovr_macro(labels: np.ndarray, probabilities: np.ndarray) -> float:
    if probabilities.shape[1] == 2:  # sklearn scores two classes as binary: average by hand
        return float(np.mean([roc_auc_score(labels == c, probabilities[:, c]) for c in (0, 1)]))
    return roc_auc_score(labels, probabilities, multi_class="ovr", average="macro")


@settings(max_examples=40, deadline=None)
@given(data=multiclass_data())
def test_exact_multiclass_probabilities_match_sklearn_ovr_macro(data) -> None:
    labels, logits, cuts = data
    classes = logits.shape[1]
    probabilities = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    metric = AUROCMetric(classes, capacity=96, dtype=torch.float64)
    got = _accumulate(metric, labels, probabilities, cuts)
    assert float(got) == pytest.approx(_sklearn_ovr_macro(labels, probabilities), rel=1e-9)


@settings(max_examples=30, deadline=None)
@given(data=multiclass_data())
def test_exact_multiclass_logits_match_per_class_sklearn(data) -> None:
    """Logits are ranked per class as given (sklearn's multiclass path insists on
    probabilities, so the oracle is its binary AUROC of each class against the rest)."""
    labels, logits, cuts = data
    classes = logits.shape[1]
    logits32 = logits.astype(np.float32)
    metric = AUROCMetric(classes, capacity=96, average="none")
    got = _accumulate(metric, labels, logits32, cuts)
    expected = [roc_auc_score(labels == c, logits32[:, c]) for c in range(classes)]
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-5, atol=1e-9)


@settings(max_examples=40, deadline=None)
@given(data=binary_data(), num_bins=st.integers(1, 64))
def test_binned_binary_is_within_its_bound_of_sklearn(data, num_bins: int) -> None:
    labels, scores, cuts = data
    low, high = float(scores.min()), float(scores.max()) + 1.0
    metric = AUROCMetric(num_bins=num_bins, score_range=(low, high))
    got = float(_accumulate(metric, labels, scores, cuts))
    bound = float(metric.error_bound())
    assert 0.0 <= bound <= 0.5
    assert abs(got - roc_auc_score(labels, scores)) <= bound + 1e-12


@settings(max_examples=25, deadline=None)
@given(data=multiclass_data(), num_bins=st.integers(2, 40))
def test_binned_multiclass_is_within_its_bound_of_sklearn(data, num_bins: int) -> None:
    labels, logits, cuts = data
    probabilities = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    metric = AUROCMetric(logits.shape[1], num_bins=num_bins, average="none")
    got = _accumulate(metric, labels, probabilities, cuts).numpy()
    expected = [roc_auc_score(labels == c, probabilities[:, c]) for c in range(len(got))]
    assert np.all(np.abs(got - expected) <= metric.error_bound().numpy() + 1e-12)
    macro = AUROCMetric(logits.shape[1], num_bins=num_bins)
    macro_value = float(_accumulate(macro, labels, probabilities, cuts))
    exact = _sklearn_ovr_macro(labels, probabilities)
    assert abs(macro_value - exact) <= float(macro.error_bound()) + 1e-12


def test_binned_bound_is_attained_and_fine_bins_are_exact() -> None:
    labels, scores = torch.tensor([1, 0, 0, 1]), torch.tensor([0.1, 0.2, 0.3, 0.8])
    coarse = AUROCMetric(num_bins=2)
    coarse.update(labels, scores)
    # Exact AUROC is 0.5; the positive 0.1 shares bin [0, 0.5) with both negatives.
    assert float(coarse.compute()) == 0.75
    assert float(coarse.error_bound()) == 0.25
    fine = AUROCMetric(num_bins=1000)
    fine.update(labels, scores)
    assert float(fine.compute()) == 0.5
    assert float(fine.error_bound()) == 0.0


def test_exact_mode_large_input_matches_sklearn() -> None:
    g = torch.Generator().manual_seed(0)
    n = 200_000
    labels = (torch.rand(n, generator=g) < 0.3).long()
    scores = torch.rand(n, generator=g) + 0.2 * labels  # float32: many ties at this size
    metric = AUROCMetric(capacity=n)
    for part in torch.arange(n).chunk(7):
        metric.update(labels[part], scores[part])
    expected = roc_auc_score(labels.numpy(), scores.numpy().astype(np.float64))
    assert float(metric.compute()) == pytest.approx(expected, rel=1e-12)


def test_negative_zero_ties_with_zero_and_infinite_order_is_kept() -> None:
    metric = AUROCMetric(capacity=8, dtype=torch.float64, check_values=False)
    scores = torch.tensor([-0.0, 0.0, -1e308, -5e-324], dtype=torch.float64)
    metric.update(torch.tensor([1, 0, 1, 0]), scores)
    # pos -0.0 ties neg 0.0 (1/2) and beats -5e-324 (1); pos -1e308 beats nothing.
    assert float(metric.compute()) == pytest.approx(1.5 / 4)


def test_overflow_raises_with_the_count_and_the_capacity_to_use() -> None:
    metric = AUROCMetric(capacity=10, check_values=False)
    metric.update(torch.tensor([0, 1] * 4), torch.rand(8))
    metric.update(torch.tensor([0, 1] * 4), torch.rand(8))
    with pytest.raises(MetricValueError, match=r"received 16 samples .* capacity=10: 6 samples"):
        metric.compute()
    with pytest.raises(MetricValueError, match=r"capacity >= 16, or use binned mode"):
        float(metric)
    metric.reset()
    metric.update(torch.tensor([0, 1]), torch.tensor([0.2, 0.7]))
    assert float(metric.compute()) == 1.0


def test_merge_keeps_overflow_visible() -> None:
    first, second = AUROCMetric(capacity=6), AUROCMetric(capacity=6)
    first.update(torch.tensor([0, 1, 0, 1]), torch.rand(4))
    second.update(torch.tensor([1, 0, 1, 0]), torch.rand(4))
    with pytest.raises(MetricValueError, match="2 samples were dropped"):
        first.merge_state(second).compute()


def test_zero_filled_rows_count_as_no_sample() -> None:
    """A distributed gather zero-fills the rows past each rank's count: label code 0 marks
    them empty whatever their key, so they leave the value unchanged."""
    metric = AUROCMetric(num_classes=3, capacity=12)
    labels, scores = torch.tensor([0, 1, 2, 1, 0]), torch.randn(5, 3)
    metric.update(labels, scores)
    before = metric.compute()
    metric.score_bits[5:].zero_()
    metric.codes[5:].zero_()
    metric._runtime.invalidate()
    torch.testing.assert_close(metric.compute(), before)


def test_undefined_classes_are_nan_and_left_out_of_the_macro_average() -> None:
    metric = AUROCMetric(num_classes=3, capacity=16, average="none")
    labels = torch.tensor([0, 0, 1, 1])  # class 2 never occurs: no positive
    scores = torch.tensor([[0.9, 0.1, 0.0], [0.8, 0.2, 0.1], [0.3, 0.7, 0.2], [0.1, 0.9, 0.3]])
    metric.update(labels, scores)
    per_class = metric.compute()
    assert per_class[:2].tolist() == [1.0, 1.0] and torch.isnan(per_class[2])
    macro = AUROCMetric(num_classes=3, capacity=16)
    macro.update(labels, scores)
    assert float(macro.compute()) == 1.0
    assert torch.isnan(AUROCMetric(capacity=4).compute())


def test_invalid_multiclass_labels_are_reported_then_ignored() -> None:
    metric = AUROCMetric(num_classes=2, capacity=8)
    metric.update(torch.tensor([0, 1, 5]), torch.tensor([[0.9, 0.1], [0.2, 0.8], [0.0, 1.0]]))
    with pytest.raises(MetricValueError, match=r"invalid labels \(1 value\)"):
        metric.compute()
    quiet = AUROCMetric(num_classes=2, capacity=8, check_values=False)
    quiet.update(torch.tensor([0, 1, 5]), torch.tensor([[0.9, 0.1], [0.2, 0.8], [0.0, 1.0]]))
    assert float(quiet.compute()) == 1.0


def test_constructor_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match=r"`num_classes` must be an integer >= 2 or None"):
        AUROCMetric(num_classes=1)
    with pytest.raises(ValueError, match=r"exclusive\. Received: capacity=8, num_bins=4"):
        AUROCMetric(capacity=8, num_bins=4)
    with pytest.raises(ValueError, match=r"`score_range` must be a pair"):
        AUROCMetric(num_bins=4, score_range=(1.0, 0.0))
    with pytest.raises(ValueError, match=r"`dtype` must be one of"):
        AUROCMetric(dtype=torch.float16)
    with pytest.raises(ValueError, match=r"`average` must be one of 'macro', 'none'"):
        AUROCMetric(average="micro")
    with pytest.raises(ValueError, match=r"trailing dimension of size num_classes=3"):
        AUROCMetric(num_classes=3, capacity=4).update(torch.tensor([0]), torch.rand(1, 2))
    with pytest.raises(TypeError, match=r"`labels` must hold integer class indices"):
        AUROCMetric(num_classes=2, capacity=4).update(torch.tensor([0.0]), torch.rand(1, 2))


def test_default_capacity_and_state_sizes() -> None:
    binary = AUROCMetric()
    assert binary.capacity == DEFAULT_CAPACITY == 2**16
    assert binary.score_bits.dtype == torch.int32 and binary.codes.dtype == torch.uint8
    state_bytes = sum(b.numel() * b.element_size() for b in binary.buffers())
    assert state_bytes < 5.1 * 2**16  # 4-byte key + 1-byte code per sample: 320 KiB
    assert AUROCMetric(capacity=10_000).capacity == 10_000  # told the expected count
    binned = AUROCMetric(num_classes=10, num_bins=256)
    assert binned.histogram.shape == (10, 2, 256)
    assert float(binned.error_bound().nan_to_num(0.0)) == 0.0


def test_shared_statistic_groups_macro_and_per_class() -> None:
    macro, per_class = AUROCMetric(3, 64), AUROCMetric(3, 64, average="none")
    assert macro.shared_statistic() == per_class.shared_statistic()
    assert macro.shared_statistic() != AUROCMetric(3, 32).shared_statistic()
    assert macro.shared_statistic() != AUROCMetric(3, num_bins=8).shared_statistic()


def test_compute_sorts_the_buffer_in_place_and_keeps_its_samples() -> None:
    g = torch.Generator().manual_seed(5)
    labels = torch.randint(0, 2, (40,), generator=g)
    scores = (torch.rand(40, generator=g) * 8).round() / 8
    metric, other = AUROCMetric(capacity=64), AUROCMetric(capacity=64)
    metric.update(labels[:15], scores[:15])
    address = metric.score_bits.data_ptr()
    metric.compute()
    assert metric.score_bits.data_ptr() == address
    keys = bits_to_keys_(metric.score_bits[:15].clone())  # the stored bits, in key order
    assert torch.equal(keys, keys.sort().values)  # sorted in place
    metric.update(labels[15:25], scores[15:25])  # appends after the (sorted) filled rows
    other.update(labels[25:], scores[25:])
    other.compute()
    merged = float(metric.merge_state(other).compute())
    assert merged == pytest.approx(roc_auc_score(labels, scores), rel=1e-12)


def test_an_exact_checkpoint_holds_the_samples_seen_not_the_capacity() -> None:
    g = torch.Generator().manual_seed(3)
    labels, scores = torch.randint(0, 2, (50,), generator=g), torch.rand(50, generator=g)
    metric = AUROCMetric().persistent(True)
    metric.update(labels[:30], scores[:30])
    saved = metric.state_dict()
    assert saved["score_bits"].shape[0] == 30 and saved["codes"].shape[0] == 30
    resumed = AUROCMetric().persistent(True)
    resumed.load_state_dict(saved)
    resumed.update(labels[30:], scores[30:])
    whole = AUROCMetric()
    whole.update(labels, scores)
    torch.testing.assert_close(resumed.compute(), whole.compute())


def test_equal_scores_share_a_bin_whatever_their_label() -> None:
    """Found by hypothesis: (-0.8 + 1) * 15 is 2.9999999999999996, which is bin 2, but adding
    the positive label's offset of 30 first rounds it to 33.0 (bin 3): equal scores of a
    positive and a negative landed in different bins, and the AUROC and its bound were wrong
    (0.5 with bound 0 against scikit-learn's 0.4375)."""
    labels = np.array([0, 1, 0, 0, 0, 1])
    scores = np.array([-1.0, -0.3, -0.0, -0.1, -0.8, -0.8])
    binary = AUROCMetric(num_bins=30, score_range=(-1.0, 1.0))
    binary.update(torch.tensor(labels), torch.tensor(scores))
    # both -0.8s in bin 2, the negative's and the positive's
    assert binary.binned_histogram()[0, :, 2].tolist() == [1.0, 1.0]
    assert abs(float(binary.compute()) - roc_auc_score(labels, scores)) <= float(
        binary.error_bound()
    )
    # The multiclass path adds its offsets the same way: class 1's scores are these again.
    table = np.stack([-scores, scores], axis=1)
    multiclass = AUROCMetric(2, num_bins=30, score_range=(-1.0, 1.0), average="none")
    multiclass.update(torch.tensor(labels), torch.tensor(table))
    assert abs(float(multiclass.compute()[1]) - roc_auc_score(labels, scores)) <= float(
        multiclass.error_bound()[1]
    )
