"""Count the aten ops a piece of eager code dispatches (issue 26): a proxy for the kernels it
launches on a GPU, measured without one.

Counted on the meta device: tensors there carry shapes and dtypes but no data, so every op
runs its shape logic only, and code that picks a CPU fast path by `device.type == "cpu"` (or
`is_cpu`) takes the branch a CUDA tensor takes.

The rule (what `OpCounter.ops` holds):

- Every aten op that reaches the dispatcher below autograd counts once: compute, in-place
  writes, fills, copies, `_to_copy` and allocations that fill (`zeros`, `full`, `ones_like`).
  Composite ops (`reshape`, `to`, `matmul`, ...) are seen as the ops they decompose into.
- Views are not counted (`VIEW`): ops whose schema returns an alias of an input without
  writing it (`view`, `expand`, `as_strided`, `slice`, `select`, `unsqueeze`, `t`, `permute`,
  `detach`, `alias`, `lift_fresh`, `split`, `unbind`, ...), plus `_unsafe_view`, which
  re-labels a fresh tensor's shape, and the in-place metadata changes (`detach_`,
  `unsqueeze_`, `set_`, ...). They change metadata on the host and launch nothing.
- Bare allocations are not counted either (`ALLOCATION`: `empty`, `empty_like`,
  `empty_strided`, `new_empty`, `new_empty_strided`, `resize_`): the caching allocator serves
  them without a kernel; nor are metadata queries (`size`, `stride`, ...), which TorchScript
  functions dispatch as ops.
- Syncs are listed apart (`OpCounter.syncs`): an op that must read device data on the host.
  `_local_scalar_dense` (`item()`, `bool()`, `float()` of a tensor), `is_nonzero` (`bool()`
  as the CPU dispatches it) and a copy to the CPU (`tolist()`, `.cpu()`) are syncs only. Ops whose output shape depends on the data
  (`nonzero`, boolean-mask indexing, `masked_select`, `unique`, `bincount`, a
  `repeat_interleave` of a tensor without `output_size`) and `equal` are a kernel and a sync,
  so they are in both lists.

torchtally skips its host reads (error counts, `cat` overflow, a Python-float result) for a
meta tensor, which has no data; on a GPU each is a sync. `count_metric` therefore counts with
`meta_reads_as_device_reads()` on: meta tensors then pass for device tensors, and the reads
happen (and are answered as below).

On the meta device a sync cannot run (there is no data). `sync_on_meta="raise"` stops the
count with `SyncOnMeta` (the caller then counts on the CPU instead, where syncs run and are
recorded); `"zero"` answers a scalar read with 0 / 0.0 / False and a copy to the CPU with
zeros, so code whose value does not depend on what it read (torchtally's `compute` checks its
error counts on the host, then computes traceable tensor code) runs to the end and is counted.
A data-dependent shape still raises under `"zero"`: no made-up shape would be the right one.
"""

from __future__ import annotations

import contextlib
import types
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

import torch
from torch import Tensor
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves, tree_map

from torchtally.metrics import Metric

__all__ = [
    "ALLOCATION",
    "SCATTER",
    "SYNC_ONLY",
    "SYNC_WITH_KERNEL",
    "VIEW",
    "MetricCount",
    "OpCounter",
    "SyncOnMeta",
    "budget_entry",
    "count_metric",
    "count_ops",
    "meta_reads_as_device_reads",
    "op_name",
    "without_value_checks",
]

aten = torch.ops.aten

#: Ops counted as views besides those whose schema says so: a fresh tensor's shape re-labelled,
#: and in-place changes of metadata only.
VIEW = frozenset(
    {
        "_unsafe_view",
        "detach_",
        "squeeze_",
        "unsqueeze_",
        "t_",
        "transpose_",
        "swapdims_",
        "as_strided_",
        "set_",
    }
)
#: Allocations that launch no kernel, and queries of a tensor's metadata (TorchScript
#: functions dispatch `x.size(0)` as `aten.size`).
ALLOCATION = frozenset(
    {
        "empty",
        "empty_like",
        "empty_strided",
        "new_empty",
        "new_empty_strided",
        "resize_",
        "size",
        "stride",
        "numel",
        "dim",
        "sym_size",
        "sym_stride",
        "sym_numel",
        "sym_storage_offset",
        "storage_offset",
        "is_contiguous",
        "is_same_size",
    }
)
#: Reads of device data on the host that launch no compute kernel (`is_nonzero` is
#: `bool(tensor)`, dispatched whole on the CPU).
SYNC_ONLY = frozenset({"_local_scalar_dense", "is_nonzero"})
#: In-place ops that write some rows of their first operand: its size is not their traffic.
SCATTER = frozenset(
    {
        "index_copy_",
        "index_add_",
        "index_put_",
        "_index_put_impl_",
        "index_fill_",
        "scatter_",
        "scatter_add_",
        "scatter_reduce_",
    }
)
#: Kernels whose output shape depends on the data (the host waits to size it) or whose result
#: is a host bool.
SYNC_WITH_KERNEL = frozenset(
    {
        "nonzero",
        "masked_select",
        "bincount",
        "_unique",
        "_unique2",
        "unique_dim",
        "unique_consecutive",
        "unique_dim_consecutive",
        "equal",
    }
)


