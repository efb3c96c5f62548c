"""Exact global metric results under torch.distributed (gloo on CPU, NCCL on GPU)."""

from torchtally.distributed._launch import run_local_ranks
from torchtally.distributed._sync import distributed_world_size, sync_states, unsync_states

__all__ = ["distributed_world_size", "run_local_ranks", "sync_states", "unsync_states"]
