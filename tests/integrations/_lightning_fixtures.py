"""A LightningModule that logs each metric three ways (TorchMetrics, compat, native) with
`self.log(name, metric, on_step=True, on_epoch=True)`, and a logger that records every value.

A module of its own (not the test file) so that the ranks `ddp_spawn` starts can unpickle it.
TorchMetrics' logged values are the oracle: the compat and native ones must equal them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import lightning.pytorch as pl
import torch
import torchmetrics
from lightning.pytorch.loggers import Logger
from torch import Tensor

from torchtally.compat import torchmetrics as ttm
from torchtally.metrics import AccuracyMetric, MeanMetric, MSEMetric

NUM_CLASSES = 3
#: family -> (TorchMetrics, compat, native) constructors and how each is fed `(preds, target)`:
#: native metrics take cstorch's `(labels, predictions)` order.
FAMILIES: dict[str, tuple[Callable[[], Any], Callable[[], Any], Callable[[], Any]]] = {
    "acc": (
        lambda: torchmetrics.classification.MulticlassAccuracy(NUM_CLASSES, average="micro"),
        lambda: ttm.classification.MulticlassAccuracy(NUM_CLASSES, average="micro"),
        lambda: AccuracyMetric(num_classes=NUM_CLASSES),
    ),
    "mse": (torchmetrics.MeanSquaredError, ttm.MeanSquaredError, MSEMetric),
    "mean": (torchmetrics.MeanMetric, ttm.MeanMetric, MeanMetric),
}
KINDS = ("tm", "cp", "nt")


def data(n: int = 42, seed: int = 0) -> torch.utils.data.TensorDataset:
    """A deterministic tiny classification set: 4 features, 3 classes."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    y = (x[:, 0] + 0.5 * torch.randn(n, generator=g) > 0).long() + (x[:, 1] > 1).long()
    return torch.utils.data.TensorDataset(x, y)


def loader(batch_size: int = 7) -> torch.utils.data.DataLoader[Any]:
    return torch.utils.data.DataLoader(data(), batch_size=batch_size)


class Recorder(Logger):
    """Keeps every `log_metrics` call; with `path`, also appends it to `path` as a JSON line
    (from every rank: a spawned rank's logger object does not come back)."""

    def __init__(self, path: str | None = None) -> None:
        super().__init__()
        self.rows: list[tuple[int, dict[str, float]]] = []
        self.path = path

    @property
    def name(self) -> str:
        return "recorder"

    @property
    def version(self) -> int:
        return 0

    def log_hyperparams(self, *args: Any, **kwargs: Any) -> None:
        pass

    def log_metrics(self, metrics: dict[str, Any], step: int | None = None) -> None:
        row = {k: float(v) for k, v in metrics.items()}
        self.rows.append((-1 if step is None else step, row))
        if self.path is not None:
            rank = torch.distributed.get_rank() if torch.distributed.is_initialized() else 0
            with Path(f"{self.path}.{rank}").open("a") as f:
                f.write(json.dumps({"step": step, **row}) + "\n")


class ThreeWays(pl.LightningModule):
    """Trains a linear classifier; each step feeds every metric family three ways and logs
    them. `compiled`: in training, the model and the compat/native metric calls run as one
    `torch.compile(fullgraph=True)` function (TorchMetrics, which does not trace whole, is fed
    eagerly from its outputs). `forward_calls`: `metric(preds, target)` as TorchMetrics' docs
    teach; otherwise `update` alone (nothing is logged on step then)."""

    def __init__(self, compiled: bool = False, forward_calls: bool = True) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.net = torch.nn.Linear(4, NUM_CLASSES)
        self.compiled = compiled
        self.forward_calls = forward_calls
        for split in ("train", "val"):
            for family, makers in FAMILIES.items():
                for kind, make in zip(KINDS, makers):
                    setattr(self, f"{split}_{family}_{kind}", make())
        self._step_fn: Callable[..., Any] | None = None

    def _outputs(self, x: Tensor, y: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        logits = self.net(x)
        loss = torch.nn.functional.cross_entropy(logits, y)
        return loss, logits.argmax(-1), logits[:, 0].detach(), x[:, 0]

    def _feed(
        self,
        split: str,
        kinds: tuple[str, ...],
        p: Tensor,
        y: Tensor,
        s: Tensor,
        t: Tensor,
        loss: Tensor,
    ) -> None:
        for kind in kinds:
            acc, mse, mean = (getattr(self, f"{split}_{f}_{kind}") for f in FAMILIES)
            call = (lambda m: m) if self.forward_calls else (lambda m: m.update)
            if kind == "nt":
                call(acc)(y, p)
                call(mse)(t, s)
            else:
                call(acc)(p, y)
                call(mse)(s, t)
            call(mean)(loss.detach())

    def _compiled_body(self, split: str, x: Tensor, y: Tensor) -> tuple[Tensor, ...]:
        loss, p, s, t = self._outputs(x, y)
        self._feed(split, ("cp", "nt"), p, y, s, t, loss)
        return loss, p, s, t

    def _shared_step(self, split: str, batch: tuple[Tensor, Tensor]) -> Tensor:
        x, y = batch
        if self.compiled and split == "train":
            if self._step_fn is None:
                self._step_fn = torch.compile(
                    self._compiled_body, fullgraph=True, backend="aot_eager"
                )
            loss, p, s, t = self._step_fn(split, x, y)
            self._feed(split, ("tm",), p, y, s, t, loss)
        else:
            loss, p, s, t = self._outputs(x, y)
            self._feed(split, KINDS, p, y, s, t, loss)
        for family in FAMILIES:
            for kind in KINDS:
                name = f"{split}_{family}_{kind}"
                self.log(name, getattr(self, name), on_step=True, on_epoch=True)
        return loss

    def training_step(self, batch: tuple[Tensor, Tensor], batch_idx: int) -> Tensor:
        return self._shared_step("train", batch)

    def validation_step(self, batch: tuple[Tensor, Tensor], batch_idx: int) -> Tensor:
        return self._shared_step("val", batch)

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.5)


def trainer(logger: Logger, **kwargs: Any) -> pl.Trainer:
    options: dict[str, Any] = {
        "max_epochs": 2,
        "accelerator": "cpu",
        "devices": 1,
        "logger": logger,
        "log_every_n_steps": 1,
        "enable_checkpointing": False,
        "enable_progress_bar": False,
        "enable_model_summary": False,
        "num_sanity_val_steps": 0,
    }
    options.update(kwargs)
    return pl.Trainer(**options)


def fit_on_ranks(path: str) -> None:
    """Two gloo ranks (`ddp_spawn`), each logging to `path.<rank>`."""
    trainer(Recorder(path), devices=2, strategy="ddp_spawn").fit(ThreeWays(), loader(), loader())
