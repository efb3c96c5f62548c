"""NeuroBench's WISDM data module interface, on a small file of the real file's layout."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from torchtally.bench.datasets import WISDM


def _write(folder: Path) -> Path:
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((n, 40, 6)).astype(np.float32) for n in (12, 4, 5)]
    arrays += [np.eye(7)[rng.integers(0, 7, n)] for n in (12, 4, 5)]
    path = folder / "watch_subset2_40.npz"
    np.savez(path, *arrays)
    return path


def test_wisdm_as_neurobench(tmp_path: Path) -> None:
    path = _write(tmp_path)
    wisdm = WISDM(str(tmp_path), batch_size=4)
    assert len(wisdm) == 21
    assert list(wisdm.train_dataset[0].shape) == [12, 40, 6]
    assert (wisdm.num_steps, wisdm.num_inputs) == (40, 6)
    labels = np.argmax(np.load(path)["arr_3"], axis=-1)
    assert torch.equal(wisdm.train_dataset[1], torch.as_tensor(labels))
    assert wisdm.num_outputs == len(np.unique(labels))
    wisdm.setup("fit")
    assert len(wisdm.train_dataloader().dataset) == 12
    assert next(iter(wisdm.test_dataloader()))[0].shape == (4, 40, 6)
    fresh = WISDM(str(path))
    fresh.setup("test")
    assert fresh.ds_val is None and fresh.ds_train is None and fresh.ds_test is not None
    with pytest.raises(RuntimeError, match="call setup"):
        fresh.train_dataloader()


def test_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"watch_subset2_40\.npz"):
        WISDM(str(tmp_path / "nehar"))
