"""Issue 14's silent traps in the native API, each now a clear error or the expected number.

Oracles: scikit-learn and TorchMetrics 1.9 (the numbers a TorchMetrics user expects), and
`torch.nn.functional.cross_entropy` for perplexity.
"""

from __future__ import annotations

import math
import warnings

import pytest
import sklearn.metrics as skm
import torch
import torch.nn.functional as F
import torchmetrics.functional.classification as tmf
from hypothesis import given, settings
from hypothesis import strategies as st

from torchtally.metrics import (
    AccuracyMetric,
    ConfusionMatrixMetric,
    F1ScoreMetric,
    MeanIOUMetric,
    MetricCollection,
    MetricValueError,
    PerplexityMetric,
    PrecisionMetric,
    RecallMetric,
    TopKAccuracyMetric,
)
from torchtally.testing import assert_traceable

ORDER = r"\(labels, predictions\).*TorchMetrics' is `\(preds, target\)`"
T = torch.tensor


# --- argument order: floating labels are predictions passed in TorchMetrics' order ---------


@pytest.mark.parametrize(
    "make",
    [
        AccuracyMetric,
        PrecisionMetric,
        lambda: RecallMetric(3, "macro"),
        lambda: F1ScoreMetric(3, multilabel=True),
        lambda: ConfusionMatrixMetric(2),
        lambda: MeanIOUMetric(2),
        lambda: TopKAccuracyMetric(1),
    ],
)
def test_floating_labels_raise_naming_both_orders(make) -> None:
    metric = make()
    if isinstance(metric, TopKAccuracyMetric):
        preds, target = torch.rand(3, 2), T([1, 0, 1])
    elif getattr(metric, "task", None) == "multilabel":
        preds, target = torch.rand(2, 3), T([[1, 0, 1], [0, 1, 1]])
    else:
        preds, target = T([0.9, 0.2, 0.8]), T([1, 0, 1])
    with pytest.raises(TypeError, match=ORDER):
        metric.update(preds, target)  # TorchMetrics' order


def test_torchmetrics_order_binary_accuracy_no_longer_gives_zero() -> None:
    """The issue's case: 0.0 silently instead of 1.0."""
    preds, target = T([0.9, 0.2, 0.8]), T([1, 0, 1])
    assert float(tmf.binary_accuracy(preds, target)) == 1.0
    with pytest.raises(TypeError, match=ORDER):
        AccuracyMetric()(preds, target)
    assert float(AccuracyMetric()(target, preds)) == 1.0
    assert float(AccuracyMetric()(labels=target, predictions=preds)) == 1.0


# --- logits given to threshold metrics --------------------------------------------------


def test_binary_logits_go_through_a_sigmoid_as_torchmetrics() -> None:
    gen = torch.Generator().manual_seed(0)
    labels = torch.randint(0, 2, (64,), generator=gen)
    logits = torch.randn(64, generator=gen) * 3 + (labels * 2 - 1)
    want = skm.f1_score(labels, (torch.sigmoid(logits) > 0.5).long())
    assert float(tmf.binary_f1_score(logits, labels)) == pytest.approx(want)
    assert float(F1ScoreMetric()(labels, logits)) == pytest.approx(want)
    assert float(F1ScoreMetric(score_kind="logits")(labels, logits)) == pytest.approx(want)
    accuracy = skm.accuracy_score(labels, (logits > 0).long())
    assert float(AccuracyMetric()(labels, logits)) == pytest.approx(accuracy)


def test_the_issue_f1_on_logits_is_one_not_half() -> None:
    labels, logits = T([1, 0, 1, 0]), T([2.0, -3.0, 0.2, -0.1])
    assert float(tmf.binary_f1_score(logits, labels)) == 1.0
    assert float(F1ScoreMetric()(labels, logits)) == 1.0


def test_multilabel_logits_per_batch_as_torchmetrics() -> None:
    """The choice is per update: one batch of logits, one of probabilities."""
    gen = torch.Generator().manual_seed(1)
    metric = F1ScoreMetric(4, "macro", multilabel=True)
    theirs = []
    for batch in range(2):
        labels = torch.randint(0, 2, (16, 4), generator=gen)
        scores = torch.randn(16, 4, generator=gen) * 2
        scores = scores if batch == 0 else torch.sigmoid(scores)
        metric.update(labels, scores)
        theirs.append((scores, labels))
    want = skm.f1_score(
        torch.cat([lb for _, lb in theirs]),
        torch.cat([torch.sigmoid(theirs[0][0]) > 0.5, theirs[1][0] > 0.5]).long(),
        average="macro",
    )
    assert float(metric.compute()) == pytest.approx(want)


