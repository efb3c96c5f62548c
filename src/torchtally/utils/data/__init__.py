"""Data loading and run execution for cstorch programs.

`DataLoader` builds a torch loader from an input function in each process, `DataExecutor`
drives the run (batches, step closures, checkpoint steps, throughput), and the sharding helpers
split a dataset across ranks and loader workers.

Example:
    >>> import torch
    >>> def input_fn(batch_size):
    ...     data = torch.utils.data.TensorDataset(torch.arange(64.0))
    ...     return torch.utils.data.DataLoader(data, batch_size=batch_size)
    >>> dataloader = DataLoader(input_fn, batch_size=32)
    >>> for batch in DataExecutor(dataloader, num_steps=4, checkpoint_steps=2):
    ...     total = batch[0].sum()  # the training step goes here
"""

from torchtally.runtime._surface import from_numpy, to_numpy
from torchtally.utils.data._dataloader import DataLoader
from torchtally.utils.data._executor import DataExecutor, current_executor
from torchtally.utils.data._profiler import ACTIVITIES, Profiler, RateTracker
from torchtally.utils.data._restartable import RestartableDataLoader
from torchtally.utils.data._sampler import DistributedSampler, pad_index
from torchtally.utils.data._sharding import (
    ShardedIterableDataset,
    get_rank_and_world_size,
    shard_dataset,
)
from torchtally.utils.data._steps import SyntheticDataset, compute_num_steps

__all__ = [
    "ACTIVITIES",
    "DataExecutor",
    "DataLoader",
    "DistributedSampler",
    "Profiler",
    "RateTracker",
    "RestartableDataLoader",
    "ShardedIterableDataset",
    "SyntheticDataset",
    "compute_num_steps",
    "current_executor",
    "from_numpy",
    "get_rank_and_world_size",
    "pad_index",
    "shard_dataset",
    "to_numpy",
]
