"""NeuroBench's `ThorEEGMI` (Lee2019 EEG motor imagery, THOR challenge split) over local files."""

from __future__ import annotations

import os

import numpy as np
import torch
from torch import Tensor
from torch.utils.data import Dataset

from torchtally.bench.datasets._files import missing_files_error, refuse_download

__all__ = ["ThorEEGMI"]

SOURCE = "https://huggingface.co/datasets/NeuroBench/thor_eeg_mi (the four .npy files)"


class ThorEEGMI(Dataset[tuple[Tensor, Tensor]]):
    """NeuroBench's `ThorEEGMI`: preprocessed Lee2019 motor-imagery trials. Items are
    `(trial (n_timesteps, n_channels) float32, label 0-d long)` (0 right hand, 1 left hand); a
    list or tensor of indices gives a batch. `data`, `targets`, `n_timesteps`, `n_channels`,
    `n_classes` as in NeuroBench.

    Args:
        root: The folder holding `train_X.npy`, `train_y.npy`, `val_X.npy`, `val_y.npy`.
        split: `"train"` or `"val"`.
        download: Must be False: torchtally never downloads (NeuroBench's default is True).

    Raises:
        FileNotFoundError: If the split's files are missing, naming them.
    """

    def __init__(
        self, root: str | os.PathLike[str], split: str = "train", download: bool = False
    ) -> None:
        if split not in ("train", "val"):
            raise ValueError(
                f"Argument `split` must be 'train' or 'val'. Received: split={split!r}"
            )
        self.root = os.fspath(root)
        self.split = split
        paths = [os.path.join(self.root, f"{split}_{part}.npy") for part in ("X", "y")]
        refuse_download("ThorEEGMI", download, " and ".join(map(repr, paths)), SOURCE)
        missing = [path for path in paths if not os.path.isfile(path)]
        if missing:
            raise missing_files_error("ThorEEGMI", missing, SOURCE)
        x, y = (np.load(path) for path in paths)
        if x.ndim != 3 or y.ndim != 1 or len(x) != len(y):
            raise ValueError(
                f"ThorEEGMI: {paths[0]!r} must hold (n_trials, n_timesteps, n_channels) and "
                f"{paths[1]!r} (n_trials,). Received: shapes {x.shape} and {y.shape}"
            )
        self.data = torch.tensor(x, dtype=torch.float32)
        self.targets = torch.tensor(y, dtype=torch.long)

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, idx: int | list[int] | Tensor) -> tuple[Tensor, Tensor]:
        return self.data[idx], self.targets[idx]

    @property
    def n_timesteps(self) -> int:
        return int(self.data.shape[1])

    @property
    def n_channels(self) -> int:
        return int(self.data.shape[2])

    @property
    def n_classes(self) -> int:
        return int(self.targets.max()) + 1

    def __repr__(self) -> str:
        return (
            f"ThorEEGMI(split={self.split!r}, n_trials={len(self)}, "
            f"n_channels={self.n_channels}, n_timesteps={self.n_timesteps}, "
            f"n_classes={self.n_classes})"
        )
