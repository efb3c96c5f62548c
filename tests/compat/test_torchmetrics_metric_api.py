"""The `Metric` base API TorchMetrics' own tests and users rely on, against TorchMetrics 1.9:
read-only class constants, the base keyword arguments and their messages, scripting, and
`dist_sync_on_step` over two gloo ranks."""

from __future__ import annotations

import pickle
from typing import Any

import pytest
import torch
import torchmetrics as tm
from _tm_ddp_workers import forward_synced_on_step

from torchtally.compat import torchmetrics as ttm
from torchtally.distributed import run_local_ranks

_CONSTANTS = (
    "higher_is_better",
    "is_differentiable",
    "full_state_update",
    "plot_lower_bound",
    "plot_upper_bound",
    "plot_legend_name",
)


@pytest.mark.parametrize("name", _CONSTANTS)
def test_class_constants_are_read_only_on_instances_as_in_torchmetrics(name: str) -> None:
    with pytest.raises(RuntimeError, match=f"Can't change const `{name}`"):
        setattr(tm.classification.BinaryAccuracy(), name, True)
    metric = ttm.BinaryAccuracy()
    with pytest.raises(RuntimeError, match=f"Can't change const `{name}`"):
        setattr(metric, name, True)
    assert getattr(metric, name) == getattr(tm.classification.BinaryAccuracy, name)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"dist_sync_on_step": None},
            "Expected keyword argument `dist_sync_on_step` to be an `bool` but",
        ),
        (
            {"dist_sync_fn": [2, 3]},
            "Expected keyword argument `dist_sync_fn` to be an callable function",
        ),
        (
            {"compute_on_cpu": None},
            "Expected keyword argument `compute_on_cpu` to be an `bool` but",
        ),
        (
            {"sync_on_compute": None},
            "Expected keyword argument `sync_on_compute` to be a `bool` but",
        ),
        (
            {"compute_with_cache": None},
            "Expected keyword argument `compute_with_cache` to be a `bool` but got",
        ),
        ({"foo": True}, "Unexpected keyword arguments: `foo`"),
        ({"foo": True, "bar": 42}, "Unexpected keyword arguments: `bar`, `foo`"),
    ],
)
def test_base_keyword_arguments_are_checked_as_in_torchmetrics(
    kwargs: dict[str, Any], message: str
) -> None:
    for library in (tm, ttm):
        with pytest.raises(ValueError, match=message):
            library.classification.BinaryAccuracy(**kwargs)


def test_base_keyword_arguments_are_kept() -> None:
    def gather(x: torch.Tensor, group: Any = None) -> list[torch.Tensor]:
        return [x]

    kwargs = {
        "compute_on_cpu": True,
        "dist_sync_on_step": True,
        "sync_on_compute": False,
        "compute_with_cache": False,
        "dist_sync_fn": gather,
    }
    ours, theirs = ttm.BinaryAccuracy(**kwargs), tm.classification.BinaryAccuracy(**kwargs)
    for key, value in kwargs.items():
        assert getattr(ours, key) is value
        assert getattr(theirs, key) is value
    # One process: the batch value is the batch's own, as TorchMetrics'.
    preds, target = torch.tensor([0.2, 0.7, 0.9]), torch.tensor([0, 1, 0])
    torch.testing.assert_close(ours(preds, target), theirs(preds, target))


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.classification.BinaryAccuracy(),
        lambda lib: lib.classification.MulticlassConfusionMatrix(3, normalize="true"),
        lambda lib: lib.classification.MultilabelAUROC(3),
        lambda lib: lib.regression.MeanSquaredError(),
        lambda lib: lib.aggregation.MeanMetric(),
    ],
)
def test_metrics_script_pickle_and_clone_as_torchmetrics_tester_requires(make: Any) -> None:
    # TorchMetrics' class tester scripts, clones and pickles every metric before using it.
    for library in (tm, ttm):
        metric = make(library)
        torch.jit.script(metric)
        clone = metric.clone()
        assert clone is not metric and type(clone) is type(metric)
        assert type(pickle.loads(pickle.dumps(metric))) is type(metric)
        assert metric.state_dict() == {}


def test_task_wrappers_are_metric_subclasses_as_in_torchmetrics() -> None:
    for name in ("Accuracy", "F1Score", "AUROC", "ConfusionMatrix", "StatScores"):
        assert issubclass(getattr(tm, name), tm.Metric)
        assert issubclass(getattr(ttm, name), ttm.Metric)
    assert isinstance(ttm.Accuracy(task="binary"), ttm.BinaryAccuracy)
    for library in (tm, ttm):
        with pytest.raises(ValueError, match="Invalid"):
            library.Accuracy(task="not_valid_task")


@pytest.fixture(scope="module")
def ranks() -> list[dict[str, Any]]:
    return run_local_ranks(forward_synced_on_step, 2, timeout=300)


@pytest.mark.slow
@pytest.mark.parametrize("key", ["f1", "auroc", "mean", "running"])
@pytest.mark.parametrize("synced", [True, False])
def test_dist_sync_on_step_gives_torchmetrics_batch_values_over_two_ranks(
    ranks: list[dict[str, Any]], key: str, synced: bool
) -> None:
    for rank in ranks:
        ours_steps, ours_total = rank[f"ours/{key}/{synced}"]
        theirs_steps, theirs_total = rank[f"theirs/{key}/{synced}"]
        torch.testing.assert_close(ours_steps, theirs_steps, rtol=1e-6, atol=1e-6)
        torch.testing.assert_close(ours_total, theirs_total, rtol=1e-6, atol=1e-6)
    if synced:  # every rank sees the value of the whole step
        assert ranks[0][f"ours/{key}/True"][0] == ranks[1][f"ours/{key}/True"][0]


def test_a_sync_function_that_would_be_the_only_transport_is_refused() -> None:
    # TorchMetrics gathers each state with `dist_sync_fn` when `distributed_available_fn`
    # says so; built-in metrics sync over torch.distributed only, so rather than leave the
    # states unsynced they refuse.
    metric = ttm.BinaryAccuracy(
        dist_sync_fn=lambda x, group=None: [x], distributed_available_fn=lambda: True
    )
    metric.update(torch.tensor([1, 0]), torch.tensor([1, 1]))
    with pytest.raises(NotImplementedError, match="dist_sync_fn"):
        metric.compute()
    unsynced = ttm.BinaryAccuracy(distributed_available_fn=lambda: False)
    unsynced.update(torch.tensor([1, 0]), torch.tensor([1, 1]))
    assert float(unsynced.compute()) == 0.5
