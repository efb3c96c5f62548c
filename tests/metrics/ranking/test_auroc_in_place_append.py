"""Exact AUROC's eager in-place append (issue 16): with a current fill note, `update` writes
the batch's score bits and label codes straight into the buffers' next rows. Its values must
equal scikit-learn's for every input kind, its error counts and `compute` messages must equal
those of the general path (the one compiled and traced steps take), and mixing it with the
general path, merges, checkpoints and compiled calls must stay exact."""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import pytest
import torch
from sklearn.metrics import roc_auc_score

from torchtally.metrics import AUROCMetric, CatState, MetricValueError


def _general(metric: AUROCMetric) -> AUROCMetric:
    """Make the next append take the general path: a write to the fill counts that the host
    note did not see (as a compiled step's) makes the note stale."""
    metric.codes_count.add_(0)
    metric.score_bits_count.add_(0)
    assert metric.cat_state("codes").known_fill() is None
    return metric


def _in_place(metric: AUROCMetric) -> bool:
    return metric.cat_state("codes").known_fill() is not None


def _binary_batches(seed: int = 0, sizes: tuple[int, ...] = (5, 0, 17, 40)):
    g = torch.Generator().manual_seed(seed)
    for n in sizes:
        labels = torch.randint(0, 2, (n,), generator=g)
        scores = torch.randint(0, 7, (n,), generator=g).double() / 6 - 0.5  # ties, -0.0
        yield labels, scores


LABEL_KINDS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "int64": lambda x: x,
    "int32": lambda x: x.int(),
    "uint8": lambda x: x.to(torch.uint8),
    "bool": lambda x: x.bool(),
    "float32": lambda x: x.float(),
}
SCORE_KINDS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "float32": lambda s: s.float(),
    "float64": lambda s: s,
    "float16": lambda s: s.half(),
    "strided": lambda s: torch.stack([s, -s], dim=1)[:, 0],  # a non-contiguous view
}