def test_declared_score_kind_overrides_the_guess() -> None:
    labels, scores = T([1, 0, 1]), T([0.6, 0.4, 0.3])  # in [0, 1]: "auto" reads probabilities
    assert float(PrecisionMetric()(labels, scores)) == 1.0  # one positive, right
    # as logits every score is positive: sigmoid > 0.5
    assert float(PrecisionMetric(score_kind="logits")(labels, scores)) == pytest.approx(2 / 3)
    outside = T([2.0, -2.0, 0.3])  # outside [0, 1]: "auto" reads logits, sigmoid(0.3) > 0.5
    assert float(RecallMetric()(labels, outside)) == 1.0
    assert float(RecallMetric(score_kind="probabilities")(labels, outside)) == 0.5
    with pytest.raises(ValueError, match="score_kind"):
        PrecisionMetric(score_kind="odds")


def test_logit_guess_stays_traceable() -> None:
    labels = torch.randint(0, 2, (8, 3))
    assert_traceable(F1ScoreMetric(3, multilabel=True), labels, torch.randn(8, 3))
    assert_traceable(AccuracyMetric(ignore_index=-100), T([0, 1, -100, 1]), torch.randn(4))


# --- classification input semantics (issue 13) -------------------------------------------


def test_one_hot_labels_with_class_scores_raise() -> None:
    labels = F.one_hot(T([0, 1, 2, 2]), 3)
    scores = torch.rand(4, 3)
    with pytest.raises(TypeError, match="argmax"):
        PrecisionMetric(3, "macro").update(labels, scores)


def test_float_class_indices_are_not_thresholded() -> None:
    with pytest.raises(TypeError, match="binary scores"):
        PrecisionMetric(3, "macro").update(T([0, 2, 1]), T([0.0, 2.0, 1.0]))
    metric = AccuracyMetric()
    metric.update(T([0, 2, 1]), T([0.0, 2.0, 1.0]))  # was 0.667, silently
    with pytest.raises(MetricValueError, match="labels outside"):
        metric.compute()


def test_n_by_1_sigmoid_probabilities_are_binary_scores() -> None:
    labels = T([1, 0, 1, 1, 0])
    probabilities = T([[0.9], [0.2], [0.7], [0.4], [0.1]])
    want = skm.accuracy_score(labels, (probabilities[:, 0] > 0.5).long())  # 0.8, was 0.4
    assert float(AccuracyMetric()(labels, probabilities)) == pytest.approx(want)
    assert float(PrecisionMetric()(labels, probabilities)) == pytest.approx(
        skm.precision_score(labels, (probabilities[:, 0] > 0.5).long())
    )


@pytest.mark.parametrize(
    ("labels", "predictions", "kwargs", "fragment"),
    [
        (T([0, -100, 1]), torch.rand(3, 3), {}, "labels outside"),  # padding, not ignored
        (T([0, -1, 1]), T([0, 1, 1]), {}, "labels outside"),
        (T([0, 3]), torch.rand(2, 3), {}, "labels outside"),  # >= the class count
        (T([0, 2, 1]), T([0.2, 0.9, 0.6]), {}, "labels outside"),  # binary label 2
        (T([0, 1]), T([0, 3]), {"num_classes": 3}, "predictions outside"),  # prediction C
        (T([0, 3]), T([0, 1]), {"num_classes": 3}, "labels outside"),
        (T([0, 1]), T([-1, 1]), {}, "negative predictions"),
    ],
)
def test_accuracy_validates_labels(labels, predictions, kwargs, fragment) -> None:
    metric = AccuracyMetric(**kwargs)
    metric.update(labels, predictions)
    with pytest.raises(MetricValueError, match=fragment):
        metric.compute()


def test_accuracy_half_labels_raise_at_the_call() -> None:
    with pytest.raises(TypeError, match=ORDER):
        AccuracyMetric().update(T([0.5, 1.0]), T([0, 1]))


