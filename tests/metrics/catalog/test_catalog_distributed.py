"""Retrieval, calibration and curve metrics on 3 real gloo ranks (uneven shards, one
empty) equal the same metric on the whole data in one process."""

from __future__ import annotations

import pytest
import torch
from _catalog_workers import METRICS, QUERIES, data, feed, on_shard

from torchtally.distributed import run_local_ranks


@pytest.mark.slow
@pytest.mark.parametrize("world", [3])
def test_every_rank_gets_the_value_of_the_whole_data(world: int) -> None:
    results = run_local_ranks(on_shard, world, timeout=180)
    d = data()
    for name, make in METRICS.items():
        whole = make()
        feed(name, whole, d, 0, QUERIES)
        expected = whole.compute()
        for rank, result in enumerate(results):
            torch.testing.assert_close(
                result[name], expected, rtol=1e-9, atol=1e-12, msg=f"{name} on rank {rank}"
            )
    # The bootstrap's replicas are summed over ranks: every rank sees the same global values,
    # centred on the global accuracy.
    raws = [result["bootstrap"]["raw"] for result in results]
    for raw in raws[1:]:
        torch.testing.assert_close(raw, raws[0])
    assert abs(float(raws[0].mean()) - results[0]["accuracy"]) < 0.1
