"""The word-information string metrics: host work that refuses a traced step, and clear input
errors (their values are in the oracle registry, tests/compat/tm_cases.py)."""

from __future__ import annotations

import pytest
import torch
import torchmetrics.text as tm_text

from torchtally.compat.torchmetrics import text

NAMES = ("MatchErrorRate", "WordInfoLost", "WordInfoPreserved")


@pytest.mark.parametrize("name", NAMES)
def test_refuses_a_traced_step_then_counts_eagerly(name: str) -> None:
    metric = getattr(text, name)()

    @torch.compile(fullgraph=True, backend="eager")
    def step(x: torch.Tensor) -> torch.Tensor:
        metric.update(["a b"], ["a c"])
        return x + 1

    with pytest.raises(Exception, match="host work"):
        step(torch.zeros(1))
    metric.update(["a b c"], ["a c"])
    oracle = getattr(tm_text, name)()
    oracle.update(["a b c"], ["a c"])
    assert float(metric.compute()) == pytest.approx(float(oracle.compute()))


@pytest.mark.parametrize("name", NAMES)
def test_mismatched_lists_raise(name: str) -> None:
    with pytest.raises(ValueError, match="as many strings"):
        getattr(text, name)().update(["a", "b"], ["a"])
    with pytest.raises(TypeError, match="strings or lists of strings"):
        getattr(text, name)().update([1], ["a"])