def test_accuracy_ignore_index_matches_sklearn_on_the_kept_labels() -> None:
    gen = torch.Generator().manual_seed(2)
    labels = torch.randint(0, 5, (50,), generator=gen)
    labels[torch.rand(50, generator=gen) < 0.3] = -100
    scores = torch.randn(50, 5, generator=gen)
    keep = labels != -100
    want = skm.accuracy_score(labels[keep], scores[keep].argmax(1))
    assert float(
        tmf.multiclass_accuracy(scores, labels, 5, average="micro", ignore_index=-100)
    ) == (pytest.approx(want))
    metric = AccuracyMetric(ignore_index=-100, num_classes=5)
    metric.update(labels[:20], scores[:20])
    metric.update(labels[20:], scores[20:])
    assert float(metric.compute()) == pytest.approx(want)
    weights = torch.rand(50, generator=gen)
    weighted = AccuracyMetric(ignore_index=-100)(labels, scores, weights)
    correct = (scores.argmax(1) == labels) & keep
    assert float(weighted) == pytest.approx(float((correct * weights).sum() / keep.sum()))


def test_accuracy_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="num_classes"):
        AccuracyMetric(num_classes=1)
    with pytest.raises(TypeError, match="ignore_index"):
        AccuracyMetric(ignore_index=0.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="num_classes"):
        AccuracyMetric(num_classes=4).update(T([0, 1]), torch.rand(2, 3))
    with pytest.raises(TypeError, match="predictions"):
        AccuracyMetric().update(T([0, 1]), [0, 1])  # type: ignore[arg-type]


# --- perplexity -------------------------------------------------------------------------


def _lm_batch(seed: int = 3) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    return torch.randint(0, 50, (4, 36), generator=gen), torch.randn(4, 36, 50, generator=gen) * 2


def _oracle(labels: torch.Tensor, logits: torch.Tensor, **kwargs) -> float:
    return math.exp(
        float(F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1), **kwargs))
    )


def test_perplexity_from_logits_matches_cross_entropy() -> None:
    labels, logits = _lm_batch()
    want = _oracle(labels, logits)
    assert float(PerplexityMetric()(labels, logits)) == pytest.approx(want, rel=1e-6)
    assert float(PerplexityMetric()(labels, logits=logits)) == pytest.approx(want, rel=1e-6)
    padded = labels.clone()
    padded[:, 30:] = -100
    metric = PerplexityMetric(ignore_index=-100)
    metric.update(padded[:2], logits[:2])
    metric.update(padded[2:], logits[2:])
    assert float(metric.compute()) == pytest.approx(_oracle(padded, logits), rel=1e-6)


def test_perplexity_mean_loss_declared_gives_the_right_number() -> None:
    labels, logits = _lm_batch()
    mean = F.cross_entropy(logits.reshape(-1, 50), labels.reshape(-1))
    want = _oracle(labels, logits)
    assert float(PerplexityMetric(loss_reduction="mean")(labels, mean)) == pytest.approx(
        want, rel=1e-6
    )
    total = F.cross_entropy(logits.reshape(-1, 50), labels.reshape(-1), reduction="sum")
    assert float(PerplexityMetric(loss_reduction="sum")(labels, total)) == pytest.approx(
        want, rel=1e-6
    )


def test_perplexity_mean_loss_with_autograd_node_raises() -> None:
    labels, logits = _lm_batch()
    logits.requires_grad_(True)
    mean = F.cross_entropy(logits.reshape(-1, 50), labels.reshape(-1))
    with pytest.raises(ValueError, match=r"mean loss.*loss_reduction='mean'"):
        PerplexityMetric().update(labels, mean)
    with pytest.raises(ValueError, match="mean loss"):
        PerplexityMetric().update(labels, (logits.sum(-1) ** 2).mean())
    total = F.cross_entropy(logits.reshape(-1, 50), labels.reshape(-1), reduction="sum")
    with pytest.raises(ValueError, match="summed loss"):
        PerplexityMetric(loss_reduction="mean").update(labels, total)
    metric = PerplexityMetric()
    metric.update(labels, total)  # a sum, as declared by default: no state joins the graph
    assert not metric.total_loss.requires_grad
    assert float(metric.compute()) == pytest.approx(_oracle(labels, logits.detach()), rel=1e-6)


