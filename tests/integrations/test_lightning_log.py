"""`LightningModule.log(name, metric)` with torchtally metrics, against real Lightning and real
TorchMetrics: the values logged for compat and native metrics equal TorchMetrics' own, on step
and on epoch, over 2 epochs of training and validation, eager, compiled and on 2 gloo ranks."""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

pl = pytest.importorskip("lightning.pytorch", reason="Lightning is a dev extra")
torchmetrics = pytest.importorskip("torchmetrics")

import torch  # noqa: E402
from _lightning_fixtures import (  # noqa: E402
    FAMILIES,
    KINDS,
    Recorder,
    ThreeWays,
    fit_on_ranks,
    loader,
    trainer,
)

from torchtally.compat import torchmetrics as ttm  # noqa: E402
from torchtally.metrics import AccuracyMetric, AUCMetric, MSEMetric  # noqa: E402

STEPS_PER_EPOCH = 42 // 7
KEY = re.compile(r"^(train|val)_(\w+)_(tm|cp|nt)_(step|epoch)$")


def _series(rows: list[dict[str, float]]) -> dict[tuple[str, str, str, str], list[float]]:
    """(split, family, kind, step|epoch) -> the values logged, in order."""
    series: dict[tuple[str, str, str, str], list[float]] = defaultdict(list)
    for row in rows:
        for key, value in row.items():
            match = KEY.match(key)
            if match:
                series[match.groups()].append(value)  # type: ignore[index]
    return series


def _assert_equal_to_torchmetrics(
    rows: list[dict[str, float]],
    steps: int,
    epochs: int = 2,
    splits: tuple[str, ...] = ("train", "val"),
) -> None:
    series = _series(rows)
    for split in splits:
        for family in FAMILIES:
            for when, count in (("step", steps * epochs), ("epoch", epochs)):
                oracle = series[(split, family, "tm", when)]
                assert len(oracle) == count, (split, family, when, len(oracle))
                for kind in ("cp", "nt"):
                    ours = series[(split, family, kind, when)]
                    assert ours == pytest.approx(oracle, rel=1e-6, abs=1e-7), (
                        split,
                        family,
                        kind,
                        when,
                    )


def _fit(module: ThreeWays, **options: Any) -> list[dict[str, float]]:
    recorder = Recorder()
    trainer(recorder, **options).fit(module, loader(), loader())
    return [row for _, row in recorder.rows]


def test_step_and_epoch_values_equal_torchmetrics_over_two_epochs() -> None:
    # Lightning's sanity check runs validation steps first, then resets the metrics it logged.
    rows = _fit(ThreeWays(), num_sanity_val_steps=2)
    _assert_equal_to_torchmetrics(rows, STEPS_PER_EPOCH)
    # The epoch values are the whole epoch's (reset in between): the second differs from the
    # first, and the training accuracy is not any one batch's.
    series = _series(rows)
    first, second = series[("train", "acc", "nt", "epoch")]
    assert first != second


def test_update_alone_logs_the_epoch_value_and_no_step_value_as_torchmetrics() -> None:
    rows = _fit(ThreeWays(forward_calls=False))
    series = _series(rows)
    for split in ("train", "val"):
        for family in FAMILIES:
            for kind in KINDS:
                assert (split, family, kind, "step") not in series
    _assert_equal_to_torchmetrics(rows, 0)


def test_a_compiled_step_logs_the_values_torchmetrics_logs() -> None:
    """The model and the compat/native metric calls compiled with fullgraph=True (Lightning's
    own `self.log` stays outside: Lightning 2.6.6 cannot be traced by torch 2.13's Dynamo)."""
    rows = _fit(ThreeWays(compiled=True))
    _assert_equal_to_torchmetrics(rows, STEPS_PER_EPOCH)


@pytest.mark.slow
def test_two_gloo_ranks_log_the_global_epoch_value(tmp_path: Path) -> None:
    path = str(tmp_path / "log")
    fit_on_ranks(path)
    per_rank = [
        [json.loads(line) for line in Path(f"{path}.{rank}").read_text().splitlines()]
        for rank in (0, 1)
    ]
    steps = math.ceil(42 / 2 / 7)  # each rank sees half the samples (DistributedSampler)
    epochs: list[list[float]] = []
    for rows in per_rank:
        _assert_equal_to_torchmetrics(rows, steps)
        epochs.append(_series(rows)[("train", "acc", "nt", "epoch")])
    # TorchMetrics syncs its epoch value itself, so equal values are global ones; the ranks
    # agree on them while their step values are their own batches'.
    assert epochs[0] == epochs[1]
    step_values = [_series(rows)[("train", "mse", "nt", "step")] for rows in per_rank]
    assert step_values[0] != step_values[1]


# ---------------------------------------------------------------- what Lightning reads


def test_metrics_are_torchmetrics_metrics_to_lightning() -> None:
    for metric in (
        AccuracyMetric(),
        ttm.MeanSquaredError(),
        ttm.MetricCollection([ttm.MeanMetric()]).values()[0],
    ):
        assert isinstance(metric, torchmetrics.Metric)
        assert metric.device == torch.device("cpu")


