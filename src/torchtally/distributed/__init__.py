"""Exact global metric results under torch.distributed (gloo on CPU, NCCL on GPU)."""

from torchtally.distributed._launch import run_local_ranks
from torchtally.metrics._sync import (
    SyncConfigurationError,
    SyncTimeoutError,
    distributed_world_size,
    set_sync_timeout,
    sync_states,
    sync_timeout,
    unsync_states,
)

__all__ = [
    "SyncConfigurationError",
    "SyncTimeoutError",
    "distributed_world_size",
    "run_local_ranks",
    "set_sync_timeout",
    "sync_states",
    "sync_timeout",
    "unsync_states",
]
