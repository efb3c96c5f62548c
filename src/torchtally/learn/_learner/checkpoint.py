"""A learner's checkpoint: everything a run needs to continue as if it had never stopped.

`save` writes, with `cstorch.save` (HDF5, no pickling): the position (`Position`), the splits,
the step counters, the model, optimizer, scheduler and grad scaler state dicts, every metric's
full state, the random state now, and, for a run stopped part-way through a split, the random
state of that split's start (which the replay of its loader needs). `load` puts it all back
and returns the position and the random states still to apply.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, final

import torch
from torch import nn

from torchtally.learn._learner.loop import StepLoop
from torchtally.learn._learner.state import (
    Position,
    capture_rng,
    checkpoint_name,
    loader_generator,
    restore_rng,
)
from torchtally.runtime import load, save

__all__ = ["Restored", "TrainingState"]

_KEYS = ("position", "global_step", "eval_steps", "model", "optimizer", "metrics", "rng")


@final
@dataclass(frozen=True)
class Restored:
    """What `TrainingState.load` leaves for the next run to apply.

    Attributes:
        position: Where the checkpoint was taken.
        split_start_rng: The random state at the start of the stopped split (None at a split
            boundary).
        rng: The random state at the checkpoint.
        selection: The early-stopping / best-checkpoint tracker's state (JSON), or "".
    """

    position: Position
    split_start_rng: dict[str, Any] | None
    rng: dict[str, Any]
    selection: str = ""


@final
class TrainingState:
    """Saves and loads the state of a learner's training.

    Args:
        model: The model.
        optimizer: Its optimizer.
        lr_scheduler: The scheduler, or None.
        grad_scaler: The grad scaler, or None.
        loop: The step loop (counters, metrics, split-start random state).

    Example:
        >>> import threading
        >>> from torchtally.learn._learner.metrics import SplitMetrics
        >>> from torchtally.learn._learner.observers import Broadcast
        >>> from torchtally.learn._learner.steps import classification_step
        >>> from torchtally.metrics import MeanMetric
        >>> from torchtally.optim import SGD
        >>> from torchtally.runtime import compile as compile_model
        >>> model = torch.nn.Linear(2, 2)
        >>> optimizer = SGD(model.parameters(), lr=0.1)
        >>> metrics = {"train": SplitMetrics("train", [MeanMetric("loss")], "cpu")}
        >>> loop = StepLoop(compile_model(model, "CPU"), optimizer, classification_step,
        ...                 classification_step, metrics, Broadcast([]), threading.Event())
        >>> state = TrainingState(model, optimizer, None, None, loop)
        >>> loader = [(torch.tensor([[1.0, 0.0]]), torch.tensor([0]))]
        >>> state.save(Path("ckpt"), Position(2, 0, 0), ("train",), loader, None)  # epoch 1 done
        PosixPath('ckpt/epoch-1.h5')
    """

    def __init__(
        self,
        model: nn.Module,
        optimizer: torch.optim.Optimizer,
        lr_scheduler: Any,
        grad_scaler: Any,
        loop: StepLoop,
    ) -> None:
        self.model = model
        self.optimizer = optimizer
        self.lr_scheduler = lr_scheduler
        self.grad_scaler = grad_scaler
        self.loop = loop

    def save(
        self,
        folder: Path,
        position: Position,
        splits: tuple[str, ...],
        loader: Any,
        keep: int | None,
        selection: str = "",
    ) -> Path:
        """Write a checkpoint of the run at `position`.

        Args:
            folder: The checkpoint directory (created if missing).
            position: Where the run stands.
            splits: The epoch's splits, in order.
            loader: The loader of the split at `position` (its own generator is saved).
            keep: Keep at most this many checkpoints of this process there (None: all).
            selection: The monitored-metric tracker's state (JSON text), or "".

        Returns:
            The checkpoint's path (named by `checkpoint_name`).
        """
        folder.mkdir(parents=True, exist_ok=True)
        state = {
            "position": position.to_dict(),
            "splits": list(splits),
            "global_step": self.loop.global_step,
            "eval_steps": dict(self.loop.eval_steps),
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "lr_scheduler": None if self.lr_scheduler is None else self.lr_scheduler.state_dict(),
            "grad_scaler": None if self.grad_scaler is None else self.grad_scaler.state_dict(),
            "metrics": {split: m.state_dict() for split, m in self.loop.metrics.items()},
            "rng": capture_rng(loader_generator(loader)),
            "rng_split_start": self.loop.split_rng if position.step > 0 else None,
            "selection": selection,
        }
        path = folder / checkpoint_name(position, splits)
        save(state, path, max_checkpoints=keep)
        return path

    def load(self, path: Path) -> Restored:
        """Put the state of checkpoint `path` back (the global random state included).

        Args:
            path: A checkpoint written by `save`.

        Returns:
            The position, and the random states the next run applies to its loader.
        """
        state = load(path, map_location=self.loop.compiled.device)
        missing = [key for key in _KEYS if not isinstance(state, dict) or key not in state]
        if missing:
            raise ValueError(
                "Argument `path` must name a checkpoint written by a Learner. "
                f"Received: {str(path)!r}, which lacks {', '.join(missing)}"
            )
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        if self.lr_scheduler is not None and state.get("lr_scheduler") is not None:
            self.lr_scheduler.load_state_dict(state["lr_scheduler"])
        if self.grad_scaler is not None and state.get("grad_scaler") is not None:
            self.grad_scaler.load_state_dict(state["grad_scaler"])
        for split, metrics in self.loop.metrics.items():
            metrics.load_state_dict(state["metrics"].get(split, {}))
        self.loop.global_step = int(state["global_step"])
        self.loop.eval_steps.update({k: int(v) for k, v in state["eval_steps"].items()})
        restore_rng(state["rng"])  # the loader's own generator waits for the loader
        return Restored(
            Position.from_dict(state["position"]),
            state.get("rng_split_start"),
            state["rng"],
            str(state.get("selection") or ""),
        )