def test_perplexity_undeclared_detached_loss_warns_once() -> None:
    labels, logits = _lm_batch()
    mean = F.cross_entropy(logits.reshape(-1, 50), labels.reshape(-1))
    metric = PerplexityMetric()
    with pytest.warns(UserWarning, match="loss_reduction='mean'"):
        metric.update(labels, mean)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        metric.update(labels, mean)  # once per metric
        PerplexityMetric(loss_reduction="sum").update(labels, mean * labels.numel())


def test_perplexity_labels_checked() -> None:
    labels, logits = _lm_batch()
    with pytest.raises(TypeError, match=ORDER):
        PerplexityMetric()(logits, labels)  # TorchMetrics' (preds, target)
    metric = PerplexityMetric()
    metric.update(T([[0, 50]]), torch.zeros(1, 2, 50))
    with pytest.raises(MetricValueError, match="vocabulary"):
        metric.compute()
    with pytest.raises(TypeError, match="exactly one"):
        PerplexityMetric().update(labels)


def test_perplexity_logits_traceable() -> None:
    labels, logits = _lm_batch()
    assert_traceable(PerplexityMetric(ignore_index=0), labels, logits)
    assert_traceable(PerplexityMetric(loss_reduction="mean"), labels, torch.tensor(2.0))


def test_bool_labels_are_class_indices() -> None:
    labels = T([True, False, True, True])
    scores = T([0.9, 0.2, 0.3, 0.8])
    want = skm.accuracy_score(labels, scores > 0.5)
    assert float(AccuracyMetric()(labels, scores)) == pytest.approx(want)
    assert float(AccuracyMetric(num_classes=2)(labels, scores > 0.5)) == pytest.approx(want)
    assert float(F1ScoreMetric()(labels, scores)) == pytest.approx(
        skm.f1_score(labels, scores > 0.5)
    )


def test_accuracy_in_a_collection_keeps_its_own_label_rules() -> None:
    """Derived from a confusion matrix only where that gives the same number."""
    labels, predictions = T([0, 1, 2, 2, 1]), T([0, 2, 2, 1, 1])
    collection = MetricCollection(
        [
            ConfusionMatrixMetric(3),
            AccuracyMetric("plain", num_classes=3),
            AccuracyMetric("ignoring_1", ignore_index=1),
        ]
    )
    values = collection(labels, predictions)
    assert float(values["plain"]) == pytest.approx(skm.accuracy_score(labels, predictions))
    keep = labels != 1
    assert float(values["ignoring_1"]) == pytest.approx(
        skm.accuracy_score(labels[keep], predictions[keep])
    )


@settings(max_examples=60, deadline=None)
@given(
    scores=st.lists(
        st.floats(-6.0, 6.0, allow_nan=False, width=32) | st.floats(0.0, 1.0, width=32),
        min_size=1,
        max_size=24,
    ),
    seed=st.integers(0, 2**16),
    threshold=st.sampled_from([0.3, 0.5, 0.7]),
)
def test_binary_scores_read_as_torchmetrics_reads_them(
    scores: list[float], seed: int, threshold: float
) -> None:
    """Probabilities or logits, decided per batch: the same 0/1 decisions as TorchMetrics."""
    preds = torch.tensor(scores)
    target = torch.randint(0, 2, preds.shape, generator=torch.Generator().manual_seed(seed))
    want = tmf.binary_stat_scores(preds, target, threshold=threshold)  # tp, fp, tn, fn, support
    counts = PrecisionMetric(threshold=threshold)
    counts.update(target, preds)
    true_positive, predicted, actual = counts.class_counts[:, 0].tolist()
    assert (true_positive, predicted - true_positive, actual - true_positive) == (
        float(want[0]),
        float(want[1]),
        float(want[3]),
    )


def test_nan_weights_are_an_error_not_a_number() -> None:
    """Issue 13: macro F1 with one NaN weight returned 0.5556."""
    labels, predictions = T([0, 1, 2, 2]), T([0, 1, 2, 1])
    weights = T([1.0, float("nan"), 1.0, 1.0])
    for metric in (
        F1ScoreMetric(3, "macro"),
        AccuracyMetric(),
        ConfusionMatrixMetric(3),
        PrecisionMetric(),
    ):
        binary = getattr(metric, "task", None) == "binary"
        metric.update(
            labels.clamp(max=1) if binary else labels,
            predictions.clamp(max=1) if binary else predictions,
            weights,
        )
        with pytest.raises(MetricValueError, match="NaN or infinite weights"):
            metric.compute()
