"""HammingScoreMetric against TorchMetrics' MultilabelHammingDistance (micro) and sklearn."""

from __future__ import annotations

import doctest
import importlib

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import hamming_loss
from torchmetrics.classification import MultilabelHammingDistance

from torchtally.metrics.multilabel import HammingScoreMetric


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 40), labels=st.integers(2, 6))
def test_matches_torchmetrics_and_sklearn(seed: int, n: int, labels: int) -> None:
    g = torch.Generator().manual_seed(seed)
    preds = torch.rand(n, labels, generator=g)
    target = torch.randint(0, 2, (n, labels), generator=g)
    metric = HammingScoreMetric()
    metric.update(preds[: n // 2], target[: n // 2])
    metric.update(preds[n // 2 :], target[n // 2 :])
    theirs = MultilabelHammingDistance(labels, average="micro")(preds, target)
    assert float(metric.compute()) == pytest.approx(1 - float(theirs), abs=1e-6)
    expected = 1 - hamming_loss(target.numpy(), (preds > 0.5).long().numpy())
    assert float(metric.compute()) == pytest.approx(expected)


def test_weights_equal_repetition() -> None:
    g = torch.Generator().manual_seed(1)
    preds, target = torch.rand(8, 3, generator=g), torch.randint(0, 2, (8, 3), generator=g)
    repeats = torch.randint(0, 3, (8,), generator=g)
    weighted = HammingScoreMetric()
    weighted.update(preds, target, repeats.double())
    repeated = HammingScoreMetric()
    repeated.update(preds.repeat_interleave(repeats, 0), target.repeat_interleave(repeats, 0))
    assert float(weighted.compute()) == pytest.approx(float(repeated.compute()))


def test_docstring_examples() -> None:
    for name in (
        "torchtally.functional.multilabel._hamming",
        "torchtally.metrics.multilabel._hamming",
    ):
        result = doctest.testmod(importlib.import_module(name), extraglobs={"torch": torch})
        assert result.attempted > 0 and result.failed == 0
