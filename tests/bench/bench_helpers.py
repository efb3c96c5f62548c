"""Helpers shared by the torchtally.bench tests (the fixtures are in conftest.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch.utils.data import DataLoader, TensorDataset

SAMPLES, BATCH = 50, 16  # an uneven last batch (2 samples) exercises the batch weighting


def make_loader(inputs: torch.Tensor, labels: torch.Tensor, batch_size: int = BATCH) -> DataLoader:
    return DataLoader(TensorDataset(inputs, labels), batch_size=batch_size)


def argmax_last(preds: torch.Tensor) -> torch.Tensor:
    return preds.argmax(-1)


RunBoth = Callable[..., tuple[dict[str, Any], dict[str, Any]]]
