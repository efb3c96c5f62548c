"""Checks for users' own metrics: is `update` (and `compute`) free of host syncs and traceable?

`torch.compile(fullgraph=True)` alone is no proof: in torch 2.13 it admits `.item()` and
`bincount` by turning their results into data-dependent ("unbacked") symbols. So
`assert_traceable` runs the metric under plain `FakeTensorMode`, where every op that must read
data raises, and inspects the compiled graph for unbacked symbols. Neither sees a copy of host
data to the device (`torch.tensor(x, device=...)`), which on a GPU synchronizes and cannot be
captured in a CUDA graph: `assert_no_host_copies` looks for those, without a GPU.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
import torch._dynamo as dynamo
import torch._dynamo.testing
from torch import Tensor, nn
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.symbolic_shapes import free_unbacked_symbols
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves, tree_map

from torchtally.metrics import Metric

__all__ = ["TraceReport", "assert_no_host_copies", "assert_traceable"]


@dataclass
class TraceReport:
    """What `assert_traceable` observed (returned when every check passed)."""

    graphs: int
    recompiles: int
    calls: int
    unbacked: list[str] = field(default_factory=list)


class _GraphRecorder:
    """A dynamo backend that records each graph's unbacked symbols, then runs it with
    `inner` (a backend name or callable)."""

    def __init__(self, inner: str | Callable[..., Any]) -> None:
        self.inner = dynamo.lookup_backend(inner) if isinstance(inner, str) else inner
        self.graphs = 0
        self.unbacked: list[str] = []

    def __call__(self, gm: torch.fx.GraphModule, example_inputs: list[Tensor]) -> Any:
        self.graphs += 1
        for node in gm.graph.nodes:
            value = node.meta.get("example_value")
            if value is not None and free_unbacked_symbols(value):
                self.unbacked.append(f"{node.op} {node.target}")
        return self.inner(gm, example_inputs)


def _fake_copy(module: nn.Module, mode: FakeTensorMode) -> nn.Module:
    clone = copy.deepcopy(module)
    for sub in clone.modules():
        for name, buffer in list(sub._buffers.items()):
            if buffer is not None:
                sub._buffers[name] = mode.from_tensor(buffer)
    return clone


def _check_fake(
    metric: Metric, args: tuple[Any, ...], kwargs: dict[str, Any], with_compute: bool
) -> None:
    mode = FakeTensorMode()
    fake_metric: Metric = _fake_copy(metric, mode)  # type: ignore[assignment]
    fake_args, fake_kwargs = tree_map(
        lambda x: mode.from_tensor(x) if isinstance(x, Tensor) else x, (args, kwargs)
    )
    stages: list[tuple[str, Callable[[], Any]]] = [
        ("update", lambda: fake_metric.update(*fake_args, **fake_kwargs))
    ]
    if with_compute:
        stages.append(("compute", fake_metric.compute))
    with mode:
        for stage, run in stages:
            try:
                run()
            except Exception as error:
                raise AssertionError(
                    f"`{type(metric).__name__}.{stage}` reads tensor data (a host sync or a "
                    f"data-dependent shape) under FakeTensorMode: {type(error).__name__}: {error}"
                ) from error


def _trampoline(method: Callable[..., Any]) -> Callable[..., Any]:
    """A caller of `method` with a code object of its own, hence a dynamo cache of its own: the
    check then sees exactly the compilations it caused."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return method(*args, **kwargs)

    call.__code__ = call.__code__.replace()
    return call


def _assert_same(expected: Any, actual: Any, what: str) -> None:
    try:
        torch.testing.assert_close(actual, expected, equal_nan=True, rtol=1e-6, atol=1e-9)
    except AssertionError as error:
        raise AssertionError(f"compiled and eager {what} differ: {error}") from error


#: Tensor constructors that copy host data (a number, a list, a CPU tensor) to their device.
_FROM_HOST_DATA = {
    torch.tensor: "torch.tensor()",
    torch.as_tensor: "torch.as_tensor()",
    Tensor.new_tensor: "Tensor.new_tensor()",
}
_COPIES = {torch.ops.aten._to_copy.default, torch.ops.aten.copy_.default}


class _MadeFromHostData(TorchFunctionMode):
    """Records each tensor made off the CPU from host data (`torch.tensor`, `torch.as_tensor`,
    `Tensor.new_tensor`)."""

    def __init__(self, seen: list[str]) -> None:
        super().__init__()
        self.seen = seen

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        made = func(*args, **kwargs)
        if func in _FROM_HOST_DATA and isinstance(made, Tensor) and not made.is_cpu:
            data = args[1] if func is Tensor.new_tensor else args[0] if args else kwargs["data"]
            if not (isinstance(data, Tensor) and data.device == made.device):
                self.seen.append(f"{_FROM_HOST_DATA[func]} of host data")
        return made


class _CopiedFromTheCpu(TorchDispatchMode):
    """Records each copy of a CPU tensor into a tensor on another device."""

    def __init__(self, seen: list[str]) -> None:
        super().__init__()  # type: ignore[no-untyped-call]  # untyped in torch
        self.seen = seen

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        out = func(*args, **(kwargs or {}))
        if func in _COPIES:
            sources = [a for a in tree_leaves(args) if isinstance(a, Tensor)]
            targets = [o for o in tree_leaves(out) if isinstance(o, Tensor)]
            if any(s.is_cpu for s in sources) and any(not t.is_cpu for t in targets):
                self.seen.append(f"a CPU tensor copied over (aten.{func.__name__})")
        return out


