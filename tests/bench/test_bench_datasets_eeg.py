"""ThorEEGMI against NeuroBench 2.3.0's own loader on tiny files of the real names and shapes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from torchtally.bench.datasets import ThorEEGMI


def _write(root: Path) -> None:
    rng = np.random.default_rng(5)
    for split, n in (("train", 9), ("val", 4)):
        np.save(root / f"{split}_X.npy", rng.standard_normal((n, 30, 6)))
        np.save(root / f"{split}_y.npy", rng.integers(0, 2, n))


@pytest.mark.parametrize("split", ["train", "val"])
def test_thor_eeg_matches_neurobench(tmp_path: Path, split: str) -> None:
    from neurobench.datasets.EEG import ThorEEGMI as Oracle

    _write(tmp_path)
    ours = ThorEEGMI(tmp_path, split)
    oracle = Oracle(str(tmp_path), split, download=False)
    assert len(ours) == len(oracle) == {"train": 9, "val": 4}[split]
    assert torch.equal(ours.data, oracle.data) and torch.equal(ours.targets, oracle.targets)
    for idx in (0, 3, [0, 2], torch.tensor([1, 3])):
        for got, want in zip(ours[idx], oracle[idx], strict=True):
            assert torch.equal(got, want)
    assert ours[1][0].shape == (30, 6) and ours[1][1].shape == ()
    assert (ours.n_timesteps, ours.n_channels, ours.n_classes) == (
        oracle.n_timesteps,
        oracle.n_channels,
        oracle.n_classes,
    )
    assert repr(ours) == repr(oracle)


def test_thor_eeg_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"val_X\.npy.*val_y\.npy.*never downloads"):
        ThorEEGMI(tmp_path, "val")
    with pytest.raises(ValueError, match=r"`split` must be 'train' or 'val'.*split='test'"):
        ThorEEGMI(tmp_path, "test")
    with pytest.raises(
        ValueError, match=r"never downloads.*download=True.*train_X\.npy.*train_y\.npy"
    ):
        ThorEEGMI(tmp_path, download=True)
    np.save(tmp_path / "train_X.npy", np.zeros((3, 4)))
    np.save(tmp_path / "train_y.npy", np.zeros(3))
    with pytest.raises(ValueError, match=r"\(n_trials, n_timesteps, n_channels\).*\(3, 4\)"):
        ThorEEGMI(tmp_path)
