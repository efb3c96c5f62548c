"""NeuroBench's WISDM human-activity-recognition data module, without Lightning or downloads."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import torch
from torch import Tensor
from torch.utils.data import DataLoader, TensorDataset

__all__ = ["WISDM"]

WISDM_FILE = "watch_subset2_40.npz"


def _tensors(x: np.ndarray, one_hot: np.ndarray) -> tuple[Tensor, Tensor]:
    labels = np.argmax(one_hot, axis=-1)
    return torch.tensor(x, dtype=torch.float), torch.tensor(labels, dtype=torch.long)


class WISDM:
    """NeuroBench's `WISDM` (the NeHAR task's data): train/val/test splits from
    `watch_subset2_40.npz` (arrays `arr_0`..`arr_5`: x train/val/test, one-hot y train/val/test).

    Same attributes and methods as NeuroBench's LightningDataModule (`train_dataset`,
    `setup(stage)`, `*_dataloader()`, `num_inputs`, `num_steps`, `num_outputs`, `len`), as a
    plain class; loaders use the main process (NeuroBench's use 8 persistent workers).

    Args:
        path: The folder holding `watch_subset2_40.npz`, or the `.npz` file itself.
        batch_size: The loaders' batch size.

    Raises:
        FileNotFoundError: If the file is missing (nothing is downloaded), naming it.
    """

    def __init__(
        self, path: str | os.PathLike[str] = "path/to/file", batch_size: int = 256
    ) -> None:
        self.ds_train: TensorDataset | None = None
        self.ds_val: TensorDataset | None = None
        self.ds_test: TensorDataset | None = None
        self.batch_size = batch_size
        x_train, x_val, x_test, y_train, y_val, y_test = self.load_wisdm2_data(path)
        self.train_dataset = _tensors(x_train, y_train)
        self.val_dataset = _tensors(x_val, y_val)
        self.test_dataset = _tensors(x_test, y_test)
        self.num_steps, self.num_inputs = self.train_dataset[0].shape[1:3]
        self.num_outputs = len(np.unique(np.argmax(y_train, axis=-1)))

    @staticmethod
    def load_wisdm2_data(path: str | os.PathLike[str]) -> tuple[np.ndarray, ...]:
        """The six arrays of the data file (NeuroBench's order)."""
        path = os.fspath(path)
        file_path = path if path.endswith(".npz") else os.path.join(path, WISDM_FILE)
        if not os.path.isfile(file_path):
            raise FileNotFoundError(
                f"WISDM: missing data file {file_path!r} ({WISDM_FILE}, NeuroBench's WISDM "
                "subset; torchtally downloads nothing: fetch it as NeuroBench's WISDM loader "
                "does, from its Google Drive folder, and pass its folder or path)"
            )
        with np.load(file_path) as data:
            return tuple(data[f"arr_{i}"] for i in range(6))

    def setup(self, stage: str) -> None:
        """Build the `TensorDataset`s for ``"fit"`` (all three) or ``"test"``/``"predict"``."""
        if stage == "fit":
            self.ds_train = TensorDataset(*self.train_dataset)
            self.ds_val = TensorDataset(*self.val_dataset)
            self.ds_test = TensorDataset(*self.test_dataset)
        elif stage in ("test", "predict"):
            self.ds_test = TensorDataset(*self.test_dataset)
        else:
            raise ValueError(
                f"Argument `stage` must be 'fit', 'test' or 'predict'. Received: stage={stage!r}"
            )

    def _loader(self, dataset: TensorDataset | None, name: str, shuffle: bool) -> DataLoader[Any]:
        if dataset is None:
            raise RuntimeError(f"WISDM.{name}: call setup() with the right stage first")
        return DataLoader(dataset, batch_size=self.batch_size, shuffle=shuffle)

    def train_dataloader(self) -> DataLoader[Any]:
        return self._loader(self.ds_train, "train_dataloader", shuffle=True)

    def val_dataloader(self) -> DataLoader[Any]:
        return self._loader(self.ds_val, "val_dataloader", shuffle=False)

    def test_dataloader(self) -> DataLoader[Any]:
        return self._loader(self.ds_test, "test_dataloader", shuffle=False)

    def predict_dataloader(self) -> DataLoader[Any]:
        return self._loader(self.ds_test, "predict_dataloader", shuffle=False)

    def __len__(self) -> int:
        return sum(d[0].shape[0] for d in (self.train_dataset, self.val_dataset, self.test_dataset))
