"""Run a function on N local gloo ranks in fresh processes, with a hard deadline.

For tests and benchmarks of distributed metric code on one machine: a hang becomes a
`TimeoutError` (the ranks are killed) instead of a stuck job.
"""

from __future__ import annotations

import os
import pickle
import socket
import tempfile
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

__all__ = ["run_local_ranks"]

import torch.distributed as dist
import torch.multiprocessing as mp


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _entry(
    rank: int, world: int, port: int, out: str, fn: Callable[..., Any], args: tuple[Any, ...]
) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timedelta(seconds=60))
    try:
        result = fn(rank, world, *args)
        Path(out, f"{rank}.pkl").write_bytes(pickle.dumps(result))
        dist.barrier()
    finally:
        dist.destroy_process_group()


def run_local_ranks(
    fn: Callable[..., Any], world: int, *args: Any, timeout: float = 120.0
) -> list[Any]:
    """Run `fn(rank, world, *args)` on `world` gloo ranks and return every rank's result.

    `fn` must be importable (a module-level function) and its result picklable. Each rank
    joins a fresh process group on a free local port.

    Args:
        fn: The per-rank function.
        world: Number of ranks (processes).
        *args: Extra arguments passed to `fn`.
        timeout: Seconds before the ranks are killed and `TimeoutError` is raised.

    Returns:
        The results, indexed by rank.

    Example:
        >>> results = run_local_ranks(my_module.evaluate_shard, 4, 1000)  # doctest: +SKIP
    """
    with tempfile.TemporaryDirectory() as out:
        context = mp.start_processes(
            _entry,
            args=(world, _free_port(), out, fn, args),
            nprocs=world,
            join=False,
            start_method="spawn",
        )
        deadline = time.monotonic() + timeout
        while not context.join(timeout=1.0):
            if time.monotonic() > deadline:
                for process in context.processes:
                    process.kill()
                raise TimeoutError(f"{world} ranks did not finish within {timeout:.0f} s (hang)")
        return [pickle.loads(Path(out, f"{r}.pkl").read_bytes()) for r in range(world)]
