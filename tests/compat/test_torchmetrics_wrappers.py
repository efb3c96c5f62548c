"""The compatible wrappers against TorchMetrics 1.9's: the same keys and values, batch by
batch (`forward`) and over everything (`compute`)."""

from __future__ import annotations

from typing import Any

import pytest
import torch
import torchmetrics as tm
from torchmetrics import wrappers as tmw

from torchtally.compat import torchmetrics as ours
from torchtally.compat.torchmetrics import wrappers as our_wrappers
from torchtally.testing import assert_traceable

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _same(a: Any, b: Any) -> None:
    if isinstance(b, dict):
        assert isinstance(a, dict) and sorted(a) == sorted(b)
        for key in b:
            _same(a[key], b[key])
        return
    if isinstance(b, tuple):
        for x, y in zip(a, b, strict=True):
            _same(x, y)
        return
    torch.testing.assert_close(
        torch.as_tensor(a).double(), torch.as_tensor(b).double(), rtol=1e-5, atol=1e-6
    )


def _classes(g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.randn(12, 4, generator=g), torch.randint(0, 4, (12,), generator=g)


@pytest.mark.parametrize("window", [1, 2, 3])
@pytest.mark.parametrize("name", ["MeanSquaredError", "MulticlassF1Score", "MeanAbsoluteError"])
def test_running(name: str, window: int) -> None:
    g = torch.Generator().manual_seed(window)
    kwargs = {"num_classes": 4, "average": "macro"} if name == "MulticlassF1Score" else {}
    mine = our_wrappers.Running(getattr(ours, name)(**kwargs), window=window)
    theirs_module = tm.classification if name.startswith("Multiclass") else tm
    theirs = tmw.Running(getattr(theirs_module, name)(**kwargs), window=window)
    for _ in range(5):
        if name == "MulticlassF1Score":
            batch: tuple[torch.Tensor, ...] = _classes(g)
        else:
            batch = (torch.randn(10, generator=g), torch.randn(10, generator=g))
        _same(mine(*batch), theirs(*batch))
        _same(mine.compute(), theirs.compute())
    mine.reset()
    theirs.reset()
    mine.update(*batch)
    theirs.update(*batch)
    _same(mine.compute(), theirs.compute())


def test_running_window_is_traceable() -> None:
    running = our_wrappers.Running(ours.MulticlassAccuracy(4), window=3)
    preds, target = _classes(torch.Generator().manual_seed(0))
    report = assert_traceable(running.running, preds, target)
    assert report.graphs == 1 and report.recompiles == 0


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"labels": ["a", "b", "c", "d"]}, {"prefix": "acc-"}, {"postfix": "-acc"}],
    ids=str,
)
def test_classwise(kwargs: dict[str, Any]) -> None:
    g = torch.Generator().manual_seed(1)
    mine = ours.ClasswiseWrapper(ours.MulticlassRecall(4, average=None), **kwargs)
    theirs = tm.ClasswiseWrapper(tm.classification.MulticlassRecall(4, average=None), **kwargs)
    for _ in range(3):
        batch = _classes(g)
        _same(mine(*batch), theirs(*batch))
    _same(mine.compute(), theirs.compute())


@pytest.mark.parametrize("affixes", [{}, {"prefix": "val/"}, {"postfix": "_epoch"}], ids=str)
def test_multitask(affixes: dict[str, str]) -> None:
    g = torch.Generator().manual_seed(2)

    def build(module: Any, classification: Any) -> Any:
        return module.MultitaskWrapper(
            {
                "cls": classification.MulticlassAccuracy(4),
                "reg": module.MetricCollection(
                    {"mse": module.MeanSquaredError(), "mae": module.MeanAbsoluteError()}
                ),
            },
            **affixes,
        )

    mine, theirs = build(ours, ours), build(tm, tm.classification)
    for _ in range(3):
        preds, target = _classes(g)
        x, y = torch.randn(6, generator=g), torch.randn(6, generator=g)
        args = ({"cls": preds, "reg": x}, {"cls": target, "reg": y})
        _same(mine(*args), theirs(*args))
    _same(mine.compute(), theirs.compute())
    with pytest.raises(ValueError, match="task keys"):
        mine.update({"cls": preds}, {"cls": target})


