"""The bad-input failures reported in issue 13, one test each (the matrix covers the rest)."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import torch
from sklearn.metrics import mean_absolute_error, mean_squared_error, r2_score

from torchtally.metrics import (
    LearningRateMetric,
    MAEMetric,
    MeanMetric,
    Metric,
    MetricValueError,
    MSEMetric,
    PerplexityMetric,
    R2ScoreMetric,
)


def test_int64_values_are_summed_exactly() -> None:
    mean = MeanMetric()
    mean.update(torch.tensor([16777217, 16777217], dtype=torch.int64))
    assert mean.weighted_sum.item() == 2 * 16777217  # float32 arithmetic gives 33554432
    exact = MeanMetric()
    exact.update(torch.tensor([16777217], dtype=torch.int64), dtype=torch.float64)
    assert exact.compute().item() == 16777217.0


@pytest.mark.parametrize("weight", [-1.0, -1, float("nan")])
def test_a_python_number_weight_is_checked(weight: float) -> None:
    mean = MeanMetric()
    mean.update(torch.ones(3), weight=weight)
    with pytest.raises(MetricValueError, match="negative weights"):
        mean.compute()


def test_a_nan_weight_tensor_is_counted() -> None:
    mean = MeanMetric()
    mean.update(torch.ones(3), weight=torch.tensor([1.0, float("nan"), 1.0]))
    with pytest.raises(MetricValueError, match=r"negative weights \(1 value\)"):
        mean.compute()


@pytest.mark.parametrize("shape", [(4, 1), (3,)])
def test_a_weight_that_does_not_fit_the_values_is_a_clear_error(shape: tuple[int, ...]) -> None:
    with pytest.raises(ValueError, match=r"Argument `weight` must be a scalar or broadcastable"):
        MeanMetric().update(torch.ones(4), weight=torch.ones(shape))


@pytest.mark.parametrize(
    ("rate", "error", "message"),
    [
        ([0.1, 0.2], ValueError, "must hold exactly one value"),
        (torch.tensor([0.1, 0.2]), ValueError, "must hold exactly one value"),
        (torch.tensor([]), ValueError, "must hold exactly one value"),
        ("0.1", TypeError, "must be a number, a one-element tensor or an optimizer"),
    ],
)
def test_learning_rate_rejects_what_is_not_one_rate(
    rate: object, error: type, message: str
) -> None:
    with pytest.raises(error, match=rf"Argument `learning_rate` {message}"):
        LearningRateMetric().update(rate)


def test_learning_rate_takes_numbers_lists_of_one_and_numpy() -> None:
    for rate in (0.5, [0.5], np.float64(0.5), torch.tensor([0.5])):
        assert float(LearningRateMetric()(rate)) == 0.5


def test_lists_and_numpy_give_scikit_learns_numbers() -> None:
    y, p = [0.5, 1.0, 3.0, -2.0], [0.0, 1.5, 2.0, -1.0]
    for make, oracle in (
        (MSEMetric, mean_squared_error),
        (MAEMetric, mean_absolute_error),
        (R2ScoreMetric, r2_score),
    ):
        assert float(make()(y, p)) == pytest.approx(oracle(y, p), rel=1e-6)
        assert float(make()(np.array(y), np.array(p))) == pytest.approx(oracle(y, p), rel=1e-6)
    assert float(MeanMetric()([1, 2, 3])) == 2.0
    assert float(PerplexityMetric()([[1, 2]], [0.0])) == 1.0


def test_strings_and_ragged_lists_are_clear_errors() -> None:
    with pytest.raises(TypeError, match=r"Argument `labels` must be a torch.Tensor"):
        MSEMetric().update("abc", [1.0])
    with pytest.raises(TypeError, match=r"Argument `labels` must be a tensor or convertible"):
        MSEMetric().update([[1.0], [1.0, 2.0]], [1.0, 2.0])


def test_python_numbers_keep_their_value_and_out_of_range_ones_are_clear_errors() -> None:
    """Numbers are filled in on the metric's device (no host tensor copied over): the weight
    keeps its float64 value, and an integer beyond int64 names the argument."""
    tiny = MeanMetric()
    tiny.update(torch.tensor([1.0, 3.0]), weight=1e-200)  # float32 would make it 0 / 0
    assert float(tiny) == 2.0
    mean = MeanMetric()
    mean.update(torch.tensor([1.0, 3.0]), weight=1)
    mean.update(torch.tensor([5.0]), weight=3)
    assert float(mean) == pytest.approx((4.0 + 15.0) / 5.0)
    with pytest.raises(TypeError, match=r"Argument `weight` must be a tensor or convertible"):
        MeanMetric().update(torch.ones(2), weight=2**70)


def test_meta_tensors_are_refused() -> None:
    with pytest.raises(ValueError, match=r"Argument `value` must hold data on the metric"):
        MeanMetric().update(torch.ones(3, device="meta"))
    with pytest.raises(ValueError, match=r"Argument `predictions` must hold data"):
        MSEMetric().update(torch.ones(3), predictions=torch.ones(3, device="meta"))


def test_states_never_hold_autograd_history() -> None:
    w = torch.ones(4, requires_grad=True)
    loss = (w * 3).sum()
    mean = MeanMetric("loss")
    mean.update(loss)  # no .detach(): the boundary detaches
    mse = MSEMetric()
    mse.update(w * 2, w)
    for metric in (mean, mse):
        for name, buffer in metric.named_buffers():
            assert not buffer.requires_grad and buffer.grad_fn is None, name
    assert float(mean) == 12.0
    loss.backward()  # the caller's graph is untouched
    assert torch.equal(w.grad, torch.full((4,), 3.0))


def test_a_list_inside_a_compiled_step_is_a_clear_error() -> None:
    metric = MSEMetric()

    @torch.compile(backend="eager", fullgraph=True)
    def step() -> None:
        metric.update([1.0, 2.0], [1.0, 2.0])

    with pytest.raises(Exception, match=r"Argument `labels` must be a torch.Tensor inside a"):
        step()


class _Slow(Metric):
    def __init__(self, entered: threading.Event, release: threading.Event) -> None:
        super().__init__("slow")
        self.entered, self.release = entered, release
        self.register_state("total", torch.zeros(()))

    def update(self, x: torch.Tensor) -> None:
        self.entered.set()
        self.release.wait(10)
        self.total.add_(x.sum())

    def compute(self) -> torch.Tensor:
        return self.total.clone()


def test_two_threads_updating_one_metric_at_once_is_a_clear_error() -> None:
    entered, release = threading.Event(), threading.Event()
    metric = _Slow(entered, release)
    worker = threading.Thread(target=metric.update, args=(torch.ones(2),))
    worker.start()
    assert entered.wait(10)
    try:
        with pytest.raises(RuntimeError, match=r"updated from two threads at once"):
            metric.update(torch.ones(2))
    finally:
        release.set()
        worker.join(10)
    assert float(metric) == 2.0  # the first update completed; the refused one added nothing
    metric.update(torch.ones(2))  # a later update from another thread is fine
    assert float(metric) == 4.0


def test_a_fractional_label_is_no_class() -> None:
    from sklearn.metrics import roc_auc_score

    from torchtally.metrics import AUCMetric, CalibrationErrorMetric

    labels, scores = [0.0, 0.5, 1.0, 1.0], [0.1, 0.4, 0.35, 0.8]
    with pytest.raises(ValueError, match="continuous format is not supported"):
        roc_auc_score(labels, scores)  # the oracle refuses it too
    auc = AUCMetric()
    auc.update(torch.tensor(labels), torch.tensor(scores))  # cstorch order: labels first
    with pytest.raises(MetricValueError, match=r"non-integer labels \(1 value\)"):
        auc.compute()
    calibration = CalibrationErrorMetric(n_bins=4)
    calibration.update(torch.tensor(scores), torch.tensor(labels))  # TorchMetrics order
    with pytest.raises(MetricValueError, match=r"invalid targets \(1 value\)"):
        calibration.compute()
    whole = AUCMetric()
    whole.update(torch.tensor([0.0, 1.0, 1.0, 0.0]), torch.tensor(scores))  # whole floats: fine
    assert float(whole.compute()) == pytest.approx(roc_auc_score([0, 1, 1, 0], scores), abs=0.02)


def test_two_threads_hammering_one_exact_auroc_never_give_a_wrong_value() -> None:
    """Issue 13: two threads updating one exact AUROC gave 0.69-0.71 instead of 0.757 and lost
    updates. Now every update either lands whole or is refused with a clear error, so the
    value is scikit-learn's over exactly the accepted batches."""
    from sklearn.metrics import roc_auc_score

    from torchtally.metrics import AUROCMetric

    per_thread, rows = 150, 8
    metric = AUROCMetric(capacity=2 * per_thread * rows)
    accepted: list[list[tuple[torch.Tensor, torch.Tensor]]] = [[], []]
    refused = [0, 0]
    unexpected: list[BaseException] = []
    start = threading.Barrier(2)

    def work(index: int) -> None:
        g = torch.Generator().manual_seed(index)
        start.wait()
        for _ in range(per_thread):
            labels = torch.randint(0, 2, (rows,), generator=g)
            scores = (labels * 0.3 + torch.rand(rows, generator=g) * 0.7).clamp(0, 1)
            try:
                metric.update(labels, scores)
            except RuntimeError as error:
                if "updated from two threads at once" not in str(error):
                    unexpected.append(error)
                refused[index] += 1
                continue
            except BaseException as error:  # reported below, not lost in the thread
                unexpected.append(error)
                continue
            accepted[index].append((labels, scores))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not unexpected, unexpected
    batches = accepted[0] + accepted[1]
    assert len(batches) + sum(refused) == 2 * per_thread
    assert metric.num_updates == len(batches)  # no update counted twice or lost
    labels = torch.cat([b[0] for b in batches]).numpy()
    scores = torch.cat([b[1] for b in batches]).numpy()
    assert float(metric.compute()) == pytest.approx(roc_auc_score(labels, scores), abs=1e-6)


def test_a_bootstrap_with_empty_resamples_is_a_clear_error_not_nan() -> None:
    from torchtally.metrics import BootStrapper

    boot = BootStrapper(MeanMetric(), 64, weight_arg="weight")
    boot.update(torch.arange(12.0)[None, :])  # one sample (dim 0) of 12 values
    # P(a Poisson(1) draw is 0) = e^-1: about 24 of the 64 replicas resampled nothing
    with pytest.raises(MetricValueError, match=r"\d+ of 64 bootstrap replicas have no value"):
        boot.compute()
    boot.update(torch.arange(400.0))  # enough samples: every replica has some now
    assert float(boot.compute()["mean"]) == pytest.approx(199.5, rel=0.05)
    fresh = BootStrapper(MeanMetric(), 64, weight_arg="weight").compute()
    assert torch.isnan(fresh["mean"])  # no data at all: the wrapped metric's own value


def test_a_python_learning_rate_keeps_its_float64_value() -> None:
    optimizer = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
    for rate in (0.1, [0.1], np.float64(0.1), optimizer):
        assert float(LearningRateMetric()(rate)) == 0.1  # not 0.10000000149 (float32)