@pytest.mark.parametrize("label_kind", LABEL_KINDS)
@pytest.mark.parametrize("score_kind", SCORE_KINDS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_binary_in_place_matches_sklearn_for_every_input_kind(
    label_kind: str, score_kind: str, dtype: torch.dtype
) -> None:
    metric = AUROCMetric(capacity=100, dtype=dtype)
    all_labels, all_scores = [], []
    for labels, scores in _binary_batches():
        labels, scores = LABEL_KINDS[label_kind](labels), SCORE_KINDS[score_kind](scores)
        metric.update(labels, scores)
        assert _in_place(metric)
        all_labels.append(labels.long().numpy())
        all_scores.append(scores.to(dtype).double().numpy())  # the storage precision
    expected = roc_auc_score(np.concatenate(all_labels), np.concatenate(all_scores))
    assert float(metric.compute()) == pytest.approx(expected, abs=1e-12)
    assert int(metric.codes_count) == int(metric.score_bits_count) == 62


@pytest.mark.parametrize("label_dtype", [torch.int64, torch.int32, torch.int16, torch.uint8])
@pytest.mark.parametrize("num_classes", [3, 300])  # uint8 and int16 label codes
def test_multiclass_in_place_matches_sklearn(label_dtype: torch.dtype, num_classes: int) -> None:
    g = torch.Generator().manual_seed(1)
    classes = min(num_classes, 5)  # the labels present; the other classes have no positives
    metric = AUROCMetric(num_classes, capacity=200, average="none")
    labels = torch.randint(0, classes, (90,), generator=g).to(label_dtype)
    scores = torch.randint(0, 5, (90, num_classes), generator=g).float() / 4  # ties
    for piece in (slice(0, 10), slice(10, 10), slice(10, 90)):
        metric.update(labels[piece], scores[piece])
        assert _in_place(metric)
    got = metric.compute()[:classes]
    for c in range(classes):
        expected = roc_auc_score((labels == c).numpy(), scores[:, c].numpy())
        assert float(got[c]) == pytest.approx(expected, abs=1e-12)
    assert torch.isnan(metric.compute()[classes:]).all()


def _counted(metric: AUROCMetric) -> torch.Tensor:
    """The errors counted so far by kind: in `update`, and over the stored rows (where exact
    mode counts invalid labels and non-finite scores, at compute)."""
    stored = metric.stored_error_counts()
    assert stored is not None
    counted = metric._errors.clone()
    counted[: stored.shape[0]] += stored  # the first kinds: invalid labels, non-finite scores
    return counted


def _same_state(a: AUROCMetric, b: AUROCMetric) -> None:
    for name in ("score_bits", "codes", "score_bits_count", "codes_count", "_errors"):
        assert torch.equal(getattr(a, name), getattr(b, name)), name


@pytest.mark.parametrize("num_classes", [None, 4])
def test_in_place_and_general_paths_store_the_same_rows(num_classes: int | None) -> None:
    g = torch.Generator().manual_seed(2)
    fast, slow = AUROCMetric(num_classes, capacity=64), AUROCMetric(num_classes, capacity=64)
    for n in (7, 0, 20):
        if num_classes is None:
            labels, scores = torch.randint(0, 2, (n,), generator=g), torch.randn(n, generator=g)
        else:
            labels = torch.randint(0, num_classes, (n,), generator=g)
            scores = torch.randn(n, num_classes, generator=g).double()
        fast.update(labels, scores)
        _general(slow).update(labels, scores)
        assert _in_place(fast)
    _same_state(fast, slow)


BAD_BATCHES = {
    "binary labels": (None, torch.tensor([0, 1, 2, -1, 256, 1]), torch.rand(6)),
    "binary float labels": (None, torch.tensor([0.0, 0.5, 1.0, float("nan")]), torch.rand(4)),
    "binary scores": (
        None,
        torch.tensor([0, 1, 1, 0]),
        torch.tensor([0.1, float("nan"), 1, -float("inf")]),
    ),
    "binary 2-d": (
        None,
        torch.tensor([[0, 3], [1, 0]]),
        torch.tensor([[0.1, 0.2], [float("inf"), 0.5]]),
    ),
    "multiclass labels": (3, torch.tensor([0, 3, -1, 2, 255, 256]), torch.rand(6, 3)),
    "multiclass rows": (
        3,
        torch.tensor([0, 1, 2, 1]),
        torch.tensor(
            [
                [0.1, float("nan"), float("nan")],
                [0, 1, 2],
                [-float("inf"), 0, 1],
                [float("inf"), 0, 0],
            ]
        ),
    ),
    "multiclass 3-d": (
        2,
        torch.tensor([[0, 1], [1, 5]]),
        torch.tensor([[[0.1, float("nan")], [0, 1]], [[float("nan")] * 2, [0, 1]]]),
    ),
}


@pytest.mark.parametrize("case", BAD_BATCHES)
def test_in_place_counts_the_errors_of_the_general_path(case: str) -> None:
    num_classes, labels, scores = BAD_BATCHES[case]
    fast, slow = AUROCMetric(num_classes, capacity=64), AUROCMetric(num_classes, capacity=64)
    good_labels = torch.tensor([0, 1, 1]) if num_classes is None else torch.tensor([0, 1, 2])
    good_scores = torch.rand(3) if num_classes is None else torch.rand(3, 3)
    if num_classes == 2:
        good_labels, good_scores = good_labels[:2] % 2, good_scores[:2, :2]
    for metric in (fast, slow):
        metric.update(good_labels, good_scores)
    fast.update(labels, scores)
    _general(slow).update(labels, scores)
    assert _in_place(fast)
    assert int(_counted(fast).sum()) > 0
    assert torch.equal(_counted(fast), _counted(slow))
    with pytest.raises(MetricValueError) as expected:
        slow.compute()
    with pytest.raises(MetricValueError, match=re.escape(str(expected.value))):
        fast.compute()
    # the error survives a merge into a clean metric and a checkpoint round trip
    clean = AUROCMetric(num_classes, capacity=64).merge_state(fast)
    with pytest.raises(MetricValueError, match=re.escape(str(expected.value))):
        clean.compute()
    restored = AUROCMetric(num_classes, capacity=64).persistent(True)
    restored.load_state_dict(fast.persistent(True).state_dict())
    with pytest.raises(MetricValueError, match=re.escape(str(expected.value))):
        restored.compute()


def test_without_checks_invalid_labels_keep_their_meaning() -> None:
    # check_values=False: binary labels > 0 are positive, multiclass labels outside the
    # classes are ignored, as documented (and as the general path stores them)
    labels = torch.tensor([0, 2, 1, -3, 0, 7])
    scores = torch.tensor([0.1, 0.9, 0.4, 0.2, 0.5, 0.3])
    metric = AUROCMetric(capacity=16, check_values=False)
    metric.update(labels, scores)
    assert _in_place(metric)
    expected = roc_auc_score((labels > 0).numpy(), scores.numpy())
    assert float(metric.compute()) == pytest.approx(expected, abs=1e-12)

    labels = torch.tensor([0, 1, 2, 5, -1, 1, 0, 2])
    scores = torch.rand(8, 3, generator=torch.Generator().manual_seed(4)).softmax(-1)
    metric = AUROCMetric(3, capacity=16, check_values=False)
    metric.update(labels, scores)
    assert _in_place(metric)
    valid = (labels >= 0) & (labels < 3)
    expected = roc_auc_score(labels[valid].numpy(), scores[valid].numpy(), multi_class="ovr")
    assert float(metric.compute()) == pytest.approx(expected, abs=1e-12)


def test_alternating_paths_merge_and_checkpoint_stay_exact() -> None:
    batches = list(_binary_batches(seed=5, sizes=(9, 13, 4, 21, 8)))
    a, b = AUROCMetric(capacity=100), AUROCMetric(capacity=100)
    a.update(*batches[0])
    _general(a).update(*batches[1])
    assert not _in_place(a)  # update never reads the count; compute does, and notes it
    a.compute()
    assert _in_place(a)
    a.update(*batches[2])
    assert _in_place(a)
    b.update(*batches[3])
    a.merge_state(b)
    saved = a.persistent(True).state_dict()
    c = AUROCMetric(capacity=100).persistent(True)
    c.load_state_dict(saved)
    c.update(*batches[4])
    labels = torch.cat([x[0] for x in batches]).numpy()
    scores = torch.cat([x[1] for x in batches]).float().numpy()
    assert float(c.compute()) == pytest.approx(roc_auc_score(labels, scores), abs=1e-12)


def test_a_batch_past_the_capacity_takes_the_general_path_and_raises() -> None:
    metric = AUROCMetric(3, capacity=10)
    metric.update(torch.tensor([0, 1, 2] * 3), torch.rand(9, 3))
    metric.update(torch.tensor([0, 1]), torch.rand(2, 3))  # 11 rows into 10
    assert int(metric.codes_count) == 11
    with pytest.raises(MetricValueError, match="1 samples were dropped"):
        metric.compute()


def test_bad_arguments_raise_before_any_write() -> None:
    metric = AUROCMetric(3, capacity=10)
    with pytest.raises(TypeError, match=re.escape("`predictions` must be a torch.Tensor")):
        metric.update(torch.tensor([0]), "scores")
    with pytest.raises(ValueError, match="trailing dimension"):
        metric.update(torch.tensor([0, 1]), torch.rand(2, 4))
    assert int(metric.codes_count) == int(metric.score_bits_count) == 0
    assert _in_place(metric)


@pytest.mark.slow
@pytest.mark.parametrize("num_classes", [None, 3])
def test_mixing_in_place_and_compiled_appends_is_exact(num_classes: int | None) -> None:
    g = torch.Generator().manual_seed(6)
    metric = AUROCMetric(num_classes, capacity=200)
    compiled = torch.compile(metric.update, backend="eager", fullgraph=True)
    seen_labels, seen_scores = [], []
    for step in range(6):
        if num_classes is None:
            labels, scores = torch.randint(0, 2, (11,), generator=g), torch.rand(11, generator=g)
        else:
            labels = torch.randint(0, num_classes, (11,), generator=g)
            scores = torch.rand(11, num_classes, generator=g).softmax(-1)
        (compiled if step % 2 else metric.update)(labels, scores)
        seen_labels.append(labels)
        seen_scores.append(scores)
    assert _in_place(metric) is False  # the last call was compiled
    metric.update(labels, scores)  # the general path
    metric.compute()  # notes the count: in place again
    # and that compute read only the filled rows, not the whole capacity
    assert metric.cat_state("score_bits").values()[0].shape[0] == 77
    metric.update(labels, scores)
    assert _in_place(metric)
    seen_labels += [labels, labels]
    seen_scores += [scores, scores]
    kwargs = {} if num_classes is None else {"multi_class": "ovr"}
    expected = roc_auc_score(
        torch.cat(seen_labels).numpy(), torch.cat(seen_scores).numpy(), **kwargs
    )
    assert float(metric.compute()) == pytest.approx(expected, abs=1e-12)


def test_one_stale_note_sends_both_states_to_the_general_path() -> None:
    batches = list(_binary_batches(seed=7, sizes=(6, 9, 5)))
    metric = AUROCMetric(capacity=50)
    metric.update(*batches[0])
    metric.score_bits_count.add_(0)  # only one of the two counts written behind the note
    assert CatState.common_fill((metric.cat_state("score_bits"), metric.cat_state("codes"))) is None
    assert metric.cat_state("codes").known_fill() == 6
    metric.update(*batches[1])
    metric.update(*batches[2])
    assert int(metric.codes_count) == int(metric.score_bits_count) == 20
    labels = torch.cat([x[0] for x in batches]).numpy()
    scores = torch.cat([x[1] for x in batches]).float().numpy()
    assert float(metric.compute()) == pytest.approx(roc_auc_score(labels, scores), abs=1e-12)


@pytest.mark.parametrize(
    ("rows", "num_classes", "capacity"),
    [(1, 3, 4), (7, 2, 7), (300, 5, 4096), (900, 40, 1000), (20000, 3, 20000)],
)
def test_multiclass_compute_of_few_or_many_rows_matches_sklearn(
    rows: int, num_classes: int, capacity: int
) -> None:
    # few rows sort several classes at once, many one class at a time; ties and -0.0 included
    g = torch.Generator().manual_seed(rows)
    labels = torch.randint(0, num_classes, (rows,), generator=g)
    labels[: min(rows, num_classes)] = torch.arange(min(rows, num_classes))
    scores = torch.randint(-6, 7, (rows, num_classes), generator=g).float() / 6
    scores[scores == 0] = -0.0
    metric = AUROCMetric(num_classes, capacity=capacity, average="none")
    metric.update(labels, scores)
    stored = metric.score_bits.clone()
    got = metric.compute()
    assert torch.equal(metric.score_bits, stored)  # compute leaves the stored bits alone
    for c in range(num_classes):
        truth = (labels == c).numpy()
        if truth.all() or not truth.any():
            assert torch.isnan(got[c])
        else:
            assert float(got[c]) == pytest.approx(roc_auc_score(truth, scores[:, c]), abs=1e-12)


@pytest.mark.parametrize("samples", [20_479, 20_480, 32_767])
def test_compute_of_a_padded_radix_sort_keeps_the_samples(samples: int) -> None:
    # 20,480 to 32,767 samples: compute sorts 32,768 rows, the samples and empty rows it makes
    # after them (a radix sort); the value is scikit-learn's, the buffer keeps its samples
    # first and empty rows after, and later appends, merges and computes stay exact
    g = torch.Generator().manual_seed(samples)
    labels = torch.randint(0, 2, (samples + 500,), generator=g)
    scores = (torch.rand(samples + 500, generator=g) * 64).round() / 64  # ties
    # a NaN whose bits are the largest key, that of the empty rows, and -0.0
    scores[:2] = torch.tensor([2**31 - 1, 0], dtype=torch.int32).view(torch.float32)
    scores[1] = -0.0
    metric = AUROCMetric(capacity=40_000, check_values=False)
    metric.update(labels[:samples], scores[:samples])
    stored = sorted(zip(metric.score_bits[:samples].tolist(), metric.codes[:samples].tolist()))
    assert _in_place(metric)
    finite = ~scores[:samples].isnan()
    # a NaN score (allowed without checks) ranks above every number: as 2 for the oracle
    oracle = torch.where(finite, scores[:samples], 2.0)
    expected = roc_auc_score(labels[:samples].numpy(), oracle.numpy())
    assert float(metric.compute()) == pytest.approx(expected, abs=1e-12)
    kept = sorted(zip(metric.score_bits[:samples].tolist(), metric.codes[:samples].tolist()))
    zero = [(0 if bits == -(2**31) else bits, code) for bits, code in stored]  # -0.0 as 0.0
    assert kept == sorted(zero)
    assert int(metric.codes[samples:].count_nonzero()) == 0
    assert bool((metric.score_bits[samples:-1] == torch.iinfo(torch.int32).max).all())
    metric.update(labels[samples:], scores[samples:])
    other = AUROCMetric(capacity=40_000, check_values=False)
    other.update(labels[:100], scores[:100])
    everything = torch.cat([labels, labels[:100]])
    ranked = torch.cat([scores, scores[:100]])
    ranked = torch.where(ranked.isnan(), 2.0, ranked)
    merged = float(metric.merge_state(other).compute())
    assert merged == pytest.approx(roc_auc_score(everything.numpy(), ranked.numpy()), abs=1e-12)
