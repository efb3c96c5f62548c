"""The traps TorchMetrics users fall into on a metrics library, each a clear error or the number
TorchMetrics gives (the compat layer's side of issue 14)."""

from __future__ import annotations

import pytest
import torch
import torchmetrics as tm

from torchtally.compat import torchmetrics as ttm
from torchtally.metrics import MetricValueError


def test_swapped_arguments_in_multiclass_raise_naming_the_order() -> None:
    probs, labels = torch.rand(4, 3).softmax(-1), torch.tensor([0, 1, 2, 1])
    with pytest.raises(ValueError, match=r"preds"):
        ttm.MulticlassAccuracy(3)(labels, probs)
    with pytest.raises(ValueError, match=r"update\(preds, target\)"):
        ttm.MulticlassAccuracy(3)(labels.float(), labels.float())


def test_swapped_binary_arguments_raise_at_compute() -> None:
    # (target, probabilities) instead of (probabilities, target): 0.9 is no binary label.
    metric = ttm.BinaryAccuracy()
    metric.update(torch.tensor([1, 0, 1]), torch.tensor([0.9, 0.2, 0.7]))
    with pytest.raises(MetricValueError, match="neither a valid class"):
        metric.compute()


def test_logits_go_through_a_sigmoid_per_batch() -> None:
    logits, target = torch.tensor([2.0, -1.5, 0.3, -0.2]), torch.tensor([1, 0, 1, 0])
    assert float(ttm.BinaryF1Score()(logits, target)) == 1.0
    assert float(tm.classification.BinaryF1Score()(logits, target)) == 1.0
    multilabel_logits = torch.tensor([[3.0, -2.0], [-1.0, 0.5]])
    value = ttm.MultilabelF1Score(2)(multilabel_logits, torch.tensor([[1, 0], [0, 1]]))
    assert float(value) == 1.0


def test_the_logit_decision_happens_without_a_host_read() -> None:
    from torchtally.testing import assert_traceable

    assert_traceable(ttm.BinaryF1Score(), torch.randn(16), torch.randint(0, 2, (16,)))


def test_padding_labels_are_ignored_with_ignore_index() -> None:
    preds = torch.tensor([0, 1, 2, 2, 1])
    target = torch.tensor([0, 1, 2, -100, -100])
    metric = ttm.MulticlassAccuracy(3, ignore_index=-100)
    assert float(metric(preds, target)) == 1.0


def test_padding_labels_without_ignore_index_raise() -> None:
    metric = ttm.MulticlassAccuracy(3)
    metric.update(torch.tensor([0, 1, 2]), torch.tensor([0, 1, -100]))
    with pytest.raises(MetricValueError, match="1 "):
        metric.compute()


def test_binary_label_2_and_fractional_labels_raise() -> None:
    for target in (torch.tensor([0, 1, 2]), torch.tensor([0.0, 1.0, 0.5])):
        metric = ttm.BinaryAccuracy()
        metric.update(torch.tensor([0.1, 0.9, 0.8]), target)
        with pytest.raises(MetricValueError):
            metric.compute()


def test_float_zero_one_targets_are_accepted_as_in_torchmetrics() -> None:
    preds, target = torch.tensor([0.1, 0.9, 0.8]), torch.tensor([0.0, 1.0, 0.0])
    ours = ttm.BinaryAccuracy()(preds, target)
    theirs = tm.classification.BinaryAccuracy()(preds, target)
    assert float(ours) == pytest.approx(float(theirs))


