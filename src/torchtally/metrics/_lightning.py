"""Lightning's `LightningModule.log(name, metric)` for torchtally metrics.

Lightning logs a `torchmetrics.Metric` object by reading, at every `self.log` call, the value of
the module's last `metric(preds, target)` call (`_forward_cache`: logged for `on_step=True`),
calling `compute()` at the epoch's end (`on_epoch=True`) and `reset()` after it; it moves the
metric to its own `device` and leaves the syncing to the metric. torchtally metrics provide each
of these (`LightningHooks`, a base of `Metric`), so `register` makes them virtual subclasses of
`torchmetrics.Metric`, which is all Lightning checks. It runs by itself (`activate_if_loaded`)
when a metric is built or moved (Lightning moves the model at the start of `fit`, in every
process it starts) in a process that has imported Lightning: the user imports nothing.

What is logged, for native and compat metrics alike:

* on step, the value of the batch alone, as TorchMetrics' `forward` returns it. A compat
  metric's `forward` returns it; a native metric's `forward` returns the running value (the
  cstorch contract), so the batch value is computed on first read from the batch that
  `forward` kept (one more update and compute, on a spare copy of the metric). Like
  TorchMetrics', it is the rank's own value, not synced. Nothing is logged on step for a metric
  updated with `update` alone.
* on epoch, `compute()`: synced across ranks by the metric itself under torch.distributed
  (whatever `sync_dist` says: Lightning applies it to tensors only, as for TorchMetrics').

Under `DistributedDataParallel` (Lightning's `ddp`, `ddp_spawn` strategies) the metric states,
which are buffers, are kept out of DDP's broadcast of buffers from rank 0 (see
`_keep_states_out_of_ddp`): each rank keeps its own until the sync in `compute()`.

Lightning and torchmetrics are imported only when Lightning is already loaded.
"""

from __future__ import annotations

import copy
import sys
from typing import Any, cast

import torch
from torch import Tensor

from torchtally.metrics._runtime import runtime_of

__all__ = ["LightningHooks", "activate_if_loaded", "register"]

#: Module names whose presence in `sys.modules` means Lightning is loaded (the unified package
#: and the standalone one).
_LIGHTNING_MODULES = ("lightning.pytorch", "pytorch_lightning")

#: The attribute `torch.nn.parallel.DistributedDataParallel` reads on the module it wraps: the
#: names of the parameters and buffers it leaves alone.
_DDP_IGNORE = "_ddp_params_and_buffers_to_ignore"
#: The Lightning packages whose `LightningModule` `register` has seen.
_registered: set[str] = set()


