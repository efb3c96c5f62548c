"""The gloo variant of tests/metrics/test_stateful.py: ranks that take part unevenly, with
`compute()` at every step on every rank, against one process fed every rank's data so far.

A rank that has stopped updating still enters every sync (a cached value must not stand in for
a collective the other ranks enter); held small batches, shared and derived collection states
meet the per-step syncs. Bounded: a skipped collective fails within the workers' sync timeout.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch
from _stateful_workers import (
    METRICS,
    STEPS,
    batch,
    collection_members,
    uneven_updates_compute_every_step,
    updates_at,
)
from torch import Tensor

from torchtally.distributed import run_local_ranks

WORLD = 3


@pytest.fixture(scope="module")
def rank_results() -> list[list[dict[str, Any]]]:
    return run_local_ranks(uneven_updates_compute_every_step, WORLD, timeout=150)


def _expected(step: int) -> dict[str, Any]:
    """One plain process fed every rank's batches up to `step`, rank by rank (the order a sync
    gathers them in)."""
    metrics = {name: make().coalesce_updates(False) for name, (make, _) in METRICS.items()}
    members = {n: m.coalesce_updates(False) for n, m in collection_members().items()}
    for rank in range(WORLD):
        for earlier in range(step + 1):
            if updates_at(rank, earlier):
                inputs = batch(rank, earlier)
                for name, metric in metrics.items():
                    metric.update(*inputs[METRICS[name][1]])
                for member in members.values():
                    member.update(*inputs["classification"])
    values = {name: metric.compute() for name, metric in metrics.items()}
    values["collection"] = {name: member.compute() for name, member in members.items()}
    return values


def _assert_close(actual: Any, expected: Any, where: str) -> None:
    """float64 within 1e-12 (the ranks' partial sums add in another order); float32, which
    cstorch's metrics return from float64 states, within one float32 step; integers exactly."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict) and actual.keys() == expected.keys(), f"{where}: {actual}"
        for key in expected:
            _assert_close(actual[key], expected[key], f"{where}[{key}]")
        return
    assert isinstance(actual, Tensor), f"{where}: {actual!r}"
    if expected.dtype == torch.float32:
        tolerance = {"rtol": torch.finfo(torch.float32).eps, "atol": 0.0}
    else:
        tolerance = {"rtol": 1e-12, "atol": 1e-13}
    torch.testing.assert_close(
        actual, expected, equal_nan=True, msg=lambda m: f"{where}: {m}", **tolerance
    )


def test_uneven_ranks_computing_every_step_give_the_global_value(
    rank_results: list[list[dict[str, Any]]],
) -> None:
    for step in range(STEPS):
        expected = _expected(step)
        for rank, results in enumerate(rank_results):
            assert len(results) > step, f"rank {rank} stopped before step {step}"
            for name, value in results[step].items():
                _assert_close(value, expected[name], f"rank {rank}, step {step}, {name}")