def test_task_facades_build_the_task_class_with_torchmetrics_defaults() -> None:
    acc = ttm.Accuracy(task="multiclass", num_classes=5)
    assert type(acc).__name__ == "MulticlassAccuracy" and acc.average == "micro"
    assert type(ttm.F1Score(task="multilabel", num_labels=3)).__name__ == "MultilabelF1Score"
    assert type(ttm.JaccardIndex(task="binary")).__name__ == "BinaryJaccardIndex"
    with pytest.raises(ValueError, match="num_classes"):
        ttm.Accuracy(task="multiclass")
    with pytest.raises(ValueError, match="task"):
        ttm.Accuracy(task="regression")


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: ttm.MulticlassAccuracy(1), "num_classes"),
        (lambda: ttm.MulticlassAccuracy(3, average="samples"), "average"),
        (lambda: ttm.MulticlassAccuracy(3, top_k=4), "top_k"),
        (lambda: ttm.BinaryAccuracy(threshold=2.0), "threshold"),
        (lambda: ttm.BinaryAccuracy(multidim_average="per_sample"), "multidim_average"),
        (lambda: ttm.BinaryAccuracy(capacity=10), "capacity"),
        (lambda: ttm.MulticlassSpecificity(None, average="micro"), "num_classes"),
        (lambda: ttm.MulticlassAccuracy(None), "num_classes"),
        (lambda: ttm.BinaryPrecision(zero_division=0.5), "zero_division"),
        (lambda: ttm.MulticlassConfusionMatrix(3, normalize="rows"), "normalize"),
        (lambda: ttm.MeanMetric(nan_strategy="drop"), "nan_strategy"),
        (lambda: ttm.CosineSimilarity(reduction="none"), "reduction"),
        (lambda: ttm.BinaryAccuracy(compute_on_gpu=True), "compute_on_gpu"),
    ],
)
def test_bad_arguments_name_the_argument(build: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build()  # type: ignore[operator]


def test_nan_strategy_error_raises_at_compute() -> None:
    metric = ttm.MeanMetric(nan_strategy="error")
    metric.update(torch.tensor([1.0, float("nan")]))
    with pytest.raises(MetricValueError, match="NaN"):
        metric.compute()


def test_multioutput_r2_reads_its_width_from_the_first_batch() -> None:
    # TorchMetrics' R2Score has no `num_outputs`: a 2-D first batch sets the width
    import torchmetrics

    preds, target = torch.randn(8, 3), torch.randn(8, 3)
    ours = ttm.R2Score(multioutput="raw_values")(preds, target)
    theirs = torchmetrics.R2Score(multioutput="raw_values")(preds, target)
    assert ours.shape == (3,)
    torch.testing.assert_close(ours, theirs)
    # declared, the width is preallocated and another one refused
    with pytest.raises(ValueError, match=r"num_outputs"):
        ttm.R2Score(multioutput="raw_values", num_outputs=2)(preds, target)


def test_r2_with_one_sample_raises_like_torchmetrics() -> None:
    metric = ttm.R2Score()
    metric.update(torch.tensor([1.0]), torch.tensor([2.0]))
    with pytest.raises(ValueError, match="at least two samples"):
        metric.compute()


def test_perplexity_refuses_a_mean_loss() -> None:
    with pytest.raises(ValueError, match="mean loss"):
        ttm.Perplexity()(torch.tensor(5.65), torch.tensor(0))


def test_perplexity_counts_out_of_vocabulary_ids() -> None:
    metric = ttm.Perplexity()
    metric.update(torch.randn(1, 3, 5), torch.tensor([[0, 1, 7]]))
    with pytest.raises(MetricValueError, match="token ids"):
        metric.compute()


def test_plot_draws_scalars_vectors_matrices_and_histories() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metric = ttm.MulticlassAccuracy(3, average="none")
    metric.update(torch.tensor([0, 1, 2, 2]), torch.tensor([0, 1, 1, 2]))
    _fig, ax = metric.plot()
    assert len(ax.patches) == 3  # one bar per class
    _, ax = ttm.MulticlassConfusionMatrix(3).plot(torch.eye(3))
    assert ax.images
    _, ax = ttm.MeanMetric().plot([torch.tensor(1.0), torch.tensor(2.0)])
    assert list(ax.lines[0].get_ydata()) == [1.0, 2.0]
    plt.close("all")


def test_per_element_psnr_without_a_reduction_is_refused() -> None:
    from torchtally.compat.torchmetrics import PeakSignalNoiseRatio

    with pytest.raises(
        ValueError, match=r"Argument `reduction` must be 'elementwise_mean' or 'sum'"
    ):
        PeakSignalNoiseRatio(data_range=1.0, dim=(1, 2, 3), reduction="none")
    with pytest.raises(ValueError, match=r"Argument `dim` must be None, an int or a tuple of ints"):
        PeakSignalNoiseRatio(data_range=1.0, dim="hw")
