"""`SummaryWriter` and `SummaryReader`: TensorBoard logs as cstorch's `utils.tensorboard` has them.

The writer is torch's `SummaryWriter` plus `base_step` and `add_tensor`, which stores whole
tensors next to the event file (under `events.out.csevents.*/tensors/<name>/`). The reader reads
scalars back from the event files and tensors from those directories. Needs the `tensorboard`
package (`pip install torchtally[tensorboard]`).

Example:
    >>> from torchtally.utils.tensorboard import SummaryReader, SummaryWriter
    >>> writer = SummaryWriter(log_dir="logs")
    >>> writer.add_scalar("loss", 0.5, 1)
    >>> writer.add_tensor("weights", torch.ones(3), 1)
    >>> writer.flush()
    >>> SummaryReader("logs").read_scalar("loss", step=1).value
    0.5
"""

from __future__ import annotations

import fnmatch
import json
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import torch

try:
    from tensorboard.backend.event_processing.event_accumulator import (
        SCALARS,
        EventAccumulator,
        ScalarEvent,
    )
    from torch.utils.tensorboard import SummaryWriter as _TorchSummaryWriter
except ImportError as err:  # pragma: no cover - depends on the environment
    raise ImportError(
        "torchtally.utils.tensorboard needs the tensorboard package. Install it with "
        "`pip install torchtally[tensorboard]`."
    ) from err

__all__ = ["ScalarEvent", "SummaryReader", "SummaryWriter", "TensorDescriptor"]

_METADATA = "metadata.json"
_VERSION = 1


@dataclass
class TensorDescriptor:
    """A tensor written with `SummaryWriter.add_tensor`.

    Attributes:
        step: The step it was written at.
        ns_since_epoch: When it was written (nanoseconds since the Unix epoch).
        tensor: The tensor.
    """

    step: int
    ns_since_epoch: int
    tensor: torch.Tensor


