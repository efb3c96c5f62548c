"""The executor's profiler against a fake clock: `rate` is smoothed, `global_rate` is not."""

from __future__ import annotations

import pytest
import torch

from torchtally.utils.data import DataExecutor, Profiler


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_profiler_rates_match_hand_computed_values() -> None:
    clock = FakeClock()
    profiler = Profiler(clock=clock, smoothing=0.4)
    assert profiler.rate() == 0.0 and profiler.global_rate() == 0.0  # not started
    profiler.start()
    profiler.add_samples(20)
    clock.now += 2.0
    # first interval: 20 samples / 2 s = 10; the average starts at the first value
    assert profiler.rate() == pytest.approx(10.0)
    assert profiler.global_rate() == pytest.approx(10.0)
    profiler.add_samples(60)
    clock.now += 1.0
    # second interval: 60 / 1 = 60; smoothed 0.4 * 10 + 0.6 * 60 = 40; global 80 / 3
    assert profiler.rate() == pytest.approx(40.0)
    assert profiler.global_rate() == pytest.approx(80 / 3)
    clock.now += 4.0
    # an interval with no samples: rate 0; smoothed 0.4 * 40 = 16; global 80 / 7
    assert profiler.rate() == pytest.approx(16.0)
    assert profiler.global_rate() == pytest.approx(80 / 7)
    # no time elapsed since the last query: the last value, unchanged
    assert profiler.rate() == pytest.approx(16.0)
    assert profiler.total_samples == 80


def test_the_executor_counts_each_batch_after_its_step() -> None:
    clock = FakeClock()
    batches = [(torch.zeros(4, 3), torch.zeros(4))] * 3
    executor = DataExecutor(batches, num_steps=6, clock=clock)
    rates = []
    for _ in executor:
        clock.now += 0.5  # every step takes half a second
        rates.append((executor.profiler.global_rate(), executor.profiler.rate()))
    # samples count once their step has finished: after k steps, 4(k-1) samples in 0.5k s
    assert [g for g, _ in rates] == pytest.approx([0.0, 4.0, 16 / 3, 6.0, 32 / 5, 20 / 3])
    # each query sees one finished batch (4 samples, 8/s) since the last, except the first:
    # 0, then 0.4 * previous + 0.6 * 8
    assert [r for _, r in rates] == pytest.approx([0.0, 4.8, 6.72, 7.488, 7.7952, 7.91808])
    assert executor.profiler.global_rate() == pytest.approx(24 / 3.0)
    assert executor.profiler.total_samples == 24


def test_batches_without_tensors_count_by_the_loader_batch_size_or_one() -> None:
    class Loader(list):  # type: ignore[type-arg]
        batch_size = 5

    executor = DataExecutor(Loader([["a"], ["b"]]))
    list(executor)
    assert executor.profiler.total_samples == 10
    executor = DataExecutor([{"text": "a"}, {"text": "b"}, {"text": "c"}])
    list(executor)
    assert executor.profiler.total_samples == 3


def test_only_requested_activities_can_be_queried() -> None:
    profiler = Profiler(["global_rate"])
    with pytest.raises(RuntimeError, match=r"does not track 'rate'"):
        profiler.rate()
    with pytest.raises(ValueError, match=r"Argument `profiler_activities` must be one of"):
        DataExecutor([torch.zeros(1)], profiler_activities=["rate", "latency"])
    with pytest.raises(ValueError, match=r"Argument `smoothing` must be in \[0, 1\)"):
        Profiler(smoothing=1.0)