def test_the_step_value_is_the_batch_alone_and_reset_clears_it() -> None:
    metric = MSEMetric()
    assert metric._forward_cache is None
    metric(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 1.0]))
    running = metric(torch.tensor([2.0]), torch.tensor([5.0]))
    assert float(running) == pytest.approx((1 + 9) / 3)  # forward: the running value (cstorch)
    assert float(metric._forward_cache) == pytest.approx(9.0)  # the batch alone
    metric.update(torch.tensor([0.0]), torch.tensor([0.0]))
    assert float(metric._forward_cache) == pytest.approx(9.0)  # as TorchMetrics: last forward's
    assert float(metric.compute()) == pytest.approx(10 / 4)  # the spare copy changed nothing
    metric.reset()
    assert metric._forward_cache is None


def test_a_python_float_batch_value_is_logged_as_a_tensor() -> None:
    metric = AUCMetric()  # computes a Python float, as cstorch's
    metric(torch.tensor([0, 1, 1, 0]), torch.tensor([0.1, 0.9, 0.7, 0.3]))
    value = metric._forward_cache
    assert isinstance(value, torch.Tensor) and float(value) == pytest.approx(1.0)


def test_a_move_that_moves_nothing_keeps_the_compiled_update() -> None:
    metric = MSEMetric().compile_update(backend="eager")
    metric.update(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 1.0]))
    compiled = metric._runtime.compiler.run
    assert compiled is not None
    metric.to("cpu")  # Lightning's self.log does this at every call
    assert metric._runtime.compiler.run is compiled
    metric._apply(lambda t: t.clone())  # what a real move does: new state tensors
    assert metric._runtime.compiler.run is None
    metric.update(torch.tensor([3.0]), torch.tensor([1.0]))
    assert float(metric.compute()) == pytest.approx((1 + 0 + 4) / 3)


