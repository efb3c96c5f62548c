"""WER and CER against TorchMetrics 1.9 on random sentences, and the traced-step refusal."""

from __future__ import annotations

import doctest
import importlib
import random

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torchmetrics.text import CharErrorRate, WordErrorRate

from torchtally.metrics.text import CharErrorRateMetric, WordErrorRateMetric

WORDS = ["a", "cat", "sat", "on", "the", "mat", "dog", "ran"]


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 7)))


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 6))
def test_match_torchmetrics(seed: int, n: int) -> None:
    rng = random.Random(seed)
    preds = [_sentence(rng) for _ in range(n)]
    target = [_sentence(rng) for _ in range(n)]
    for ours, theirs in (
        (WordErrorRateMetric(), WordErrorRate()),
        (CharErrorRateMetric(), CharErrorRate()),
    ):
        ours.update(preds[:1], target[:1])
        ours.update(preds[1:], target[1:])
        theirs.update(preds, target)
        assert float(ours.compute()) == pytest.approx(float(theirs.compute()))


def test_refused_inside_a_compiled_step_and_bad_inputs() -> None:
    metric = WordErrorRateMetric()

    @torch.compile(fullgraph=True, backend="eager")
    def step() -> None:
        metric.update(["a b"], ["a c"])

    with pytest.raises(Exception, match="host work"):
        step()
    with pytest.raises(ValueError, match="as many strings"):
        metric.update(["a"], ["a", "b"])
    with pytest.raises(TypeError, match="list of strings"):
        metric.update([1], ["a"])  # type: ignore[list-item]


def test_docstring_examples() -> None:
    for name in ("torchtally.functional.text._edit", "torchtally.metrics.text._error_rate"):
        result = doctest.testmod(importlib.import_module(name), extraglobs={"torch": torch})
        assert result.attempted > 0 and result.failed == 0
