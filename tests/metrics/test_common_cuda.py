"""The registry on CUDA: for every built-in metric, an evaluation loop of updates makes no host
sync (`torch.cuda.set_sync_debug_mode("error")` turns any into an exception), a CUDA graph of
its update replays to the state of eager updates, and its CUDA value is its CPU value.

CI has no GPU, so these are skipped there; on a GPU machine:
`python -m pytest tests/metrics/test_common_cuda.py`.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch
from cases import Args, Case
from test_common import ALL_CASES, CASES, _ids
from torch import Tensor

from torchtally.metrics import Metric

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

CUDA = torch.device("cuda")
BATCHES, ROWS = 4, 10  # 40 rows: within every `cat` case's capacity, as in test_common


def _to(args: Args, device: torch.device) -> Args:
    def move(x: Any) -> Any:
        return x.to(device) if isinstance(x, Tensor) else x

    positional, keyword = args
    return tuple(move(a) for a in positional), {k: move(v) for k, v in keyword.items()}


def _batches(case: Case) -> list[Args]:
    return [case.batch(torch.Generator().manual_seed(seed), ROWS) for seed in range(BATCHES)]


def _cpu(value: Any) -> Any:
    if isinstance(value, Tensor):
        return value.cpu()
    if isinstance(value, dict):
        return {k: _cpu(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(_cpu(v) for v in value)
    return value


def _assert_same_value(on_cuda: Any, on_cpu: Any, exact: bool) -> None:
    # Float32 sums reduce in another order on the GPU: equal to a few float32 ulps, not bits.
    tolerance = {"rtol": 1e-5, "atol": 1e-6} if exact else {"rtol": 1e-3, "atol": 1e-3}
    torch.testing.assert_close(_cpu(on_cuda), on_cpu, equal_nan=True, **tolerance)


def _update_all(metric: Metric, batches: list[Args]) -> None:
    for positional, keyword in batches:
        metric.update(*positional, **keyword)


@pytest.mark.parametrize("case", ALL_CASES, ids=_ids(ALL_CASES))
def test_an_eval_loop_on_cuda_makes_no_host_sync(case: Case) -> None:
    batches = _batches(case)
    on_cpu = case.make()
    _update_all(on_cpu, batches)
    metric = case.make().to(CUDA)
    cuda_batches = [_to(b, CUDA) for b in batches]
    # The first update outside the check: a metric may allocate scratch space lazily, which is
    # no sync; the loop after it must not read a single value back to the host.
    _update_all(metric, cuda_batches[:1])
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        _update_all(metric, cuda_batches[1:])
        metric.flush()  # any batches held back (coalesce_updates) are updated here
    finally:
        torch.cuda.set_sync_debug_mode("default")
    assert metric.num_updates == BATCHES
    _assert_same_value(metric.compute(), on_cpu.compute(), case.exact)


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_a_cuda_graph_of_update_replays_to_the_eager_state(case: Case) -> None:
    """Captured once, replayed per batch with the batch copied into the captured inputs: the
    state equals that of eager updates (the graph writes the same preallocated buffers)."""
    batches = [_to(b, CUDA) for b in _batches(case)]
    eager = case.make().to(CUDA)
    _update_all(eager, batches)

    graphed = case.make().to(CUDA)
    static_positional, static_keyword = (
        tuple(x.clone() if isinstance(x, Tensor) else x for x in batches[0][0]),
        {k: v.clone() if isinstance(v, Tensor) else v for k, v in batches[0][1].items()},
    )
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up off the capture stream, as torch.cuda.graph asks
        graphed.update(*static_positional, **static_keyword)
    torch.cuda.current_stream().wait_stream(side)
    graphed.reset()
    addresses = {name: b.data_ptr() for name, b in graphed.named_buffers()}
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        graphed.update(*static_positional, **static_keyword)
    for positional, keyword in batches:
        for static, x in zip(static_positional, positional):
            if isinstance(static, Tensor):
                static.copy_(x)
        for name, x in keyword.items():
            if isinstance(x, Tensor):
                static_keyword[name].copy_(x)
        graph.replay()
    torch.cuda.synchronize()
    assert {name: b.data_ptr() for name, b in graphed.named_buffers()} == addresses
    for (name, got), (_, want) in zip(graphed.named_buffers(), eager.named_buffers()):
        torch.testing.assert_close(got, want, equal_nan=True, msg=f"state {name}")
    _assert_same_value(graphed.compute(), _cpu(eager.compute()), case.exact)
