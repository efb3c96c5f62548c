"""Metrics written TorchMetrics' way: `add_state(name, default, dist_reduce_fx, persistent)`
in `__init__`, `update` and `compute` that read and rebind those states.

The compatible built-in metrics describe a batch as statistics and fold them into preallocated
states (`_base.Metric._batch` / `_value`). A subclass that writes its own `update` and
`compute` instead (a user's metric ported from TorchMetrics, `CompositionalMetric`) keeps its
states as TorchMetrics keeps them: plain attributes, a tensor or a list of tensors, rebound by
`update` as it likes (`self.total += x`, `self.rows.append(x)`, `self.x = torch.cat(...)`).
Nothing about their shapes is known ahead, so they cannot be preallocated torchtally states;
this module gives them TorchMetrics' semantics instead: the update count and compute cache,
`forward`'s batch value (`full_state_update`), `reset`, `merge_state`, and the sync of each
state by gathering it from every rank and reducing it with its `dist_reduce_fx`.

Such a metric's `update` runs eagerly as written: it is the user's code, which may read the
data on the host; the built-in metrics keep the no-host-sync guarantee.
"""

from __future__ import annotations

import copy
import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import Tensor

from torchtally.compat.torchmetrics._bookkeeping import tm_state
from torchtally.compat.torchmetrics.utilities.data import (
    _flatten,
    dim_zero_cat,
    dim_zero_max,
    dim_zero_mean,
    dim_zero_min,
    dim_zero_sum,
)
from torchtally.compat.torchmetrics.utilities.distributed import gather_all_tensors
from torchtally.compat.torchmetrics.utilities.exceptions import TorchMetricsUserError
from torchtally.compat.torchmetrics.utilities.prints import rank_zero_warn

__all__ = [
    "REDUCTIONS",
    "copy_states",
    "forward",
    "reduce_states",
    "reset",
    "sync_dist",
    "wrap_compute",
    "wrap_reset",
    "wrap_update",
]

#: `dist_reduce_fx` names and the functions they stand for (TorchMetrics' `dim_zero_*`).
REDUCTIONS: dict[str, Callable[..., Tensor]] = {
    "sum": dim_zero_sum,
    "mean": dim_zero_mean,
    "max": dim_zero_max,
    "min": dim_zero_min,
    "cat": dim_zero_cat,
}

#: Marks the wrappers below, so that a subclass's inherited method is not wrapped twice.
_WRAPPED = "_torchtally_tm_wrapped"


def _mark(wrapped: Callable[..., Any]) -> Callable[..., Any]:
    setattr(wrapped, _WRAPPED, True)
    return wrapped


def is_wrapped(method: Any) -> bool:
    return bool(getattr(method, _WRAPPED, False))


def wrap_update(update: Callable[..., Any]) -> Callable[..., Any]:
    """A user's `update`: counted, the cached value dropped, grad off unless `forward`'s batch
    value needs it, list states moved to the CPU with `compute_on_cpu`."""

    @functools.wraps(update)
    def wrapped(self: Any, *args: Any, **kwargs: Any) -> Any:
        tm = tm_state(self)
        tm.computed = None
        tm.update_count += 1
        with torch.set_grad_enabled(tm.enable_grad):
            try:
                result = update(self, *args, **kwargs)
            except RuntimeError as error:
                if "Expected all tensors to be on" in str(error):
                    raise RuntimeError(
                        "Encountered different devices in metric calculation (see stacktrace "
                        "for details). This could be due to the metric class not being on the "
                        f"same device as input. Instead of `metric={type(self).__name__}(...)` "
                        f"try to do `metric={type(self).__name__}(...).to(device)` where device "
                        "corresponds to the device of the input."
                    ) from error
                raise
        if self.compute_on_cpu:
            _move_list_states_to_cpu(self)
        return result

    return _mark(wrapped)


