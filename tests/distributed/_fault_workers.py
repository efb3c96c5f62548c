"""Per-rank functions of the distributed fault tests, and a launcher that survives dead ranks.

`run_local_ranks` joins every rank and expects each to finish; these tests kill, stall or
misconfigure ranks on purpose, so `run_ranks` collects whatever each rank wrote and reports a
rank with no result as None.
"""

from __future__ import annotations

import os
import pickle
import socket
import tempfile
import time
import traceback
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from torchtally.distributed import set_sync_timeout
from torchtally.metrics import (
    AUROCMetric,
    F1ScoreMetric,
    MAEMetric,
    MeanIOUMetric,
    Metric,
    MetricCollection,
    MetricValueError,
    MSEMetric,
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _entry(rank: int, world: int, port: int, out: str, fn: Callable[..., Any]) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timedelta(seconds=60))
    try:
        result = fn(rank, world)
    except BaseException:
        result = ("crashed", traceback.format_exc())
    Path(out, f"{rank}.pkl").write_bytes(pickle.dumps(result))
    # No barrier and no destroy: a rank may be gone, or a collective left pending on purpose.
    os._exit(0)


def run_ranks(fn: Callable[..., Any], world: int, timeout: float = 90.0) -> list[Any]:
    """Run `fn(rank, world)` on `world` fresh gloo ranks; None for a rank with no result."""
    context = mp.get_context("spawn")
    with tempfile.TemporaryDirectory() as out:
        port = _free_port()
        procs = [
            context.Process(target=_entry, args=(r, world, port, out, fn)) for r in range(world)
        ]
        for p in procs:
            p.start()
        deadline = time.monotonic() + timeout
        for p in procs:
            p.join(max(0.0, deadline - time.monotonic()))
        for p in procs:
            if p.is_alive():
                p.kill()
                p.join()
        results = []
        for r in range(world):
            path = Path(out, f"{r}.pkl")
            results.append(pickle.loads(path.read_bytes()) if path.exists() else None)
        return results


def _outcome(compute: Callable[[], Any]) -> tuple[str, str]:
    try:
        return ("value", repr(compute()))
    except Exception as error:
        return (type(error).__name__, str(error))


def _updated(metric: Metric, labels: torch.Tensor, predictions: torch.Tensor) -> Metric:
    metric.update(labels, predictions)
    return metric


def mismatched_configurations(rank: int, world: int) -> dict[str, Any]:
    """Each scenario's outcome on this rank; all share one process group in turn (one spawn
    for all of them keeps the suite fast)."""
    g = torch.Generator().manual_seed(rank)
    y, p = torch.randn(20, generator=g), torch.randn(20, generator=g)
    results = {}
    error_kind = MSEMetric if rank == 0 else MAEMetric
    results["mse_vs_mae"] = _outcome(_updated(error_kind(name="error"), y, p).compute)
    keys = ["mse", "mae"] if rank == 0 else ["mae", "mse"]
    makers = {"mse": MSEMetric, "mae": MAEMetric}
    collection = MetricCollection({k: makers[k]() for k in keys})
    collection.update(y, p)
    results["collection_order"] = _outcome(collection.compute)
    labels = torch.randint(0, 3, (20,), generator=g)
    iou = MeanIOUMetric(3 + rank)
    iou.update(labels, labels)
    results["mean_iou_3_vs_4"] = _outcome(iou.compute)
    auroc = AUROCMetric(capacity=100 * (rank + 1))
    auroc.update(torch.randint(0, 2, (20,), generator=g), torch.rand(20, generator=g))
    results["auroc_capacity"] = _outcome(auroc.compute)
    f1 = F1ScoreMetric(3, average_type="macro" if rank == 0 else "micro")
    f1.update(labels, labels)
    results["f1_macro_vs_micro"] = _outcome(f1.compute)
    same = _updated(MSEMetric(), y, p)  # the group still works after the refusals
    results["same_afterwards"] = _outcome(lambda: float(same.compute()))
    results["overflow"] = overflow_across_ranks(rank, world)
    results["threads"] = two_threads_per_rank(rank, world)  # type: ignore[assignment]
    return results


