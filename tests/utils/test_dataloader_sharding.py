"""`DataLoader(input_fn, ...)`, `CSConfig` and the sharding helpers."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader as TorchDataLoader
from torch.utils.data import TensorDataset

from torchtally.utils import CSConfig
from torchtally.utils.data import (
    DataLoader,
    ShardedIterableDataset,
    get_rank_and_world_size,
    shard_dataset,
)


def test_input_fn_is_called_once_lazily_with_the_given_arguments() -> None:
    calls: list[tuple[Any, ...]] = []

    def input_fn(n: int, batch_size: int = 1) -> TorchDataLoader[Any]:
        calls.append((n, batch_size))
        return TorchDataLoader(TensorDataset(torch.arange(float(n))), batch_size=batch_size)

    loader = DataLoader(input_fn, 10, batch_size=4)
    assert calls == []  # nothing is built until the loader is used
    assert len(loader) == 3
    assert loader.batch_size == 4
    first = [b[0].tolist() for b in loader]
    second = [b[0].tolist() for b in loader]
    assert first == second == [[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0]]
    assert calls == [(10, 4)]
    assert isinstance(loader.dataloader, TorchDataLoader)


def test_dataloader_arguments_are_checked() -> None:
    with pytest.raises(TypeError, match="Argument `input_fn` must be a callable"):
        DataLoader("data.csv")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Argument `input_fn` must return an iterable"):
        iter(DataLoader(lambda: 5))
    with pytest.raises(TypeError, match="has no length"):
        len(DataLoader(lambda: (x for x in range(3))))


def test_cs_config_keeps_its_settings() -> None:
    config = CSConfig(num_csx=2, max_wgt_servers=4)
    assert config.settings == {"num_csx": 2, "max_wgt_servers": 4}
    assert repr(config) == "CSConfig(num_csx=2, max_wgt_servers=4)"


def test_without_torch_distributed_this_is_rank_0_of_1() -> None:
    assert get_rank_and_world_size() == (0, 1)


def test_map_style_shards_partition_the_dataset() -> None:
    data = TensorDataset(torch.arange(11))
    shards = [shard_dataset(data, rank=r, world_size=3) for r in range(3)]
    items = [[int(shard[i][0]) for i in range(len(shard))] for shard in shards]  # type: ignore[arg-type]
    assert items == [[0, 3, 6, 9], [1, 4, 7, 10], [2, 5, 8]]
    assert len(shard_dataset(data)) == 11  # rank 0 of 1: everything


def test_iterable_shards_split_across_ranks_and_loader_workers() -> None:
    seen: list[int] = []
    for rank in range(2):
        shard = shard_dataset(RangeStream(12), rank=rank, world_size=2)
        assert isinstance(shard, ShardedIterableDataset)
        loader = TorchDataLoader(shard, batch_size=None, num_workers=2)
        seen.extend(int(x) for x in loader)
    assert sorted(seen) == list(range(12))  # each item exactly once over 2 ranks x 2 workers


class RangeStream(torch.utils.data.IterableDataset):  # type: ignore[type-arg]
    def __init__(self, n: int) -> None:
        self.n = n

    def __iter__(self) -> Any:
        return iter(range(self.n))


def test_without_workers_an_iterable_shard_takes_every_world_size_th_item() -> None:
    assert list(ShardedIterableDataset(range(10), rank=1, world_size=3)) == [1, 4, 7]


def test_shard_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match=r"Argument `rank` must be < world_size \(2\)"):
        shard_dataset([1, 2, 3], rank=2, world_size=2)
    with pytest.raises(ValueError, match=r"Argument `world_size` must be an integer >= 1"):
        shard_dataset([1, 2, 3], rank=0, world_size=0)
    with pytest.raises(ValueError, match=r"Argument `rank` must be an integer >= 0"):
        ShardedIterableDataset(range(3), rank=-1, world_size=2)