class SyncOnMeta(RuntimeError):
    """A sync on the meta device, where there is no data to read.

    Attributes:
        counter: What was counted up to it (set by `count_ops`).
    """

    counter: OpCounter | None = None


def op_name(func: Any) -> str:
    """`aten.add_.Tensor` -> `add_` (the overload dropped: it does not change the kernels)."""
    return str(func.overloadpacket.__name__)


def _is_view(func: Any) -> bool:
    return bool(func.is_view) or op_name(func) in VIEW


def _devices(tree: Any) -> set[str]:
    return {t.device.type for t in tree_leaves(tree) if isinstance(t, Tensor)}


def _sync_kind(func: Any, args: Any, kwargs: Any) -> Literal["", "only", "kernel"]:
    name = op_name(func)
    if name in SYNC_ONLY:
        return "only"
    if name in SYNC_WITH_KERNEL:
        return "kernel"
    if name == "repeat_interleave" and kwargs.get("output_size") is None:
        return "kernel" if isinstance(args[0], Tensor) and args[0].dtype != torch.bool else ""
    if name in ("index", "index_put", "index_put_", "_index_put_impl_"):
        indices = args[1] if len(args) > 1 else kwargs.get("indices", ())
        if any(isinstance(i, Tensor) and i.dtype in (torch.bool, torch.uint8) for i in indices):
            return "kernel"  # a boolean mask is turned into indices by `nonzero`
    if name in ("_to_copy", "copy_"):
        # A copy from a device to the CPU: `copy_(dst, src)` or `_to_copy(src, device=cpu)`.
        if name == "copy_":
            source, target = _devices(args[1]), _devices(args[0])
        else:
            source = _devices(args[0])
            device = kwargs.get("device")
            target = {torch.device(device).type} if device is not None else source
        if "cpu" in target and source - {"cpu"}:
            return "only"
    return ""


def _zero_result(func: Any, args: Any, kwargs: Any) -> Any:
    name = op_name(func)
    if name == "_local_scalar_dense":
        dtype = args[0].dtype
        return False if dtype == torch.bool else 0.0 if dtype.is_floating_point else 0
    source = args[0]
    if name == "copy_":
        return args[0].zero_() if args[0].device.type == "cpu" else args[0]
    return torch.zeros(source.shape, dtype=kwargs.get("dtype") or source.dtype, device="cpu")


class OpCounter(TorchDispatchMode):
    """Records the ops dispatched while active, by the rule of this module's docstring.

    Attributes:
        ops: Names of the counted ops (kernels), in dispatch order.
        syncs: Names of the ops that make the host wait for the device, in order.
        views: Names of the views and bare allocations seen, which are not counted.
        elements: Elements of the tensors the counted ops read and write (inputs plus
            outputs, an in-place operand twice, the target of a scatter such as
            `index_copy_` not at all): a rough measure of their memory traffic.
    """

    #: It only watches: torchtally runs its plain eager path under it (e.g. the update count
    #: kept on the host), as it does on a GPU, instead of the path for a tracing mode.
    torchtally_observer = True

    def __init__(self, sync_on_meta: Literal["raise", "zero"] = "raise") -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        if sync_on_meta not in ("raise", "zero"):
            raise ValueError(
                "Argument `sync_on_meta` must be 'raise' or 'zero'. "
                f"Received: sync_on_meta={sync_on_meta!r}"
            )
        self.sync_on_meta = sync_on_meta
        self.ops: list[str] = []
        self.syncs: list[str] = []
        self.views: list[str] = []
        self.elements = 0

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        name = op_name(func)
        if _is_view(func) or name in ALLOCATION:
            self.views.append(name)
            return func(*args, **kwargs)
        sync = _sync_kind(func, args, kwargs)
        if sync:
            self.syncs.append(name)
        if sync != "only":
            self.ops.append(name)
        if sync and "meta" in _devices((args, kwargs)):
            if self.sync_on_meta == "zero" and sync == "only":
                return _zero_result(func, args, kwargs)
            raise SyncOnMeta(f"aten.{name} reads device data on the host (a sync)")
        out = func(*args, **kwargs)
        if sync != "only":
            touched = (args[1:], kwargs) if name in SCATTER else (args, kwargs, out)
            self.elements += sum(t.numel() for t in tree_leaves(touched) if isinstance(t, Tensor))
        return out

    @property
    def histogram(self) -> Counter[str]:
        """Counted ops by name."""
        return Counter(self.ops)


