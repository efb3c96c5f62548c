"""What each rank runs in the distributed RestartableDataLoader test (importable by spawned
processes)."""

from __future__ import annotations

from typing import Any

import torch

import torchtally as cstorch
from torchtally.utils.data import RestartableDataLoader


def _loader(rank: int, world: int) -> cstorch.utils.data.DataLoader:
    def input_fn() -> RestartableDataLoader:
        data = torch.utils.data.TensorDataset(torch.arange(40))
        shard = cstorch.utils.data.shard_dataset(data, rank=rank, world_size=world)
        return RestartableDataLoader(shard, batch_size=3, shuffle=True, seed=7)

    return cstorch.utils.data.DataLoader(input_fn)


def stop_and_resume(rank: int, world: int) -> dict[str, Any]:
    """Two epochs uninterrupted; then the same run stopped after 5 batches, its state taken on
    every rank (a collective), and resumed by a fresh loader."""
    whole = _loader(rank, world)
    expected = [b[0].tolist() for _ in range(2) for b in whole]
    first = _loader(rank, world)
    batches = iter(first)
    seen = [next(batches)[0].tolist() for _ in range(5)]
    state = first.state_dict()
    resumed = _loader(rank, world)
    resumed.load_state_dict(state)
    seen += [b[0].tolist() for b in resumed] + [b[0].tolist() for b in resumed]
    return {"expected": expected, "seen": seen, "state": state}
