"""Issue 13: the README's learner on the digits MLP (2.4k parameters) wrote 86 MB per epoch
when AUROC's exact buffer held 2**20 samples. A checkpoint now stores only the filled rows of a
`cat` state, so each epoch's file stays well under 1 MB with the README's capacity and with the
default one alike, and resuming from it restores the rows."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from sklearn.datasets import load_digits
from torch import nn

import torchtally as cstorch
from torchtally.learn import Learner
from torchtally.metrics import AccuracyMetric, AUROCMetric, LearningRateMetric, MeanMetric
from torchtally.runtime import load

LIMIT = 1 << 20


def _digits() -> tuple[torch.utils.data.DataLoader, torch.utils.data.DataLoader]:
    x, y = load_digits(return_X_y=True)
    inputs = torch.tensor(x / 16.0, dtype=torch.float32)
    labels = torch.tensor(y)
    train = torch.utils.data.TensorDataset(inputs[:1500], labels[:1500])
    valid = torch.utils.data.TensorDataset(inputs[1500:], labels[1500:])  # 297 digits
    generator = torch.Generator().manual_seed(0)
    return (
        torch.utils.data.DataLoader(train, batch_size=64, shuffle=True, generator=generator),
        torch.utils.data.DataLoader(valid, batch_size=64),
    )


@pytest.mark.parametrize("capacity", [4096, None], ids=["readme-capacity", "default-capacity"])
def test_readme_learner_checkpoints_stay_under_1_mb_per_epoch(
    tmp_path: Path, capacity: int | None
) -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))
    assert sum(p.numel() for p in model.parameters()) == 2410
    auroc = AUROCMetric(10) if capacity is None else AUROCMetric(10, capacity=capacity)
    learner = Learner(
        model,
        cstorch.optim.Adam(model.parameters(), lr=3e-3),
        metrics={
            "train": [MeanMetric("loss"), AccuracyMetric(), LearningRateMetric()],
            "valid": [MeanMetric("loss"), AccuracyMetric(), auroc],
        },
        num_epochs=2,
        logdir=str(tmp_path),
        keep_checkpoints=None,
    )
    train, valid = _digits()
    learner.fit(train, valid)
    files = sorted((tmp_path / "checkpoints").glob("*.h5"))
    sizes = {f.name: f.stat().st_size for f in files}
    print(f"\nREADME learner checkpoints (AUROC capacity {auroc.capacity}): {sizes}")
    assert len(files) == 2 and all(0 < size < LIMIT for size in sizes.values()), sizes
    saved = load(files[-1])["metrics"]["valid"]["auroc"]
    assert saved["score_bits"].shape[0] == 297  # the filled rows, not the capacity
    restored = AUROCMetric(10) if capacity is None else AUROCMetric(10, capacity=capacity)
    restored.load_state_dict_all(dict(saved))  # back into the preallocated buffer
    assert restored.score_bits.shape[0] == auroc.capacity + 1
    assert float(restored.compute()) == float(auroc.compute())