def overflow_across_ranks(rank: int, world: int) -> tuple[str, str]:
    auroc = AUROCMetric(capacity=100)
    n = 150 if rank == 0 else 10
    g = torch.Generator().manual_seed(rank)
    auroc.update(torch.randint(0, 2, (n,), generator=g), torch.rand(n, generator=g))
    try:
        auroc.compute()
    except MetricValueError as error:
        return ("MetricValueError", str(error))
    return ("value", "no error")


def one_rank_skips_compute(rank: int, world: int) -> tuple[str, str, float]:
    set_sync_timeout(2.0)
    metric = MSEMetric()
    metric.update(torch.ones(3), torch.zeros(3))
    if rank == 1:
        time.sleep(8.0)  # alive, but never reaches compute()
        return ("skipped", "", 0.0)
    start = time.monotonic()
    kind, message = _outcome(metric.compute)
    return (kind, message, time.monotonic() - start)


def one_rank_dies(rank: int, world: int) -> tuple[str, str, float]:
    set_sync_timeout(5.0)
    metric = MSEMetric()
    metric.update(torch.ones(3), torch.zeros(3))
    if rank == world - 1:
        os._exit(1)  # a crash before its sync
    start = time.monotonic()
    kind, message = _outcome(metric.compute)
    return (kind, message, time.monotonic() - start)


def two_threads_per_rank(rank: int, world: int) -> dict[str, list[tuple[str, str]]]:
    """Two threads per rank, each computing its own metric: on a process group per thread
    (the supported way), then both on the default group."""
    import threading

    from torchtally.metrics import MeanMetric

    groups = [dist.new_group(backend="gloo") for _ in range(2)]  # same order on every rank
    results: dict[str, list[tuple[str, str]]] = {}
    for mode in ("group_per_thread", "shared_group"):
        mse, mean = MSEMetric(), MeanMetric()
        mse.update(torch.ones(4), torch.full((4,), float(rank)))  # global MSE 0.5 on 2 ranks
        mean.update(torch.full((4,), float(rank + 1)))  # global mean 1.5 on 2 ranks
        if mode == "group_per_thread":
            mse.process_group, mean.process_group = groups
        outcomes: list[tuple[str, str]] = [("", ""), ("", "")]

        def run(index: int, metric: Metric, into: list[tuple[str, str]]) -> None:
            into[index] = _outcome(lambda: float(metric.compute()))

        threads = [
            threading.Thread(target=run, args=(i, m, outcomes)) for i, m in enumerate((mse, mean))
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        results[mode] = outcomes
        dist.barrier()
    return results


def one_rank_of_three_differs(rank: int, world: int) -> tuple[str, str]:
    """Two ranks agree on MSE, the last has MAE: all three must refuse, not just the odd one."""
    metric = MAEMetric(name="error") if rank == world - 1 else MSEMetric(name="error")
    metric.update(torch.ones(3), torch.zeros(3))
    return _outcome(metric.compute)


def one_rank_of_three_dies(rank: int, world: int) -> tuple[str, str, float]:
    """The last rank dies before its sync: both survivors must raise, not just one."""
    return one_rank_dies(rank, world)


def one_rank_crashes_mid_sync(rank: int, world: int) -> tuple[str, str, float]:
    """The last rank passes the configuration check with the others, then dies inside the
    state sync, the next collective: every survivor must raise naming that collective."""
    from torchtally.metrics import _sync

    set_sync_timeout(5.0)
    metric = MSEMetric()
    metric.update(torch.ones(3), torch.zeros(3))
    if rank == world - 1:
        checked = _sync.all_reduce

        def crash_after_the_check(tensor: torch.Tensor, op: str, pg: Any, what: str) -> Any:
            if what.startswith("state sync"):
                os._exit(1)  # the fault injected: a crash between two collectives of one sync
            return checked(tensor, op, pg, what)

        _sync.all_reduce = crash_after_the_check  # type: ignore[assignment]
    start = time.monotonic()
    kind, message = _outcome(metric.compute)
    return (kind, message, time.monotonic() - start)
