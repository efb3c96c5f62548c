"""Global results on 2, 3 and 4 real gloo processes equal scikit-learn on the whole data."""

from __future__ import annotations

import pytest
from _spawn import run_ranks
from _workers import dataset, everything_on_shard, shard_bounds
from sklearn.metrics import accuracy_score, mean_squared_error, r2_score

TOTAL = 230


@pytest.fixture(scope="module", params=[2, 3, 4], ids=lambda w: f"world{w}")
def world_results(request: pytest.FixtureRequest) -> tuple[int, list[dict]]:
    world = request.param
    return world, run_ranks(everything_on_shard, world, TOTAL, timeout=150)


def _oracle() -> dict[str, float]:
    data = {k: v.numpy() for k, v in dataset(TOTAL).items()}
    return {
        "accuracy": accuracy_score(data["labels"], data["scores"].argmax(-1)),
        "r2": r2_score(data["target"], data["prediction"]),
        "mse": mean_squared_error(data["target"], data["prediction"]),
        "mean": float(data["target"].mean()),
    }


def test_every_rank_gets_the_global_value(world_results: tuple[int, list[dict]]) -> None:
    world, results = world_results
    expected = _oracle()
    assert shard_bounds(TOTAL, world)[1][0] == shard_bounds(TOTAL, world)[1][1]  # rank 1: no data
    for rank, result in enumerate(results):
        for name, value in expected.items():
            assert result["metrics"][name] == pytest.approx(value, rel=1e-12), (rank, name)


def test_compute_restores_the_local_state(world_results: tuple[int, list[dict]]) -> None:
    world, results = world_results
    for rank, result in enumerate(results):
        start, stop = shard_bounds(TOTAL, world)[rank]
        assert result["metrics"]["local_accuracy_count"] == stop - start
        assert result["collection"]["local_count_after"] == stop - start


def test_a_collection_syncs_to_the_global_value(world_results: tuple[int, list[dict]]) -> None:
    _, results = world_results
    expected = _oracle()
    for result in results:
        assert result["collection"]["valid/r2"] == pytest.approx(expected["r2"], rel=1e-12)
        assert result["collection"]["valid/mse"] == pytest.approx(expected["mse"], rel=1e-12)
