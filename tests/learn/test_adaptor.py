"""Adaptors: one step output feeds every metric; defaults, registration, overrides, errors."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from sklearn import metrics as skm

import torchtally as cstorch
from torchtally.learn._adaptor import (
    AdaptorError,
    MetricInput,
    adapt,
    find_adaptor,
    register_adaptor,
)
from torchtally.learn._learner.metrics import SplitMetrics
from torchtally.learn._outputs import (
    ClassificationOutput,
    MultiLabelClassificationOutput,
    RegressionOutput,
    SequenceOutput,
)
from torchtally.metrics import (
    AccuracyMetric,
    AUCMetric,
    AUROCMetric,
    ConfusionMatrixMetric,
    F1ScoreMetric,
    HammingScoreMetric,
    LearningRateMetric,
    MAEMetric,
    MeanMetric,
    Metric,
    MSEMetric,
    PerplexityMetric,
    PrecisionAtKMetric,
    PrecisionMetric,
    QuantileMetric,
    RecallAtKMetric,
    RecallMetric,
    TopKAccuracyMetric,
)

GEN = torch.Generator().manual_seed(0)


def classification_batches() -> list[ClassificationOutput]:
    outputs = []
    for size in (5, 9, 2):  # unequal batches: the loss mean must weight by size
        logits = torch.randn(size, 4, generator=GEN)
        labels = torch.randint(0, 4, (size,), generator=GEN)
        outputs.append(ClassificationOutput(F.cross_entropy(logits, labels), logits, labels))
    return outputs


def test_one_classification_output_serves_every_metric_inside_a_traced_step() -> None:
    optimizer = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.25)
    metrics = SplitMetrics(
        "valid",
        [
            MeanMetric("loss"),
            AccuracyMetric(),
            PrecisionMetric(4, average_type="macro"),
            RecallMetric(4, average_type="weighted"),
            F1ScoreMetric(4, average_type="micro"),
            TopKAccuracyMetric(2),
            ConfusionMatrixMetric(4),
            AUROCMetric(4, capacity=64),
            LearningRateMetric(),
        ],
        "cpu",
    )
    batches = classification_batches()

    @cstorch.trace  # reading any value in here raises: the updates are pure tensor work
    def step(output: ClassificationOutput) -> dict[str, Any]:
        metrics.update(output, optimizer)
        return metrics.compute()

    for output in batches:
        values = step(output)
    logits = torch.cat([b.output for b in batches])
    labels = torch.cat([b.targets for b in batches])
    y, pred = labels.numpy(), logits.argmax(1).numpy()
    expected_loss = F.cross_entropy(logits, labels).item()
    assert float(values["loss"]) == pytest.approx(expected_loss, rel=1e-6)
    assert float(values["accuracy"]) == pytest.approx(skm.accuracy_score(y, pred))
    assert float(values["precision"]) == pytest.approx(
        skm.precision_score(y, pred, average="macro", zero_division=0)
    )
    assert float(values["recall"]) == pytest.approx(
        skm.recall_score(y, pred, average="weighted", zero_division=0)
    )
    assert float(values["f1_score"]) == pytest.approx(skm.f1_score(y, pred, average="micro"))
    assert float(values["top_k_accuracy"]) == pytest.approx(
        skm.top_k_accuracy_score(y, logits.numpy(), k=2, labels=range(4))
    )
    assert values["confusion_matrix"].tolist() == skm.confusion_matrix(y, pred).tolist()
    probabilities = torch.softmax(logits, 1).numpy()
    assert float(values["auroc"]) == pytest.approx(
        skm.roc_auc_score(y, probabilities, multi_class="ovr"), abs=1e-9
    )
    assert float(values["learning_rate"]) == 0.25


def test_binary_ranking_metrics_get_the_positive_class_probability() -> None:
    logits = torch.randn(30, 2, generator=GEN)
    labels = torch.randint(0, 2, (30,), generator=GEN)
    output = ClassificationOutput(F.cross_entropy(logits, labels), logits, labels)
    positive = torch.softmax(logits, 1)[:, 1].numpy()
    auroc = AUROCMetric(capacity=64)
    auroc.update(*adapt(output, auroc).args)
    assert float(auroc.compute()) == pytest.approx(skm.roc_auc_score(labels, positive))
    binned = AUCMetric(num_thresholds=1000)  # needs scores in [0, 1]
    binned.update(*adapt(output, binned).args)
    assert float(binned.compute()) == pytest.approx(skm.roc_auc_score(labels, positive), abs=0.02)
    two_class = AUROCMetric(2, capacity=64)  # multiclass with two classes: both columns
    assert adapt(output, two_class).args[1].shape == (30, 2)


def test_multilabel_metrics_see_sigmoid_scores() -> None:
    logits = torch.randn(20, 3, generator=GEN)
    targets = torch.randint(0, 2, (20, 3), generator=GEN)
    output = MultiLabelClassificationOutput(torch.tensor(0.3), logits, targets)
    metric = F1ScoreMetric(3, average_type="micro", multilabel=True)
    inputs = adapt(output, metric)
    assert torch.equal(inputs.args[1], torch.sigmoid(logits))
    metric.update(*inputs.args, **inputs.kwargs)
    expected = skm.f1_score(
        targets.numpy(), (torch.sigmoid(logits) > 0.5).int().numpy(), average="micro"
    )
    assert float(metric.compute()) == pytest.approx(expected)
    loss = adapt(output, MeanMetric())
    assert loss.args[1:] == (20.0,) and loss.kwargs == {}  # weight, positionally


def test_regression_output_is_reshaped_to_the_targets() -> None:
    pred = torch.tensor([[1.0], [2.0], [4.0]])
    targets = torch.tensor([1.5, 2.0, 3.0])
    output = RegressionOutput(F.mse_loss(pred.squeeze(1), targets), pred, targets)
    for metric, expected in (
        (MSEMetric(), skm.mean_squared_error),
        (MAEMetric(), skm.mean_absolute_error),
    ):
        inputs = adapt(output, metric)
        assert inputs.args[1].shape == targets.shape
        metric.update(*inputs.args)
        assert float(metric.compute()) == pytest.approx(
            expected(targets.numpy(), pred.squeeze(1).numpy())
        )


def test_sequence_output_weights_out_the_padding() -> None:
    logits = torch.randn(2, 4, 5, generator=GEN)
    targets = torch.tensor([[1, 2, 0, 0], [3, 4, 4, 0]])
    loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=0)
    output = SequenceOutput(loss, logits, targets, pad_id=0)
    keep = targets.flatten() != 0
    flat_logits = logits.flatten(0, 1)
    accuracy = AccuracyMetric()
    inputs = adapt(output, accuracy)
    accuracy.update(*inputs.args, **inputs.kwargs)
    expected = skm.accuracy_score(targets.flatten()[keep], flat_logits[keep].argmax(1))
    assert float(accuracy.compute()) == pytest.approx(expected)
    perplexity = PerplexityMetric()
    inputs = adapt(output, perplexity)
    perplexity.update(*inputs.args, **inputs.kwargs)
    expected_ppl = math.exp(F.cross_entropy(flat_logits[keep], targets.flatten()[keep]).item())
    assert float(perplexity.compute()) == pytest.approx(expected_ppl, rel=1e-6)
    mean = MeanMetric()
    inputs = adapt(output, mean)
    assert int(inputs.args[1]) == 5  # the weight: the tokens the loss averages over
    with pytest.raises(AdaptorError, match="pad id"):
        adapt(output, AUROCMetric(5, capacity=16))
    unpadded = SequenceOutput(loss, logits, targets)
    labels, scores = adapt(unpadded, AUROCMetric(5, capacity=16)).args
    assert labels.shape == (8,)
    assert torch.allclose(scores, torch.softmax(flat_logits, 1))


@dataclass(frozen=True)
class Detection:
    loss: torch.Tensor
    scores: torch.Tensor
    labels: torch.Tensor


@dataclass(frozen=True)
class FancyDetection:
    loss: torch.Tensor
    scores: torch.Tensor
    labels: torch.Tensor


class SubDetection(Detection):
    pass


class Hits(Metric):
    """Counts label == argmax hits (a user metric, subclassed below)."""

    def __init__(self, name: str | None = None) -> None:
        super().__init__(name)
        self.register_state("hits", torch.zeros((), dtype=torch.float64))

    def update(self, labels: torch.Tensor, predictions: torch.Tensor) -> None:
        self.hits.add_((predictions.argmax(-1) == labels).sum())

    def compute(self) -> torch.Tensor:
        return self.hits.clone()


class MoreHits(Hits):
    pass


def test_registered_adaptor_serves_subclasses_of_output_and_metric() -> None:
    register_adaptor(Detection, Hits, lambda out: (out.labels, out.scores))
    output = SubDetection(torch.tensor(0.0), torch.eye(3), torch.tensor([0, 1, 0]))
    metric = MoreHits()
    assert find_adaptor(SubDetection, MoreHits) is find_adaptor(Detection, Hits)
    metric.update(*adapt(output, metric).args)
    assert float(metric.compute()) == 2.0


def test_per_metric_adaptor_overrides_the_registry() -> None:
    output = FancyDetection(torch.tensor(1.5), torch.eye(2), torch.tensor([1, 1]))
    metrics = SplitMetrics(
        "train",
        [
            (AccuracyMetric(), lambda out: MetricInput(out.labels, out.scores)),
            (MeanMetric("loss"), lambda out: MetricInput(out.loss, weight=2.0)),
        ],
        "cpu",
    )
    metrics.update(output, torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1))
    values = metrics.compute()
    assert float(values["accuracy"]) == 0.5 and float(values["loss"]) == 1.5


def test_missing_adaptor_names_the_output_and_metric_types() -> None:
    output = RegressionOutput(torch.tensor(0.0), torch.zeros(2), torch.zeros(2))
    with pytest.raises(AdaptorError, match=r"RegressionOutput.*AccuracyMetric.*'accuracy'"):
        adapt(output, AccuracyMetric())
    assert find_adaptor(RegressionOutput, AccuracyMetric) is None
    assert find_adaptor(ClassificationOutput, LearningRateMetric) is None  # fed the optimizer


def test_adaptor_must_return_update_arguments() -> None:
    output = Detection(torch.tensor(0.0), torch.eye(2), torch.tensor([0, 1]))
    with pytest.raises(AdaptorError, match=r"MetricInput or a tuple.*list"):
        adapt(output, AccuracyMetric(), lambda out: [out.labels, out.scores])


def test_register_adaptor_checks_its_arguments() -> None:
    with pytest.raises(TypeError, match="output_type"):
        register_adaptor("Detection", Hits, lambda out: ())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="metric_type"):
        register_adaptor(Detection, Hits(), lambda out: ())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="fn"):
        register_adaptor(Detection, Hits, None)  # type: ignore[arg-type]


def test_loss_metric_needs_a_loss() -> None:
    output = ClassificationOutput(None, torch.eye(2), torch.tensor([0, 1]))  # type: ignore[arg-type]
    with pytest.raises(AdaptorError, match="loss=None"):
        adapt(output, MeanMetric())


# ------------------------------------------------------------------ defaults by input_kind


def test_the_defaults_follow_input_kind_not_classes() -> None:
    class Agreement(Metric):  # a user metric: its declared kind picks its default adaptor
        input_kind = "classification"

        def __init__(self) -> None:
            super().__init__("agreement")
            self.register_state("hits", torch.zeros((), dtype=torch.float64))
            self.register_state("seen", torch.zeros((), dtype=torch.float64))

        def update(self, labels: torch.Tensor, predictions: torch.Tensor) -> None:
            self.hits.add_((predictions.argmax(-1) == labels).sum())
            self.seen.add_(labels.numel())

        def compute(self) -> torch.Tensor:
            return self.hits / self.seen

    batches = classification_batches()
    metric = Agreement()
    for output in batches:
        metric.update(*adapt(output, metric).args)
    labels = torch.cat([b.targets for b in batches])
    logits = torch.cat([b.output for b in batches])
    assert float(metric.compute()) == pytest.approx(
        skm.accuracy_score(labels.numpy(), logits.argmax(1).numpy())
    )
    assert find_adaptor(ClassificationOutput, Agreement) is find_adaptor(
        ClassificationOutput, AccuracyMetric
    )
    assert find_adaptor(RegressionOutput, Agreement) is None


def test_a_registered_adaptor_wins_over_the_kind_default() -> None:
    class Special(AccuracyMetric):
        pass

    def swapped(out: ClassificationOutput) -> MetricInput:
        return MetricInput(out.targets, torch.zeros_like(out.output))

    register_adaptor(ClassificationOutput, Special, swapped)
    assert find_adaptor(ClassificationOutput, Special) is swapped
    assert find_adaptor(ClassificationOutput, AccuracyMetric) is not swapped


def test_a_loss_quantile_gets_the_loss_weighted_by_batch_size() -> None:
    batches = classification_batches()  # sizes 5, 9, 2
    quantile = QuantileMetric(0.0, 5.0, quantiles=(0.5,), num_bins=5000)
    for output in batches:
        inputs = adapt(output, quantile)
        quantile.update(*inputs.args, **inputs.kwargs)
    losses = np.array([float(b.loss) for b in batches])
    sizes = np.array([float(b.targets.numel()) for b in batches])
    order = np.argsort(losses)
    cumulative = np.cumsum(sizes[order]) / sizes.sum()
    weighted_median = losses[order][np.searchsorted(cumulative, 0.5)]
    assert float(quantile.compute()[0]) == pytest.approx(weighted_median, abs=5.0 / 5000)


def test_hamming_score_gets_sigmoid_scores_first_from_a_multilabel_output() -> None:
    logits = torch.randn(25, 4, generator=GEN)
    targets = torch.randint(0, 2, (25, 4), generator=GEN)
    output = MultiLabelClassificationOutput(torch.tensor(0.1), logits, targets)
    metric = HammingScoreMetric()
    inputs = adapt(output, metric)
    metric.update(*inputs.args, **inputs.kwargs)
    predicted = (torch.sigmoid(logits) > 0.5).int().numpy()
    expected = 1.0 - skm.hamming_loss(targets.numpy(), predicted)
    assert float(metric.compute()) == pytest.approx(expected)


def test_precision_at_k_ranks_the_raw_scores_of_each_sample() -> None:
    # Logits far apart: a softmax would turn the runners-up into tied zeros, and the top 2
    # would depend on tie-breaking instead of the scores.
    logits = torch.tensor([[-150.0, -200.0, -120.0, 300.0], [10.0, -300.0, -100.0, -120.0]])
    labels = torch.tensor([2, 2])
    output = ClassificationOutput(torch.tensor(0.0), logits, labels)
    metric = PrecisionAtKMetric(2)
    inputs = adapt(output, metric)
    assert torch.equal(inputs.args[1], logits)
    metric.update(*inputs.args, **inputs.kwargs)
    # top 2 of row 0: classes 3, 2 (one hit); of row 1: classes 0, 2 (one hit) -> 2 / (2 * 2)
    assert float(metric.compute()) == 0.5
    on_probabilities = PrecisionAtKMetric(2)  # what a softmax first would have given
    on_probabilities.update(labels, torch.softmax(logits, dim=1))
    assert float(on_probabilities.compute()) == 0.0
    multilabel = MultiLabelClassificationOutput(torch.tensor(0.0), logits, (logits > 0).long())
    with pytest.raises(AdaptorError, match=r"PrecisionAtKMetric takes the ids.*0/1 indicators"):
        adapt(multilabel, metric)


def test_recall_at_k_on_a_sequence_weights_out_the_padding() -> None:
    logits = torch.randn(2, 3, 5, generator=GEN)
    targets = torch.tensor([[1, 2, 0], [3, 4, 4]])
    output = SequenceOutput(torch.tensor(0.0), logits, targets, pad_id=0)
    metric = RecallAtKMetric(2)
    inputs = adapt(output, metric)
    metric.update(*inputs.args, **inputs.kwargs)
    flat, labels = logits.flatten(0, 1), targets.flatten()
    keep = labels != 0
    top2 = flat[keep].topk(2, dim=1).indices
    expected = (top2 == labels[keep, None]).any(1).float().mean().item()
    assert float(metric.compute()) == pytest.approx(expected)