def count_ops(
    fn: Callable[[], object], sync_on_meta: Literal["raise", "zero"] = "raise"
) -> OpCounter:
    """Run `fn()` once under an `OpCounter` and return it.

    Example:
        >>> x = torch.zeros(3, device="meta")
        >>> counted = count_ops(lambda: (x.add_(1), x[:2].sum()))
        >>> counted.ops, counted.views
        (['add_', 'sum'], ['slice'])
    """
    counter = OpCounter(sync_on_meta)
    try:
        with counter:
            fn()
    except SyncOnMeta as error:
        error.counter = counter
        raise
    return counter


_UNPATCHED = "_op_count_unpatched_tracing"


def _tracing_but_meta(*tensors: Tensor) -> bool:
    # Runs as torchtally._errors.tracing's code: its names resolve in that module's globals.
    return _op_count_unpatched_tracing(*[t for t in tensors if not t.is_meta])  # type: ignore[name-defined]  # noqa: F821


@contextlib.contextmanager
def meta_reads_as_device_reads() -> Iterator[None]:
    """Within it, torchtally treats meta tensors as device tensors: the host reads it skips
    for meta tensors (`torchtally._errors.tracing` says True for them) run, as on a GPU.

    The code of `tracing` is swapped in place, so every module that imported it by name sees
    the change; a copy of the original answers for the other tensors."""
    from torchtally import _errors

    function = _errors.tracing
    original = function.__code__
    namespace = function.__globals__
    namespace[_UNPATCHED] = types.FunctionType(original, namespace, "tracing")
    function.__code__ = _tracing_but_meta.__code__
    try:
        yield
    finally:
        function.__code__ = original
        del namespace[_UNPATCHED]


@dataclass
class MetricCount:
    """The ops of one steady-state `update` and of the `compute` after it."""

    update: OpCounter
    compute: OpCounter
    device: str


def _move(tree: Any, device: torch.device) -> Any:
    return tree_map(lambda x: x.to(device) if isinstance(x, Tensor) else x, tree)


def without_value_checks(metric: Metric) -> Metric:
    """Turn `check_values` off on the metric and on every metric inside it (wrappers)."""
    for module in metric.modules():
        if isinstance(module, Metric):
            module.check_values = False
    return metric


def count_metric(
    metric: Metric,
    args: tuple[Any, ...],
    kwargs: dict[str, Any] | None = None,
    *,
    device: str = "meta",
    warmup: int = 3,
    sync_on_meta: Literal["raise", "zero"] = "zero",
) -> MetricCount:
    """Count one steady-state `metric.update(*args, **kwargs)` and the `compute()` after it.

    The metric and the inputs move to `device` (meta by default: the branches a GPU takes);
    `warmup` updates run uncounted first, so set-up done on first use (scratch space, cached
    views, compiled kernels) is not counted; then one update (on the CPU with `flush()`,
    which applies any batch held back) and one `compute()` are counted.
    """
    target = torch.device(device)
    metric = metric.to(target)
    positional, keyword = _move((args, kwargs or {}), target)

    def update() -> None:
        metric.update(*positional, **keyword)
        if target.type == "cpu":
            # A batch held back (CPU only) is paid in the update that made it. Not elsewhere:
            # `flush` also adds the update count kept on the host, once per read, and the
            # compute counted next pays that.
            metric.flush()

    with meta_reads_as_device_reads():
        for _ in range(warmup):
            update()
        counted_update = count_ops(update, sync_on_meta)
        counted_compute = count_ops(metric.compute, sync_on_meta)
    return MetricCount(counted_update, counted_compute, device)


def budget_entry(
    make: Callable[[], Metric], args: tuple[Any, ...], kwargs: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The counts the op budget keeps for one metric configuration: a steady-state update
    with value checks on and off, and the compute after it, each with its ops by name."""
    checked = count_metric(make(), args, kwargs)
    unchecked = count_metric(without_value_checks(make()), args, kwargs)
    return {
        "update": len(checked.update.ops),
        "update_unchecked": len(unchecked.update.ops),
        "compute": len(checked.compute.ops),
        "update_syncs": len(checked.update.syncs) + len(unchecked.update.syncs),
        "compute_syncs": len(checked.compute.syncs),
        "update_ops": dict(sorted(checked.update.histogram.items())),
        "update_unchecked_ops": dict(sorted(unchecked.update.histogram.items())),
        "compute_ops": dict(sorted(checked.compute.histogram.items())),
    }
