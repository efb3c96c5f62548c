"""What each rank runs in test_common_sync.py (importable by the spawned gloo processes)."""

from __future__ import annotations

from typing import Any

import torch
from test_common import CASES, _slice

N = 30
SPLIT = 13  # uneven shards: rank 0 takes the first 13 samples, rank 1 the other 17


def whole_batch(case_id: str) -> Any:
    case = next(c for c in CASES if c.id == case_id)
    return case, case.batch(torch.Generator().manual_seed(5), N)


def every_case_on_its_shard(rank: int, world: int) -> dict[str, Any]:
    """Each rank updates every registered metric with its shard; `compute()` syncs."""
    results: dict[str, Any] = {}
    for case in CASES:
        whole = case.batch(torch.Generator().manual_seed(5), N)
        start, stop = (0, SPLIT) if rank == 0 else (SPLIT, N)
        metric = case.make()
        positional, keyword = _slice(whole, N, start, stop)
        metric.update(*positional, **keyword)
        results[case.id] = metric.compute()
    return results