@pytest.mark.parametrize("maximize", [None, True, False])
def test_tracker(maximize: bool | None) -> None:
    g = torch.Generator().manual_seed(3)
    mine = ours.MetricTracker(ours.MeanSquaredError(), maximize=maximize)
    theirs = tm.MetricTracker(tm.MeanSquaredError(), maximize=maximize)
    for _ in range(4):
        mine.increment()
        theirs.increment()
        for _ in range(2):
            batch = (torch.randn(8, generator=g), torch.randn(8, generator=g))
            _same(mine(*batch), theirs(*batch))
        _same(mine.compute(), theirs.compute())
    assert mine.n_steps == theirs.n_steps == 4
    _same(mine.compute_all(), theirs.compute_all())
    _same(mine.best_metric(), theirs.best_metric())
    _same(mine.best_metric(return_step=True), theirs.best_metric(return_step=True))


def test_tracker_of_a_collection_with_a_list_of_maximize() -> None:
    g = torch.Generator().manual_seed(4)

    def build(module: Any) -> Any:
        collection = module.MetricCollection(
            {"mse": module.MeanSquaredError(), "r2": module.R2Score()}
        )
        return module.MetricTracker(collection, maximize=[False, True])

    mine, theirs = build(ours), build(tm)
    for _ in range(3):
        mine.increment()
        theirs.increment()
        batch = (torch.randn(8, generator=g), torch.randn(8, generator=g))
        mine.update(*batch)
        theirs.update(*batch)
    _same(mine.compute_all(), theirs.compute_all())
    _same(mine.best_metric(return_step=True), theirs.best_metric(return_step=True))


@pytest.mark.parametrize(
    ("name", "kwargs", "quantile"),
    [
        ("MulticlassAccuracy", {"num_classes": 4}, None),
        ("MulticlassF1Score", {"num_classes": 4, "average": "macro"}, torch.tensor([0.1, 0.9])),
        ("MeanSquaredError", {}, 0.5),
    ],
)
@pytest.mark.parametrize("strategy", ["multinomial", "poisson"])
def test_bootstrapper_draws_as_torchmetrics(
    name: str, kwargs: dict[str, Any], quantile: Any, strategy: str
) -> None:
    g = torch.Generator().manual_seed(5)
    options = {"num_bootstraps": 6, "quantile": quantile, "raw": True}
    theirs_module = tm.classification if name.startswith("Multiclass") else tm
    mine = ours.BootStrapper(getattr(ours, name)(**kwargs), sampling_strategy=strategy, **options)
    theirs = tm.BootStrapper(
        getattr(theirs_module, name)(**kwargs), sampling_strategy=strategy, **options
    )
    for step in range(3):
        if name == "MeanSquaredError":
            batch: tuple[torch.Tensor, ...] = (
                torch.randn(16, generator=g),
                torch.randn(16, generator=g),
            )
        else:
            batch = _classes(g)
        torch.manual_seed(step)
        mine.update(*batch)
        torch.manual_seed(step)
        theirs.update(*batch)
    _same(mine.compute(), theirs.compute())


def test_bootstrapper_forward_is_the_batch_value_and_accumulates() -> None:
    g = torch.Generator().manual_seed(6)
    batches = [_classes(g) for _ in range(2)]
    boot = ours.BootStrapper(ours.MulticlassAccuracy(4), raw=True, sampling_strategy="multinomial")
    alone = boot.clone()
    torch.manual_seed(0)
    first = boot(*batches[0])
    torch.manual_seed(0)
    alone.update(*batches[0])
    _same(first, alone.compute())
    torch.manual_seed(1)
    boot(*batches[1])
    torch.manual_seed(1)
    alone.update(*batches[1])
    _same(boot.compute(), alone.compute())


def test_bootstrapper_refuses_what_needs_growing_state() -> None:
    with pytest.raises(ValueError, match=r"``sampling_strategy`` to be one of"):
        ours.BootStrapper(ours.MeanSquaredError(), sampling_strategy="jackknife")
    with pytest.raises(ValueError, match=r"no buffer \('cat'\) state"):
        ours.BootStrapper(ours.BinaryAUROC(), sampling_strategy="multinomial")


def test_bootstrapper_update_is_traceable() -> None:
    boot = ours.BootStrapper(ours.MulticlassAccuracy(4), sampling_strategy="multinomial")
    preds, target = _classes(torch.Generator().manual_seed(0))
    # The resamples are random: compiled and eager states differ by design, so only the
    # absence of host syncs and graph breaks is checked here.
    torch._dynamo.reset()
    compiled = torch.compile(boot.update, fullgraph=True, backend="eager")
    compiled(preds, target)
    assert int(boot.replica_confmat.sum()) == 12 * 10  # 12 samples into each of 10 replicas