class _Holder(pl.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(2, 2)
        self.metrics = torch.nn.ModuleDict({"acc": ttm.MeanMetric(), "mse": MSEMetric()})


def test_ddp_leaves_metric_states_alone_and_keeps_the_users_names() -> None:
    module = _Holder()
    ignored = set(module._ddp_params_and_buffers_to_ignore)
    states = {name for name, _ in module.named_buffers() if name.startswith("metrics.")}
    assert states and states <= ignored
    assert not any(name.startswith("lin.") for name in ignored)
    torch.nn.parallel.DistributedDataParallel._set_params_and_buffers_to_ignore_for_model(
        module, ["lin.bias"]
    )
    assert set(module._ddp_params_and_buffers_to_ignore) == ignored | {"lin.bias"}


def test_a_torchmetrics_value_logged_directly_still_works(tmp_path: Path) -> None:
    """`self.log(name, metric(preds, target))`, which worked before, is unchanged."""

    class Direct(ThreeWays):
        def _shared_step(self, split: str, batch: Any) -> torch.Tensor:
            x, y = batch
            loss, p, _, _ = self._outputs(x, y)
            self.log(f"{split}_acc_tm_step", getattr(self, f"{split}_acc_tm")(p, y))
            self.log(f"{split}_acc_cp_step", getattr(self, f"{split}_acc_cp")(p, y))
            return loss

    recorder = Recorder()
    trainer(recorder, max_epochs=1).fit(Direct(), loader())
    series = _series([row for _, row in recorder.rows])
    assert series[("train", "acc", "cp", "step")] == series[("train", "acc", "tm", "step")]
    assert len(series[("train", "acc", "tm", "step")]) == STEPS_PER_EPOCH


def _collection(module: Any, prefix: str) -> Any:
    return module.MetricCollection(
        {
            "acc": module.Accuracy(task="multiclass", num_classes=3),
            "f1": module.F1Score(task="multiclass", num_classes=3, average="macro"),
            "prec": module.Precision(task="multiclass", num_classes=3, average="macro"),
        },
        prefix=prefix,
    )


class _Collections(pl.LightningModule):
    """`self.log_dict(collection)`: TorchMetrics' collection and the compat one, whose members
    share one state (compute groups)."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.net = torch.nn.Linear(4, 3)
        self.tm = _collection(torchmetrics, "train_")
        self.cp = _collection(ttm, "train_")

    def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
        x, y = batch
        logits = self.net(x)
        self.tm(logits, y)
        self.cp(logits, y)
        for kind in ("tm", "cp"):
            collection = getattr(self, kind)
            self.log_dict(
                {f"{k}_{kind}": v for k, v in collection.items()}, on_step=True, on_epoch=True
            )
        return torch.nn.functional.cross_entropy(logits, y)

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.5)


def test_a_logged_compat_collection_equals_torchmetrics_collection() -> None:
    recorder = Recorder()
    trainer(recorder).fit(_Collections(), loader())
    series = _series([row for _, row in recorder.rows])
    for family in ("acc", "f1", "prec"):
        for when, count in (("step", 2 * STEPS_PER_EPOCH), ("epoch", 2)):
            oracle = series[("train", family, "tm", when)]
            assert len(oracle) == count
            assert series[("train", family, "cp", when)] == pytest.approx(oracle, rel=1e-6)


def test_inputs_that_carry_grad_leave_the_states_out_of_autograd() -> None:
    """A training step feeds metrics logits that carry grad: the states must not join each
    step's autograd graph (TorchMetrics updates with grad off), or a compiled step's second
    backward fails and eager steps keep every graph alive until the reset."""
    torch.manual_seed(0)
    net = torch.nn.Linear(4, 3)
    compat, native, oracle = ttm.MeanSquaredError(), MSEMetric(), torchmetrics.MeanSquaredError()

    def step(x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        s = net(x).softmax(-1).amax(-1)
        compat(s, t)
        native(t, s)
        return s.sum()

    compiled = torch.compile(step, fullgraph=True, backend="aot_eager")
    x, t = torch.randn(8, 4), torch.rand(8)
    for _ in range(3):
        compiled(x, t).backward()
        oracle(net(x).softmax(-1).amax(-1), t)
    for metric in (compat, native):
        assert not any(b.requires_grad for b in metric.buffers())
        assert float(metric.compute()) == pytest.approx(float(oracle.compute()), rel=1e-6)
    compat(net(x).softmax(-1).amax(-1), t)  # eager
    assert not any(b.requires_grad for b in compat.buffers())


@pytest.mark.parametrize(
    "hold",
    [
        lambda m: torchmetrics.MetricCollection([m]),
        lambda m: torchmetrics.wrappers.Running(m, window=2),
        lambda m: torchmetrics.MeanSquaredError() + m,
    ],
    ids=["MetricCollection", "Running", "arithmetic"],
)
def test_torchmetrics_containers_refuse_our_metrics_by_name(hold: Any) -> None:
    """A metric is a `torchmetrics.Metric` to `isinstance` once Lightning is loaded, so
    TorchMetrics' containers accept it: building one, or its first use, says what to use
    instead."""
    with pytest.raises(
        TypeError, match=r"torchtally metric, not a TorchMetrics one.*MetricCollection"
    ):
        held = hold(ttm.MeanSquaredError())
        held.update(torch.rand(4), torch.rand(4))
        held.compute()


class _NativeCollection(pl.LightningModule):
    """A native collection whose accuracy derives from its confusion matrix, logged from
    `compute()` at the end of each validation epoch (as docs/lightning.md says)."""

    def __init__(self) -> None:
        super().__init__()
        from torchtally.metrics import ConfusionMatrixMetric, F1ScoreMetric, MetricCollection

        torch.manual_seed(0)
        self.net = torch.nn.Linear(4, 3)
        self.native = MetricCollection(
            {
                "acc": AccuracyMetric(num_classes=3),
                "cm": ConfusionMatrixMetric(num_classes=3),
                "f1": F1ScoreMetric(num_classes=3, average_type="macro"),
            }
        )
        self.tm_acc = torchmetrics.Accuracy(task="multiclass", num_classes=3)
        self.tm_f1 = torchmetrics.F1Score(task="multiclass", num_classes=3, average="macro")

    def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
        x, y = batch
        return torch.nn.functional.cross_entropy(self.net(x), y)

    def validation_step(self, batch: Any, batch_idx: int) -> None:
        x, y = batch
        preds = self.net(x).argmax(-1)
        self.native.update(y, preds)
        self.tm_acc.update(preds, y)
        self.tm_f1.update(preds, y)
        self.log("val_acc_tm", self.tm_acc)
        self.log("val_f1_tm", self.tm_f1)

    def on_validation_epoch_end(self) -> None:
        values = self.native.compute()
        self.log_dict({"val_acc_nt": values["acc"], "val_f1_nt": values["f1"]})
        self.native.reset()

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.5)


def test_a_native_collection_logged_from_compute_equals_torchmetrics() -> None:
    recorder = Recorder()
    trainer(recorder).fit(_NativeCollection(), loader(), loader())
    rows = [row for _, row in recorder.rows]
    for family in ("acc", "f1"):
        oracle = [row[f"val_{family}_tm"] for row in rows if f"val_{family}_tm" in row]
        ours = [row[f"val_{family}_nt"] for row in rows if f"val_{family}_nt" in row]
        assert len(oracle) == 2
        assert ours == pytest.approx(oracle, rel=1e-6)


def test_a_step_value_first_read_under_inference_mode_still_works_in_training() -> None:
    """Lightning validates under inference mode: the spare copy built there must still take
    a training step's batch."""
    metric = MSEMetric()
    with torch.inference_mode():
        metric(torch.tensor([1.0]), torch.tensor([2.0]))
        assert float(metric._forward_cache) == 1.0
    metric(torch.tensor([1.0]), torch.tensor([4.0]))
    assert float(metric._forward_cache) == 9.0
    assert float(metric.compute()) == pytest.approx(5.0)
