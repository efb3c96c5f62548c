"""IterationSpeedMetric with an injected clock (hand-computed rates) and traceable updates."""

from __future__ import annotations

import doctest

import pytest
import torch

import torchtally.metrics.throughput._speed as speed_module
from torchtally.metrics.throughput import IterationSpeedMetric
from torchtally.testing import assert_traceable


def test_rate_since_start_and_reset() -> None:
    now = [10.0]
    speed = IterationSpeedMetric(clock=lambda: now[0])
    speed.update(torch.tensor(30))
    speed.update(10)
    now[0] = 14.0
    assert float(speed.compute()) == pytest.approx(40 / 4)
    speed.reset()
    speed.update(5)
    now[0] = 15.0
    assert float(speed.compute()) == pytest.approx(5 / 1)


def test_merge_sums_items() -> None:
    now = [0.0]
    a, b = IterationSpeedMetric(clock=lambda: now[0]), IterationSpeedMetric(clock=lambda: now[0])
    a.update(3)
    b.update(5)
    now[0] = 2.0
    assert float(a.merge_state(b).compute()) == pytest.approx(4.0)


def test_update_is_traceable_and_checks_its_argument() -> None:
    # A frozen clock: compiled and eager computes read it at different times otherwise.
    frozen = IterationSpeedMetric(clock=lambda: 0.0)
    report = assert_traceable(frozen, torch.tensor(8), check_compute=False)
    assert report.graphs == 1
    with pytest.raises(TypeError, match="`items` must be an int or a tensor"):
        IterationSpeedMetric().update(2.5)  # type: ignore[arg-type]


def test_docstring_example() -> None:
    result = doctest.testmod(speed_module, extraglobs={"torch": torch})
    assert result.attempted > 0 and result.failed == 0