class LightningHooks:
    """What Lightning's `LightningModule.log(name, metric)` reads of a metric besides
    `compute`, `reset` and `to`: a base of `Metric`, so that every metric has them."""

    #: Whether `forward` keeps its inputs so that `_forward_cache` can give the batch's value
    #: alone (switched on for every metric when Lightning is loaded).
    _keep_forward_inputs: bool = False

    @property
    def device(self) -> torch.device:
        """The device the states live on."""
        return cast(Tensor, dict.__getitem__(self._buffers, "_num_updates")).device  # type: ignore[attr-defined]

    @property
    def _forward_cache(self) -> Any:
        """The value of the last `forward` call's batch alone (TorchMetrics' forward value,
        which Lightning logs on step), or None when `forward` was not called since the last
        reset. Computed on first read from the kept inputs, which it then lets go."""
        runtime = runtime_of(self)
        if runtime.forward_value is None and runtime.forward_inputs is not None:
            runtime.forward_value = _batch_value(self)
            runtime.forward_inputs = None
        return runtime.forward_value

    def set_batch_value(self, value: Any) -> None:
        """Record the value of the last `forward` call's batch alone, for a metric whose
        `forward` computes it (TorchMetrics' contract): Lightning logs it on step."""
        runtime_of(self).forward_value = value

    def _keep_batch(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """`forward` ran on this batch: keep it for its value alone (when Lightning is loaded)."""
        if self._keep_forward_inputs:
            runtime = runtime_of(self)
            runtime.forward_inputs, runtime.forward_value = (args, kwargs), None

    def _not_torchmetrics(self, *args: Any, **kwargs: Any) -> Any:
        # Once Lightning is loaded, a metric is a `torchmetrics.Metric` to `isinstance` (all
        # Lightning checks), so TorchMetrics' own containers accept it and then reach for their
        # internals: these two are the first they call.
        raise TypeError(
            f"{type(self).__name__} is a torchtally metric, not a TorchMetrics one: TorchMetrics' "
            "MetricCollection, Running and metric arithmetic cannot hold it. Use torchtally's "
            "(torchtally.compat.torchmetrics.MetricCollection and .wrappers, or "
            "torchtally.metrics.MetricCollection)."
        )

    _filter_kwargs = _not_torchmetrics
    _reduce_states = _not_torchmetrics

    @property
    def _defaults(self) -> Any:  # TorchMetrics' `Running` reads it first
        return self._not_torchmetrics()


def activate_if_loaded(metric_class: type) -> None:
    """`register` when a Lightning package is imported that `register` has not seen yet."""
    for name in _LIGHTNING_MODULES:
        if name not in _registered and name in sys.modules:
            register(metric_class)
            return


def register(metric_class: type) -> None:
    """Let `LightningModule.log` take torchtally metrics (idempotent).

    Registers `torchtally.metrics.Metric` (so every native and compat metric) as a virtual
    subclass of `torchmetrics.Metric`, has `forward` keep its batch for the step value, and
    keeps metric states out of DDP's buffer broadcast in every `LightningModule` of the
    Lightning packages imported.

    Raises:
        ModuleNotFoundError: torchmetrics (which Lightning requires) is not installed.
    """
    import torchmetrics

    if not issubclass(metric_class, torchmetrics.Metric):
        torchmetrics.Metric.register(metric_class)
    LightningHooks._keep_forward_inputs = True
    for name in _LIGHTNING_MODULES:
        module_class = getattr(sys.modules.get(name), "LightningModule", None)
        if module_class is not None:
            _keep_states_out_of_ddp(module_class)
            _registered.add(name)


def _keep_states_out_of_ddp(module_class: type[torch.nn.Module]) -> None:
    """Give `module_class` a `_ddp_params_and_buffers_to_ignore` that adds the metric states.

    DDP broadcasts every buffer of the module it wraps from rank 0 before each training
    forward (`broadcast_buffers=True`, Lightning's default): metric states, which are buffers,
    would each step be replaced by rank 0's, and the epoch value would count rank 0's batches
    once per rank. DDP leaves alone the names this attribute lists, read once when it wraps
    the module, so states added later (a metric assigned after `Trainer.fit` began) are not
    covered. What the user sets (`DistributedDataParallel._set_params_and_buffers_to_ignore_for_model`
    or the attribute itself) is kept and extended.
    """
    if isinstance(module_class.__dict__.get(_DDP_IGNORE), property):
        return

    def get(self: torch.nn.Module) -> list[str]:
        own = self.__dict__.get(_DDP_IGNORE, ())
        return [*own, *(n for n in _ddp_ignored_names(self) if n not in own)]

    def set_(self: torch.nn.Module, names: Any) -> None:
        self.__dict__[_DDP_IGNORE] = list(names)

    setattr(module_class, _DDP_IGNORE, property(get, set_))


def _ddp_ignored_names(module: torch.nn.Module) -> list[str]:
    """The qualified names of every metric state (buffer) under `module`, at every path."""
    names: list[str] = []
    for prefix, child in module.named_modules(remove_duplicate=False):
        if isinstance(child, LightningHooks):
            buffers = child._buffers  # type: ignore[attr-defined]
            names.extend(f"{prefix}.{name}" if prefix else name for name in buffers)
    return names


def _batch_value(metric: Any) -> Any:
    """The value of the batch `metric.forward` kept, alone: a spare copy of the metric (built
    once, states reset, never synced) is updated with it and computed. A Python number (cstorch's
    float results) comes back as a 0-d tensor, which Lightning requires."""
    runtime = runtime_of(metric)
    args, kwargs = runtime.forward_inputs
    twin = runtime.forward_twin
    if twin is None or twin.device != metric.device:
        # Normal tensors even when first read under inference mode (Lightning's validation):
        # an inference tensor state could not be updated in a training step later.
        with torch.inference_mode(False):
            twin = copy.deepcopy(metric)  # a copy leaves the kept batch and any twin out
        twin.sync_on_compute = False
        twin.compile_update(False)
        twin.coalesce_updates(False)
        runtime.forward_twin = twin
    twin.reset()
    with torch.no_grad():
        twin.update(*args, **kwargs)
        value = twin.compute()
    if isinstance(value, int | float):
        return torch.tensor(value, dtype=torch.get_default_dtype(), device=metric.device)
    return value
