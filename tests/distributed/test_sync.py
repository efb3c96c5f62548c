"""Global results on 2, 3 and 4 real gloo processes equal scikit-learn on the whole data."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _workers import dataset, everything_on_shard, shard_bounds
from sklearn.metrics import (
    accuracy_score,
    confusion_matrix,
    f1_score,
    mean_squared_error,
    r2_score,
    roc_auc_score,
)

from torchtally.distributed import run_local_ranks

TOTAL = 230


@pytest.fixture(scope="module", params=[2, 3, 4], ids=lambda w: f"world{w}")
def world_results(request: pytest.FixtureRequest) -> tuple[int, list[dict]]:
    world = request.param
    return world, run_local_ranks(everything_on_shard, world, TOTAL, timeout=150)


def _oracle() -> dict[str, float]:
    data = {k: v.numpy() for k, v in dataset(TOTAL).items()}
    predicted = data["scores"].argmax(-1)
    probabilities = torch.softmax(torch.tensor(data["scores"]), -1).numpy()
    return {
        "accuracy": accuracy_score(data["labels"], predicted),
        "macro_f1": f1_score(data["labels"], predicted, average="macro"),
        "confusion_matrix": confusion_matrix(data["labels"], predicted),
        "auroc_ovr": roc_auc_score(data["labels"], probabilities, multi_class="ovr"),
        "binary_auroc": roc_auc_score(data["binary"], data["probability"]),
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
            got = np.asarray(result["metrics"][name])
            # cstorch's metrics (accuracy, mean) return float32, as cstorch does
            rtol = 1e-6 if name in ("accuracy", "mean") else 1e-9
            np.testing.assert_allclose(got, value, rtol=rtol, err_msg=f"rank {rank}: {name}")
        binned, bound = (
            result["metrics"]["binary_auroc_binned"],
            result["metrics"]["binned_error_bound"],
        )
        assert abs(binned - expected["binary_auroc"]) <= bound + 1e-12, rank


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
