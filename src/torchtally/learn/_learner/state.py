"""Where a run stands, and the random state it needs to continue bit for bit.

A `Position` says how far a run got: the epoch in progress, how many of its splits are done,
and how many steps of the next split ran. Checkpoints are named after it:
`epoch-<n>.h5` once epoch n is complete, `epoch-<n>-<split>-step-<k>.h5` for a run stopped after
step k of a split. The random state covers torch's CPU (and CUDA) generators, Python's `random`,
numpy's global generator and the train loader's own generator, all as tensors and plain
numbers, so `cstorch.save` stores it without pickling.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, final

import torch

__all__ = [
    "Position",
    "Replay",
    "capture_rng",
    "checkpoint_name",
    "checkpoint_position",
    "latest_checkpoint",
    "loader_generator",
    "restore_rng",
]

_NAME = re.compile(r"^epoch-(\d+)(?:-([a-z]+)-step-(\d+))?\.h5$")


@final
@dataclass(frozen=True, order=True)
class Position:
    """How far a run got.

    Attributes:
        epoch: The 1-based epoch in progress.
        split_index: How many of the epoch's splits (train, valid) are complete.
        step: How many steps of split `split_index` ran.

    Example:
        >>> Position(2, 0, 0) < Position(2, 0, 5) < Position(2, 1, 0)
        True
    """

    epoch: int
    split_index: int
    step: int

    def to_dict(self) -> dict[str, int]:
        """The position as a dict of ints (for the checkpoint)."""
        return {"epoch": self.epoch, "split_index": self.split_index, "step": self.step}

    @staticmethod
    def from_dict(state: dict[str, Any]) -> Position:
        """The position saved by `to_dict`."""
        return Position(int(state["epoch"]), int(state["split_index"]), int(state["step"]))


def checkpoint_name(position: Position, splits: tuple[str, ...]) -> str:
    """The file name of a checkpoint taken at `position`.

    Args:
        position: Where the run stands (normalised: an epoch with every split done is the
            start of the next).
        splits: The epoch's splits, in order.

    Returns:
        `epoch-<n>.h5` at an epoch boundary (n = the last complete epoch), else
        `epoch-<n>-<split>-step-<k>.h5`.

    Example:
        >>> checkpoint_name(Position(3, 0, 0), ("train", "valid"))
        'epoch-2.h5'
    """
    if position.split_index == 0 and position.step == 0:
        return f"epoch-{position.epoch - 1}.h5"
    return f"epoch-{position.epoch}-{splits[position.split_index]}-step-{position.step}.h5"


def checkpoint_position(name: str, splits: tuple[str, ...]) -> Position | None:
    """The position a checkpoint file name (`checkpoint_name`) stands for, or None.

    Args:
        name: A file name.
        splits: The epoch's splits, in order.

    Returns:
        The position, or None when `name` is not a learner checkpoint of these splits.

    Example:
        >>> checkpoint_position("epoch-2.h5", ("train", "valid"))
        Position(epoch=3, split_index=0, step=0)
    """
    match = _NAME.match(name)
    if match is None or (match.group(2) is not None and match.group(2) not in splits):
        return None
    epoch = int(match.group(1))
    if match.group(2) is None:
        return Position(epoch + 1, 0, 0)
    return Position(epoch, splits.index(match.group(2)), int(match.group(3)))


def latest_checkpoint(directory: str | Path, splits: tuple[str, ...]) -> Path | None:
    """The checkpoint in `directory` that got furthest (by name), or None.

    Args:
        directory: The checkpoint directory.
        splits: The epoch's splits, in order (ranks the split of mid-epoch checkpoints).

    Returns:
        Its path, or None when there is none.
    """
    folder = Path(directory)
    if not folder.is_dir():
        return None
    best: tuple[Position, Path] | None = None
    for path in folder.iterdir():
        position = checkpoint_position(path.name, splits)
        if position is None or not path.is_file():
            continue
        if best is None or position > best[0]:
            best = (position, path)
    return None if best is None else best[1]


def capture_rng(loader_generator: torch.Generator | None = None) -> dict[str, Any]:
    """The state of every random generator a training loop draws from.

    Args:
        loader_generator: The train loader's own generator, if it has one.

    Returns:
        A dict of tensors, ints and None that `restore_rng` takes back.

    Example:
        >>> state = capture_rng(); a = torch.rand(1); restore_rng(state)
        >>> torch.equal(torch.rand(1), a)
        True
    """
    version, internal, gauss = random.getstate()
    return {
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else [],
        "python": {
            "version": version,
            "state": torch.tensor(internal, dtype=torch.int64),
            "gauss": gauss,
        },
        "numpy": _numpy_state(),
        "loader": None if loader_generator is None else loader_generator.get_state(),
    }


def restore_rng(state: dict[str, Any], loader_generator: torch.Generator | None = None) -> None:
    """Put every generator back to a state taken by `capture_rng`.

    Args:
        state: The captured state.
        loader_generator: The train loader's own generator, if it has one.
    """
    torch.set_rng_state(state["torch"].cpu())
    cuda = state.get("cuda") or []
    if cuda and torch.cuda.is_available():
        torch.cuda.set_rng_state_all([s.cpu() for s in cuda])
    py = state["python"]
    internal = tuple(int(v) for v in py["state"].tolist())
    random.setstate((int(py["version"]), internal, py["gauss"]))
    if state.get("numpy") is not None:
        _set_numpy_state(state["numpy"])
    if loader_generator is not None and state.get("loader") is not None:
        loader_generator.set_state(state["loader"].cpu())


def _numpy_state() -> dict[str, Any] | None:
    try:
        import numpy as np
    except ImportError:  # numpy is optional: without it there is no numpy state to keep
        return None
    _, keys, pos, has_gauss, cached = np.random.get_state(legacy=True)
    return {
        "keys": torch.from_numpy(np.asarray(keys, dtype=np.int64)),
        "pos": int(pos),
        "has_gauss": int(has_gauss),
        "cached": float(cached),
    }


def _set_numpy_state(state: dict[str, Any]) -> None:
    import numpy as np

    keys = state["keys"].cpu().numpy().astype(np.uint32)
    np.random.set_state(("MT19937", keys, state["pos"], state["has_gauss"], state["cached"]))


def loader_generator(loader: Any) -> torch.Generator | None:
    """The loader's own random generator (a torch DataLoader's `generator=`, also inside a
    `cstorch.utils.data.DataLoader`), if any."""
    for source in (loader, getattr(loader, "dataloader", None)):
        generator = getattr(source, "generator", None)
        if isinstance(generator, torch.Generator):
            return generator
    return None


@final
class Replay:
    """A loader picked up after `skip` batches of an epoch that was stopped part-way.

    Iterating it puts the random state back to where the stopped epoch started, starts the
    loader (which draws its shuffle as it did then), discards the batches that already ran,
    then restores the random state of the moment of the stop and yields the rest.

    Args:
        loader: The loader (it must produce the same batches for the same random state).
        skip: How many batches already ran.
        start_rng: `capture_rng` at the start of the stopped epoch.
        stop_rng: `capture_rng` at the stop.

    Example:
        >>> loader = torch.utils.data.DataLoader(torch.arange(8), batch_size=2, shuffle=True)
        >>> start = capture_rng()
        >>> epoch = [batch.tolist() for batch in loader]  # stopped after 3 of these 4 batches
        >>> rest = Replay(loader, 3, start, capture_rng())
        >>> len(rest), [batch.tolist() for batch in rest] == epoch[3:]
        (1, True)
    """

    def __init__(
        self, loader: Iterable[Any], skip: int, start_rng: dict[str, Any], stop_rng: dict[str, Any]
    ) -> None:
        self.loader = loader
        self.skip = skip
        self.start_rng = start_rng
        self.stop_rng = stop_rng
        self.batch_size = getattr(loader, "batch_size", None)

    def __len__(self) -> int:
        return len(self.loader) - self.skip  # type: ignore[arg-type]

    def __iter__(self) -> Iterator[Any]:
        generator = loader_generator(self.loader)
        restore_rng(self.start_rng, generator)
        iterator = iter(self.loader)
        for _ in range(self.skip):
            next(iterator)
        restore_rng(self.stop_rng, generator)
        yield from iterator
