"""TorchMetrics' flat retrieval form over a preallocated buffer: clear errors where
TorchMetrics' unbounded lists would have grown."""

from __future__ import annotations

import pytest
import torch

from torchtally._errors import MetricValueError
from torchtally.compat.torchmetrics import RetrievalMRR, RetrievalNormalizedDCG


def test_overflow_is_a_clear_error() -> None:
    metric = RetrievalMRR(capacity=10)
    for _ in range(2):
        metric.update(torch.rand(6), torch.randint(0, 2, (6,)), torch.randint(0, 3, (6,)))
    with pytest.raises(MetricValueError, match=r"received 12 candidates.*capacity >= 12"):
        metric.compute()


def test_unsupported_aggregation_and_swapped_arguments_are_clear_errors() -> None:
    with pytest.raises(ValueError, match=r"Argument `aggregation` must be one of"):
        RetrievalNormalizedDCG(aggregation="mode")  # median and callables are supported
    metric = RetrievalNormalizedDCG()
    with pytest.raises(ValueError, match=r"order: update\(preds, target, indexes\)"):
        metric.update(torch.tensor([0, 1]), torch.tensor([0.3, 0.2]), torch.tensor([0, 0]))


def test_hand_computed_mrr() -> None:
    # query 0: first relevant at rank 2 -> 1/2; query 1: rank 1 -> 1
    metric = RetrievalMRR()
    preds = torch.tensor([0.9, 0.5, 0.1, 0.8, 0.3])
    target = torch.tensor([0, 1, 0, 1, 0])
    indexes = torch.tensor([0, 0, 0, 1, 1])
    assert float(metric(preds, target, indexes)) == pytest.approx(0.75)


def test_spearman_overflow_is_a_clear_error() -> None:
    from torchtally.compat.torchmetrics import SpearmanCorrCoef

    metric = SpearmanCorrCoef(capacity=5)
    metric.update(torch.rand(4), torch.rand(4))
    metric.update(torch.rand(4), torch.rand(4))
    with pytest.raises(ValueError, match=r"received 8 pairs.*capacity >= 8"):
        metric.compute()


def test_median_aggregation_traces() -> None:
    from torchtally.testing import assert_traceable

    metric = RetrievalMRR(aggregation="median", capacity=64)
    preds, target = torch.rand(12), torch.randint(0, 2, (12,))
    report = assert_traceable(metric, preds, target, torch.randint(0, 4, (12,)))
    assert report.graphs == 1 and report.recompiles == 0 and not report.unbacked
