"""Every registry case of test_common.py (all but the last-value and order-dependent ones,
whose value is not a function of the data set) synced over 2 real gloo ranks with uneven shards
equals the same metric fed the whole data in one process: the registry-wide form of
tests/distributed/test_sync.py.

One launch runs the whole registry (`_registry_sync_workers.every_case_on_its_shard`), so the
cost is one pair of processes, not one per metric."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from _registry_sync_workers import every_case_on_its_shard, whole_batch
from test_common import CASES, _assert_values_equal

from torchtally.distributed import run_local_ranks


@pytest.fixture(scope="module")
def rank_results() -> list[dict[str, Any]]:
    return run_local_ranks(every_case_on_its_shard, 2, timeout=300)


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_two_gloo_ranks_give_the_value_of_the_whole_data(
    case: Any, rank_results: list[dict[str, Any]]
) -> None:
    case, (positional, keyword) = whole_batch(case.id)
    whole = case.make()
    whole.update(*positional, **keyword)
    expected = whole.compute()
    for rank, results in enumerate(rank_results):
        try:
            _assert_equal_to_its_dtype(results[case.id], expected, case.exact)
        except AssertionError as error:
            raise AssertionError(f"{case.id} on rank {rank}: {error}") from None


def _assert_equal_to_its_dtype(actual: Any, expected: Any, exact: bool) -> None:
    try:
        _assert_values_equal(actual, expected, exact)
    except AssertionError:
        if not (exact and isinstance(expected, torch.Tensor) and expected.dtype == torch.float32):
            raise
        # A float32 result (cstorch's dtype) of float64 states: each shard sums its float32
        # weights before the float64 state does, so the states can differ by float32 round-off
        # and the result round to the neighbouring float32. One float32 step, no more.
        eps = torch.finfo(torch.float32).eps
        torch.testing.assert_close(actual, expected, rtol=eps, atol=0.0, check_dtype=True)