def wrap_compute(compute: Callable[..., Any]) -> Callable[..., Any]:
    """A user's `compute`: TorchMetrics' warning before any update, the cached value until the
    next update, and the states synced over the process group around it."""

    @functools.wraps(compute)
    def wrapped(self: Any, *args: Any, **kwargs: Any) -> Any:
        tm = tm_state(self)
        if not tm.update_count:
            rank_zero_warn(
                f"The ``compute`` method of metric {type(self).__name__} was called before the "
                "``update`` method which may lead to errors, as metric states have not yet been "
                "updated.",
                UserWarning,
            )
        if tm.computed is not None:
            return tm.computed
        with self.sync_context(
            dist_sync_fn=self.dist_sync_fn,
            should_sync=tm.to_sync,
            should_unsync=tm.should_unsync,
        ):
            value = _squeeze_if_scalar(compute(self, *args, **kwargs))
            value = _apply_to_tensors(value, lambda t: t.clone())
        if self.compute_with_cache:
            tm.computed = value
        return value

    return _mark(wrapped)


def wrap_reset(reset_method: Callable[..., Any]) -> Callable[..., Any]:
    """A user's `reset`: not run while the base class is still being built (torchtally's
    base calls `reset` from its constructor, before the subclass has set its attributes)."""

    @functools.wraps(reset_method)
    def wrapped(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not tm_state(self).ready:
            return None
        return reset_method(self, *args, **kwargs)

    return _mark(wrapped)


def update_signature(metric: Any) -> inspect.Signature:
    """The signature of the user's own `update` (the wrapped function's)."""
    update = type(metric).update
    return inspect.signature(getattr(update, "__wrapped__", update)).replace(
        parameters=list(
            inspect.signature(getattr(update, "__wrapped__", update)).parameters.values()
        )[1:]
    )


def _squeeze_if_scalar(value: Any) -> Any:
    if isinstance(value, Tensor) and value.numel() == 1:
        return value.squeeze()
    return value


def _apply_to_tensors(value: Any, fn: Callable[[Tensor], Tensor]) -> Any:
    if isinstance(value, Tensor):
        return fn(value)
    if isinstance(value, dict):
        return {k: _apply_to_tensors(v, fn) for k, v in value.items()}
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a named tuple
        return type(value)(*(_apply_to_tensors(v, fn) for v in value))
    if isinstance(value, (list, tuple)):
        return type(value)(_apply_to_tensors(v, fn) for v in value)
    return value


def _move_list_states_to_cpu(metric: Any) -> None:
    for name in tm_state(metric).defaults:
        value = getattr(metric, name)
        if isinstance(value, Sequence) and not isinstance(value, Tensor):
            setattr(metric, name, [v.to("cpu") for v in value])


def reset(metric: Any) -> None:
    """TorchMetrics' `reset`: every state back to a copy of its default (on the state's
    current device), list states emptied in place (freeing their tensors)."""
    tm = tm_state(metric)
    tm.update_count = 0
    tm.computed = None
    tm.cache = None
    tm.is_synced = False
    metric.set_batch_value(None)
    for name, default in tm.defaults.items():
        current = getattr(metric, name)
        if isinstance(default, Tensor):
            device = current.device if isinstance(current, Tensor) else default.device
            setattr(metric, name, default.detach().clone().to(device))
        else:
            current.clear()


def copy_states(metric: Any) -> dict[str, Any]:
    """A detached copy of every state (lists copied element by element)."""
    out: dict[str, Any] = {}
    for name in tm_state(metric).defaults:
        value = getattr(metric, name)
        if isinstance(value, Tensor):
            out[name] = value.detach().clone()
        else:
            out[name] = [
                v.detach().clone() if isinstance(v, Tensor) else copy.deepcopy(v) for v in value
            ]
    return out


def reduce_states(metric: Any, incoming: dict[str, Any]) -> None:
    """Fold another state of the same metric (`incoming`) into this one by each state's
    `dist_reduce_fx`, as TorchMetrics' `_reduce_states`."""
    tm = tm_state(metric)
    count = tm.update_count
    for name in tm.defaults:
        if name not in incoming:
            raise ValueError(
                f"Expected state variable {name} to be present in incoming state {incoming}"
            )
        local, other = getattr(metric, name), incoming[name]
        reduce_fn = tm.reductions[name]
        if reduce_fn is dim_zero_sum:
            reduced = other + local
        elif reduce_fn is dim_zero_mean:
            # a running mean over updates: the incoming one stands for all updates but this one
            reduced = ((count - 1) * other + local).float() / count
        elif reduce_fn is dim_zero_max:
            reduced = torch.max(other, local)
        elif reduce_fn is dim_zero_min:
            reduced = torch.min(other, local)
        elif reduce_fn is dim_zero_cat:
            reduced = torch.cat([other, local]) if isinstance(other, Tensor) else other + local
        elif reduce_fn is None and isinstance(other, Tensor):
            reduced = torch.stack([other, local])
        elif reduce_fn is None and isinstance(other, list):
            reduced = _flatten([other, local])
        elif callable(reduce_fn):
            reduced = reduce_fn(torch.stack([other, local]))
        else:
            raise TypeError(f"Unsupported reduce_fn: {reduce_fn}")
        setattr(metric, name, reduced)


def sync_dist(metric: Any, dist_sync_fn: Callable[..., Any], process_group: Any) -> None:
    """Replace every state by its value over the process group: gathered from every rank
    with `dist_sync_fn` (list states concatenated first), then reduced by `dist_reduce_fx`
    (None: the gathered values stacked, or the lists joined)."""
    group = process_group if process_group is not None else metric.process_group
    gathered: dict[str, Any] = {}
    for name, reduce_fn in tm_state(metric).reductions.items():
        value = getattr(metric, name)
        if isinstance(value, list) and reduce_fn is dim_zero_cat:
            # one collective per state: a rank with no rows sends an empty tensor
            value = (
                [dim_zero_cat(value)]
                if value
                else [torch.tensor([], device=metric.device, dtype=metric.dtype)]
            )
        if isinstance(value, Tensor):
            gathered[name] = dist_sync_fn(value, group=group)
        else:
            gathered[name] = [dist_sync_fn(v, group=group) for v in value]
    for name, reduce_fn in tm_state(metric).reductions.items():
        output = gathered[name]
        if isinstance(output, list) and len(output) == 0:
            setattr(metric, name, [])
            continue
        if isinstance(output[0], Tensor):
            output = torch.stack(output)
        elif isinstance(output[0], list):
            output = _flatten(output)
        if not (callable(reduce_fn) or reduce_fn is None):
            raise TypeError("reduction_fn must be callable or None")
        setattr(metric, name, reduce_fn(output) if reduce_fn is not None else output)


def default_sync_fn() -> Callable[..., Any]:
    return gather_all_tensors


def forward(metric: Any, *args: Any, **kwargs: Any) -> Any:
    """TorchMetrics' `forward` for a user's metric: the batch value from `update` and
    `compute` on the batch alone, the batch folded into the accumulated state.

    With `full_state_update` True or None (or `dist_sync_on_step`), `update` runs twice: once
    on the accumulated state, once on a reset state for the batch value, which is right for
    any `update`. Otherwise it runs once, on a reset state, and the accumulated state is
    folded back in by `dist_reduce_fx` (`_reduce_states`).
    """
    tm = tm_state(metric)
    if tm.is_synced:
        raise TorchMetricsUserError(
            "The Metric shouldn't be synced when performing ``forward``. HINT: Did you forget "
            "to call ``unsync`` ?."
        )
    full = metric.full_state_update or metric.full_state_update is None or metric.dist_sync_on_step
    compute_on_cpu = metric.compute_on_cpu
    if full:
        metric.update(*args, **kwargs)
        count = tm.update_count
        saved = copy_states(metric)
    else:
        saved = copy_states(metric)
        count = tm.update_count
    tm.to_sync = metric.dist_sync_on_step
    tm.should_unsync = False
    object.__setattr__(metric, "compute_on_cpu", False)
    try:
        metric.reset()
        tm.enable_grad = True  # the batch value may carry grad
        metric.update(*args, **kwargs)
        value = metric.compute()
    finally:
        tm.enable_grad = False
        tm.is_synced = False
        tm.should_unsync = True
        tm.to_sync = metric.sync_on_compute
        tm.computed = None
        object.__setattr__(metric, "compute_on_cpu", compute_on_cpu)
    if full:
        for name, saved_value in saved.items():
            setattr(metric, name, saved_value)
        tm.update_count = count
    else:
        tm.update_count = count + 1
        with torch.no_grad():
            reduce_states(metric, saved)
    if metric.compute_on_cpu:
        _move_list_states_to_cpu(metric)
    return value