class SummaryWriter(_TorchSummaryWriter):
    """torch's `SummaryWriter` with cstorch's `base_step` and `add_tensor`.

    Args:
        *args: Passed to `torch.utils.tensorboard.SummaryWriter` (e.g. `log_dir`).
        base_step: The step the run's summaries start counting from.
        **kwargs: Passed to `torch.utils.tensorboard.SummaryWriter`.

    Example:
        >>> writer = SummaryWriter(log_dir="logs", base_step=100)
        >>> writer.add_tensor("grad_norm", torch.tensor(1.5), step=101)
    """

    def __init__(self, *args: Any, base_step: int = 1, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not isinstance(base_step, int) or isinstance(base_step, bool):
            raise TypeError(
                f"Argument `base_step` must be an int. Received: base_step={base_step!r}"
            )
        self.base_step = base_step
        file_writer: Any = self.file_writer
        events = Path(file_writer.event_writer._file_name)
        name = events.name.replace("events.out.tfevents.", "events.out.csevents.")
        self.cs_events_dir = events.parent / name
        self.cs_events_dir.mkdir(parents=True, exist_ok=True)
        metadata = self.cs_events_dir / _METADATA
        if not metadata.exists():
            metadata.write_text(json.dumps({"version": _VERSION}))

    # cstorch's signature replaces torch's (tag, tensor, global_step, walltime) protobuf writer.
    def add_tensor(self, name: str, tensor: torch.Tensor, step: int) -> None:  # type: ignore[override]
        """Write a whole tensor at `step` (read it back with `SummaryReader.read_tensor`).

        Args:
            name: The tensor's name; "/" makes subdirectories.
            tensor: The tensor (stored on the CPU).
            step: The step.
        """
        if not isinstance(tensor, torch.Tensor):
            raise TypeError(
                f"Argument `tensor` must be a torch.Tensor. Received: {type(tensor).__name__}"
            )
        if not name or ".." in Path(name).parts or Path(name).is_absolute():
            raise ValueError(f"Argument `name` must be a relative name. Received: name={name!r}")
        directory = self.cs_events_dir / "tensors" / name
        directory.mkdir(parents=True, exist_ok=True)
        now = time.time_ns()
        payload = {"step": int(step), "ns_since_epoch": now, "tensor": tensor.detach().cpu()}
        torch.save(payload, str(directory / f"{int(step)}.{now}.pt"))


class SummaryReader:
    """Read back what `SummaryWriter` wrote: scalars from event files, tensors from their files.

    Args:
        log_dirs: A log directory (searched recursively) or several.
        filter: Keep only names in groups that start with this string (`filter*/name`).
        **kwargs: Passed to tensorboard's `EventAccumulator` (e.g. `size_guidance`).

    Example:
        >>> writer = SummaryWriter(log_dir="reader-logs")
        >>> for step, loss in enumerate([0.9, 0.7, 0.6], start=1):
        ...     writer.add_scalar("loss", loss, step)
        >>> writer.flush()
        >>> reader = SummaryReader("reader-logs")
        >>> [(event.step, round(event.value, 2)) for event in reader.read_scalar("loss")]
        [(1, 0.9), (2, 0.7), (3, 0.6)]
    """

    def __init__(
        self, log_dirs: str | Path | list[str | Path], filter: str | None = None, **kwargs: Any
    ) -> None:
        dirs = [
            Path(d) for d in (log_dirs if isinstance(log_dirs, list | tuple | set) else [log_dirs])
        ]
        self.filter = filter
        event_dirs = sorted(
            {
                found.parent.resolve()
                for d in dirs
                for found in (
                    d.rglob("events.out.tfevents.*") if d.is_dir() else [d] if d.is_file() else []
                )
            }
        )
        if not event_dirs:
            raise RuntimeError(f"No event files found under {[str(d) for d in dirs]}.")
        self.event_file_dirs = [str(d) for d in event_dirs]
        self.summary_dirs = [
            root / "tensors"
            for d in dirs
            for root in (d.rglob("events.out.csevents.*") if d.is_dir() else [])
            if root.is_dir() and (root / "tensors").is_dir()
        ]
        self._kwargs = kwargs
        self._accumulators: list[Any] | None = None

    def reload(self) -> None:
        """Re-read the event files (picks up what was written since)."""
        if self._accumulators is None:
            self._accumulators = [EventAccumulator(d, **self._kwargs) for d in self.event_file_dirs]
        for accumulator in self._accumulators:
            accumulator.Reload()

    def _pattern(self, name: str) -> str:
        return f"{self.filter}*/{name}" if self.filter else name

    def _scalar_tags(self, name: str) -> list[tuple[Any, str]]:
        self.reload()
        assert self._accumulators is not None
        pattern = self._pattern(name)
        return [
            (acc, tag)
            for acc in self._accumulators
            for tag in fnmatch.filter(acc.Tags()[SCALARS], pattern)
        ]

    def scalar_names(self) -> set[str]:
        """The names of all scalars written."""
        return {tag for _, tag in self._scalar_tags("*")}

    def read_scalar(self, name: str, step: int | None = None) -> Any:
        """The scalar events called `name` (all of them, or the one at `step`).

        Returns:
            A list of `ScalarEvent(wall_time, step, value)`, or one event when `step` is given.

        Raises:
            RuntimeError: No scalar has that name.
            KeyError: None was written at `step`.
        """
        tags = self._scalar_tags(name)
        if not tags:
            raise RuntimeError(
                f"Could not find scalar {name!r}. Valid scalar names: {sorted(self.scalar_names())}"
            )
        events = [event for acc, tag in tags for event in acc.Scalars(tag)]
        if step is None:
            return events
        for event in events:
            if event.step == step:
                return event
        raise KeyError(f"Could not find scalar {name!r} at step {step}.")

    def Scalars(self, name: str) -> list[Any]:
        """Alias of `read_scalar(name)`."""
        return cast(list[Any], self.read_scalar(name))

    def tensor_names(self) -> set[str]:
        """The names of all tensors written with `add_tensor`."""
        return {
            str(path.parent.relative_to(root))
            for root in self.summary_dirs
            for path in root.rglob("*.pt")
        }

    def read_tensor(
        self, name: str, step: int | None = None, latest_only: bool = True
    ) -> TensorDescriptor | list[TensorDescriptor] | dict[int, Any] | None:
        """Tensors written as `name`: at `step`, or a dict by step; None when there are none.

        Args:
            name: The name given to `add_tensor`.
            step: Only this step.
            latest_only: With several writes at one step, return only the latest (else all,
                oldest first).
        """
        pattern = f"{self._pattern(name)}/{step if step is not None else '*'}.*.pt"
        found: dict[int, list[TensorDescriptor]] = defaultdict(list)
        for root in self.summary_dirs:
            for path in root.glob(pattern):
                content = torch.load(str(path), weights_only=True)  # never unpickles code
                found[int(content["step"])].append(
                    TensorDescriptor(
                        int(content["step"]), int(content["ns_since_epoch"]), content["tensor"]
                    )
                )
        if not found:
            return None

        def pick(items: list[TensorDescriptor]) -> Any:
            ordered = sorted(items, key=lambda d: d.ns_since_epoch)
            return ordered[-1] if latest_only else ordered

        if step is not None:
            return cast(TensorDescriptor | list[TensorDescriptor], pick(found[step]))
        return {s: pick(items) for s, items in sorted(found.items())}
