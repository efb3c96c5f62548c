"""Interleaved timing: every contender runs once per round, in turn, so machine noise hits all
of them alike; results are medians over rounds."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Timing:
    name: str
    median_s: float
    samples: int
    #: Every sample, in round order (for paired per-round ratios between contenders).
    values: tuple[float, ...] = ()

    @property
    def median_us(self) -> float:
        return self.median_s * 1e6


def interleaved(
    contenders: dict[str, Callable[[], object]],
    rounds: int,
    inner: int = 1,
    warmup: int = 3,
    sync: Callable[[], None] | None = None,
    prepare: dict[str, Callable[[], object]] | None = None,
    clock: Callable[[], float] = time.perf_counter,
    finish: dict[str, Callable[[], object]] | None = None,
) -> dict[str, Timing]:
    """Time each callable `inner` times per round over `rounds` rounds, round-robin.

    Args:
        contenders: name -> zero-argument callable.
        rounds: Number of rounds (samples per contender).
        inner: Calls per sample (the sample is their mean), for sub-10µs work.
        warmup: Untimed rounds first (compilation, caches, allocator).
        sync: Called after each sample's calls (e.g. torch.cuda.synchronize) before the clock.
        prepare: name -> untimed callable run before each of that contender's samples
            (e.g. a metric reset, so appended state never outgrows its capacity).
        clock: The clock (seconds). `time.thread_time` counts only this thread's CPU time:
            with one intra-op thread it is the work done, unaffected by other processes
            taking the cores (on a loaded machine wall time swings several-fold).
        finish: name -> callable run once after that contender's `inner` calls, inside the
            timed window (e.g. applying updates a metric held back, so they are paid for).

    Returns:
        name -> Timing with the median seconds per call.
    """
    samples: dict[str, list[float]] = {name: [] for name in contenders}
    for round_index in range(warmup + rounds):
        for name, fn in contenders.items():
            if prepare and name in prepare:
                prepare[name]()
            if sync is not None:
                sync()
            start = clock()
            for _ in range(inner):
                fn()
            if finish and name in finish:
                finish[name]()
            if sync is not None:
                sync()
            elapsed = (clock() - start) / inner
            if round_index >= warmup:
                samples[name].append(elapsed)
    return {
        name: Timing(name, statistics.median(values), len(values), tuple(values))
        for name, values in samples.items()
    }


def paired_ratio(numerator: Timing, denominator: Timing) -> tuple[float, float, float]:
    """Median and quartiles of the per-round ratios `numerator / denominator`.

    Both ran in the same rounds, one after the other, so a round's ratio cancels the noise
    both saw; its median is steadier than a ratio of two medians.
    """
    ratios = sorted(a / b for a, b in zip(numerator.values, denominator.values, strict=True))
    q1, median, q3 = statistics.quantiles(ratios, n=4) if len(ratios) >= 2 else ratios * 3
    return q1, median, q3
