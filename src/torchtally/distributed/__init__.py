"""Exact global metric results under torch.distributed (gloo on CPU, NCCL on GPU)."""

from torchtally.distributed._sync import distributed_world_size, sync_states, unsync_states

__all__ = ["distributed_world_size", "sync_states", "unsync_states"]
