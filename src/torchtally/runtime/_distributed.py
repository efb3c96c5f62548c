"""Starting `torch.distributed` from the environment variables that `torchrun` sets."""

from __future__ import annotations

import os

import torch.distributed as dist

__all__ = ["init_process_group_from_env", "local_rank"]

_REQUIRED_ENV = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")


def init_process_group_from_env(dist_backend: str) -> None:
    """Join the default process group described by `RANK`, `WORLD_SIZE`, `MASTER_ADDR`, ...

    An already initialised default group is kept as it is.

    Args:
        dist_backend: The `torch.distributed` backend: "nccl" for GPUs, "gloo" for CPUs.

    Example:
        >>> # under `torchrun --nproc-per-node=2 train.py` on GPUs; skipped as a doctest
        >>> init_process_group_from_env("nccl")  # doctest: +SKIP
    """
    if not dist.is_available():
        raise RuntimeError(
            "Argument `enable_distributed=True` needs torch.distributed, which this build of "
            "torch lacks. Received: enable_distributed=True"
        )
    if dist.is_initialized():
        return
    missing = [name for name in _REQUIRED_ENV if name not in os.environ]
    if missing:
        raise RuntimeError(
            "Argument `enable_distributed=True` needs the environment variables that torchrun "
            f"sets ({', '.join(_REQUIRED_ENV)}); missing: {', '.join(missing)}. Launch the "
            "script with `torchrun --nproc-per-node=N script.py`."
        )
    dist.init_process_group(backend=dist_backend, init_method="env://")


def local_rank() -> int:
    """This process's rank on its node (`LOCAL_RANK`, as torchrun sets it; 0 when unset).

    Returns:
        The local rank.

    Example:
        >>> local_rank()
        0
    """
    return int(os.environ.get("LOCAL_RANK", "0"))
