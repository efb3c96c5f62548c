"""Early stopping and best-checkpoint selection on a monitored metric's epoch values.

Both watch one metric, named "split/name" (e.g. "valid/accuracy"), through its value at the
end of each epoch. Whether larger is better comes from the metric class's `higher_is_better`
(a `MeanMetric` named "loss" counts as lower-is-better, the learner's loss convention); an
explicit `mode` wins. The tracker's state rides in the learner's checkpoints, so a resumed run
keeps its patience count and its best checkpoints.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, final

from torchtally._errors import check_int
from torchtally._records import StatisticKey
from torchtally.metrics import MeanMetric, Metric

__all__ = ["EarlyStopping", "MetricTracker", "parse_monitor"]

_MODES = ("min", "max")


@final
@dataclass(frozen=True)
class EarlyStopping:
    """Stop training when a monitored metric has not improved for `patience` epochs.

    Args:
        monitor: "split/name" of the metric, e.g. "valid/loss" or "valid/accuracy".
        patience: Epochs without improvement before stopping (>= 1).
        min_delta: How much better than the best so far counts as an improvement (>= 0).
        mode: "min" or "max"; None: from the metric's `higher_is_better`.

    Example:
        >>> from torchtally.learn import Learner
        >>> from torchtally.optim import SGD
        >>> model = torch.nn.Linear(2, 2)
        >>> learner = Learner(model, SGD(model.parameters(), lr=0.0), num_epochs=10,
        ...                   early_stopping=EarlyStopping("valid/loss", patience=2))
        >>> batches = [(torch.tensor([[1.0, 0.0]]), torch.tensor([0]))]
        >>> _ = learner.fit(batches, batches)  # lr 0: the loss never improves
        >>> learner.epochs_done  # epoch 1 was the best; 2 and 3 did not improve on it
        3
    """

    monitor: str
    patience: int = 3
    min_delta: float = 0.0
    mode: str | None = None

    def __post_init__(self) -> None:
        parse_monitor(self.monitor, "early_stopping.monitor")
        check_int("patience", self.patience, 1)
        if (
            isinstance(self.min_delta, bool)
            or not isinstance(self.min_delta, (int, float))
            or not (math.isfinite(self.min_delta) and self.min_delta >= 0)
        ):
            raise ValueError(
                "Argument `min_delta` must be a finite number >= 0. "
                f"Received: min_delta={self.min_delta!r}"
            )
        if self.mode is not None and self.mode not in _MODES:
            raise ValueError(
                f"Argument `mode` must be 'min', 'max' or None. Received: mode={self.mode!r}"
            )


def parse_monitor(monitor: Any, argument: str) -> StatisticKey:
    """Split "split/name" into its parts.

    Args:
        monitor: The text.
        argument: The argument's name, for the error message.

    Returns:
        The key (split, name).

    Example:
        >>> parse_monitor("valid/f1_score", "best_by")
        StatisticKey(split='valid', name='f1_score')
    """
    if not isinstance(monitor, str) or "/" not in monitor or monitor.startswith("/"):
        raise ValueError(
            f"Argument `{argument}` must name a metric as 'split/name' (e.g. 'valid/loss'). "
            f"Received: {argument}={monitor!r}"
        )
    split, name = monitor.split("/", 1)
    if not name:
        raise ValueError(
            f"Argument `{argument}` must name a metric as 'split/name' (e.g. 'valid/loss'). "
            f"Received: {argument}={monitor!r}"
        )
    return StatisticKey(split, name)


def higher_is_better(metric: Metric, mode: str | None, argument: str, monitor: str) -> bool:
    """The direction of improvement of `metric`.

    Args:
        metric: The monitored metric.
        mode: "min", "max" or None (ask the metric).
        argument: The argument naming it, for the error message.
        monitor: Its "split/name", for the error message.

    Returns:
        True when larger values are better.
    """
    if mode is not None:
        return mode == "max"
    declared = metric.higher_is_better  # a class attribute of every Metric
    if isinstance(declared, bool):
        return declared
    if isinstance(metric, MeanMetric) and metric.name == "loss":
        return False
    raise ValueError(
        f"Argument `{argument}` monitors {monitor!r}, a {type(metric).__name__} that does not "
        "declare `higher_is_better`; pass mode='min' or mode='max'. "
        f"Received: {argument}={monitor!r}"
    )


@final
class MetricTracker:
    """Follows a monitored metric over epochs: best value, patience, best-N checkpoints.

    Args:
        higher: Whether larger values are better.
        min_delta: The smallest change that counts as an improvement.
        keep_best: How many best epochs to remember (0: none).

    Example:
        >>> tracker = MetricTracker(higher=False, min_delta=0.0, keep_best=2)
        >>> tracker.update(1, 0.5, "epoch-1.h5")
        True
    """

    def __init__(self, higher: bool, min_delta: float, keep_best: int) -> None:
        self.higher = higher
        self.min_delta = float(min_delta)
        self.keep_best = keep_best
        #: The best value so far and its epoch (None before the first finite value).
        self.best: float | None = None
        self.best_epoch = 0
        #: Epochs since the last improvement.
        self.bad_epochs = 0
        #: The best epochs, best first: (value, epoch, checkpoint file name).
        self.ranking: list[tuple[float, int, str]] = []

    def update(self, epoch: int, value: float, checkpoint: str) -> bool:
        """Fold in the epoch's value.

        Args:
            epoch: The epoch.
            value: Its value (a NaN never improves).
            checkpoint: The name of the epoch's checkpoint file.

        Returns:
            Whether this epoch is now among the `keep_best` best (its checkpoint is wanted).
        """
        finite = math.isfinite(value)
        sign = 1.0 if self.higher else -1.0
        if finite and (self.best is None or sign * (value - self.best) > self.min_delta):
            self.best, self.best_epoch, self.bad_epochs = value, epoch, 0
        else:
            self.bad_epochs += 1
        if not finite or self.keep_best == 0:
            return False
        ranking = [r for r in self.ranking if r[1] != epoch] + [(value, epoch, checkpoint)]
        ranking.sort(key=lambda r: (-sign * r[0], r[1]))  # ties: the earlier epoch first
        self.ranking = ranking[: self.keep_best]
        return any(r[1] == epoch for r in self.ranking)

    def state_dict(self) -> dict[str, Any]:
        """The tracker's state (plain numbers and strings, for the checkpoint)."""
        return {
            "best": math.nan if self.best is None else self.best,
            "best_epoch": self.best_epoch,
            "bad_epochs": self.bad_epochs,
            "ranking_values": [r[0] for r in self.ranking],
            "ranking_epochs": [r[1] for r in self.ranking],
            "ranking_files": [r[2] for r in self.ranking],
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore `state_dict`'s output."""
        best = float(state["best"])
        self.best = None if math.isnan(best) else best
        self.best_epoch = int(state["best_epoch"])
        self.bad_epochs = int(state["bad_epochs"])
        self.ranking = [
            (float(v), int(e), str(f))
            for v, e, f in zip(
                state["ranking_values"], state["ranking_epochs"], state["ranking_files"]
            )
        ]