def assert_no_host_copies(metric: Metric, *args: Any, **kwargs: Any) -> None:
    """Assert that `metric.update(*args, **kwargs)` copies no host data to the metric's device.

    On a GPU a tensor made from host data (`torch.tensor(x, device=...)`, `t.new_tensor(x)`,
    `torch.as_tensor([...], device=...)`) or a CPU tensor moved over is a copy that
    synchronizes with the host, and a CUDA graph cannot capture it. This is checked without a
    GPU: copies of the metric and of the inputs go to the meta device, one update runs
    unchecked (set-up on first use may move constants once), and two more are recorded. A fill
    (`torch.full`, `Tensor.new_full`) passes its number as a kernel argument and is no copy.
    `assert_traceable` runs this check too.

    Args:
        metric: The metric to check (left untouched).
        *args: Example positional inputs to `update`.
        **kwargs: Example keyword inputs to `update`.

    Example:
        >>> from torchtally.metrics import MeanMetric
        >>> assert_no_host_copies(MeanMetric(), torch.tensor([1.0, 2.0]), weight=2)
    """
    if not isinstance(metric, Metric):
        raise TypeError(
            f"Argument `metric` must be a torchtally Metric. Received: {type(metric).__name__}"
        )
    meta = torch.device("meta")
    on_meta = copy.deepcopy(metric).to(meta)
    moved = tree_map(lambda x: x.to(meta) if isinstance(x, Tensor) else x, (args, kwargs))
    on_meta.update(*moved[0], **moved[1])
    seen: list[str] = []
    with _MadeFromHostData(seen), _CopiedFromTheCpu(seen):
        for _ in range(2):
            on_meta.update(*moved[0], **moved[1])
        on_meta.flush()
    if seen:
        raise AssertionError(
            f"`{type(metric).__name__}.update` copies host data to the device: "
            f"{', '.join(dict.fromkeys(seen))}. On a GPU each copy synchronizes with the host "
            "and cannot be captured in a CUDA graph: fill numbers in on the device "
            "(torch.full, Tensor.new_full) and keep constants as state."
        )


def assert_traceable(
    metric: Metric,
    *args: Any,
    calls: int = 3,
    backend: str | Callable[..., Any] = "aot_eager",
    check_compute: bool = True,
    **kwargs: Any,
) -> TraceReport:
    """Assert that `metric.update(*args, **kwargs)` is sync-free and compiles to one graph.

    Checks, on copies of `metric` (the metric itself is left untouched):

    1. `update` then `compute` run under plain `FakeTensorMode`, where `.item()`,
       `bool(tensor)`, `nonzero`, `bincount`, `unique` and boolean-mask indexing raise.
    2. `torch.compile(update, fullgraph=True)` gives one graph, with no unbacked symbols, and
       no recompile over `calls` same-shape calls.
    3. The compiled metric's state and `compute()` equal an eager copy's after `calls` calls.
    4. `update` copies no host data to the device (`assert_no_host_copies`).

    Args:
        metric: The metric to check.
        *args: Example positional inputs to `update`.
        calls: How many times to call the compiled update.
        backend: The backend that runs the captured graph ("aot_eager" functionalizes the
            graph, as every real backend does; "inductor" also generates kernels).
        check_compute: Also run `compute` under FakeTensorMode (turn off for a metric whose
            compute is documented to read data).
        **kwargs: Example keyword inputs to `update`.

    Returns:
        A `TraceReport` of the compiled run.

    Example:
        >>> from torchtally.metrics import AccuracyMetric
        >>> report = assert_traceable(AccuracyMetric(), torch.tensor([0, 1]), torch.tensor([1, 1]))
        >>> report.graphs
        1
    """
    if not isinstance(metric, Metric):
        raise TypeError(
            f"Argument `metric` must be a torchtally Metric. Received: {type(metric).__name__}"
        )
    _check_fake(metric, args, kwargs, with_compute=check_compute)
    assert_no_host_copies(metric, *args, **kwargs)

    eager, compiled_metric = copy.deepcopy(metric), copy.deepcopy(metric)
    eager.compile_update(False)  # the reference runs eagerly, whatever `metric` was set to
    recorder = _GraphRecorder(backend)
    compiled_update = torch.compile(
        _trampoline(compiled_metric.update), backend=recorder, fullgraph=True, dynamic=False
    )
    dynamo.utils.counters.clear()
    eager.update(*args, **kwargs)
    compiled_update(*args, **kwargs)
    first_compiles = recorder.graphs
    for _ in range(calls - 1):
        eager.update(*args, **kwargs)
        compiled_update(*args, **kwargs)
    graphs = int(dynamo.utils.counters["stats"]["unique_graphs"])
    report = TraceReport(graphs, recorder.graphs - first_compiles, calls, recorder.unbacked)
    if report.unbacked:
        raise AssertionError(
            f"`{type(metric).__name__}.update` produces data-dependent symbols (a hidden host "
            f"sync or data-dependent shape) at: {', '.join(report.unbacked)}"
        )
    if report.graphs != 1 or report.recompiles:
        raise AssertionError(
            f"`{type(metric).__name__}.update` compiled to {report.graphs} graphs and recompiled "
            f"{report.recompiles} times over {calls} same-shape calls; expected one graph and no "
            "recompile (a recompile means Python state changes per call)"
        )
    for (name, want), (_, got) in zip(eager.named_buffers(), compiled_metric.named_buffers()):
        _assert_same(want, got, f"state `{name}`")
    _assert_same(eager.compute(), compiled_metric.compute(), "compute() results")
    return report
