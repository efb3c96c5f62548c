"""The bookkeeping a compatible metric keeps for TorchMetrics' API, in one object per metric.

TorchMetrics keeps its bookkeeping in plain instance attributes (`_update_count`, `_computed`,
`_cache`, `_to_sync`, ...), and its tests and the code written for it read and write those
names. A compatible metric's `__setattr__` is no plain one (torchtally's base takes a change
of a public attribute for a change of setting: the cached value and held batches dropped, a
collection member unshared; `nn.Module`'s registers tensors and modules; `_base.Metric`'s
refuses TorchMetrics' constants), so that bookkeeping is not kept in attributes of the metric:
it lives here, in one typed object attached once at construction, and TorchMetrics' names are
properties of the metric that read and write its fields (`_base.Metric`, the wrappers).
Keeping it in one object, instead of keys scattered over the metric's `__dict__`, declares
every field in one place.

A copy or a pickle of a metric copies its bookkeeping with it, caches included, as it copied
these attributes when they were the metric's own: the compute cache and the local states saved
by `sync` are values, not views of the metric's registered tensors.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

__all__ = ["TorchMetricsState", "attach", "tm_state"]


class TorchMetricsState:
    """The TorchMetrics bookkeeping of one compatible metric (see the module docstring).

    The fields of a metric written TorchMetrics' way (`add_state`, see `_user`) are unused by a
    built-in one (which keeps its count, cache and sync in torchtally's state), and the
    wrappers' fields by every other metric.
    """

    __slots__ = (
        "cache",
        "computed",
        "defaults",
        "dtype",
        "enable_grad",
        "from_collection",
        "is_synced",
        "num_vals_seen",
        "persistent",
        "ready",
        "reductions",
        "should_unsync",
        "to_sync",
        "transform_pred",
        "transform_target",
        "update_count",
        "window_slots",
    )

    def __init__(self, sync_on_compute: bool) -> None:
        #: Whether the compatible base's constructor has finished: until then `reset` (which
        #: torchtally's base calls while it builds the metric) does nothing.
        self.ready = False
        #: The metric's floating dtype (TorchMetrics' `_dtype`): the default dtype at
        #: construction, or `set_dtype`'s.
        self.dtype: torch.dtype = torch.get_default_dtype()
        # ------------------------------------- a metric written TorchMetrics' way (`_user`)
        #: `add_state`'s states: the value `reset` restores, whether `state_dict()` holds it,
        #: its `dist_reduce_fx` (a `dim_zero_*` function, a callable or None).
        self.defaults: dict[str, Any] = {}
        self.persistent: dict[str, bool] = {}
        self.reductions: dict[str, Callable[..., Any] | None] = {}
        #: `update` calls since the last reset (TorchMetrics' `_update_count`).
        self.update_count = 0
        #: The value `compute` returned, until the next update or reset (`_computed`).
        self.computed: Any = None
        #: The local states while synced, restored by `unsync` (`_cache`).
        self.cache: dict[str, Any] | None = None
        #: Whether the states hold their values over the process group (`_is_synced`).
        self.is_synced = False
        #: Whether `compute` syncs, and unsyncs after (`_to_sync`, `_should_unsync`): off for
        #: the batch value within `forward`.
        self.to_sync = sync_on_compute
        self.should_unsync = True
        #: Whether `update` keeps grad (`_enable_grad`): within `forward`, for its batch value.
        self.enable_grad = False
        # ------------------------------------------------------------------- wrappers
        #: A member that a `MetricCollection` took from a nested collection: its dict results
        #: are keyed with the nested collection's affixes (TorchMetrics' `_from_collection`).
        self.from_collection = False
        #: `Running` over a metric written TorchMetrics' way: the states of each of the last
        #: `window` updates, and how many updates it has seen (`_num_vals_seen`).
        self.window_slots: list[dict[str, Any] | None] = []
        self.num_vals_seen = 0
        #: `LambdaInputTransformer`'s transforms (None: the input as it is).
        self.transform_pred: Callable[[Tensor], Tensor] | None = None
        self.transform_target: Callable[[Tensor], Tensor] | None = None

    def __getstate__(self) -> dict[str, Any]:
        # Every field (pickle's protocols 0 and 1 take a `__slots__` class only this way).
        return {name: getattr(self, name) for name in self.__slots__}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state.get("to_sync", True))  # type: ignore[misc]
        for name, value in state.items():
            setattr(self, name, value)


def attach(metric: Any, sync_on_compute: bool) -> TorchMetricsState:
    """Give a compatible metric its bookkeeping, first thing in its construction (written past
    the metric's `__setattr__`, before `nn.Module.__init__` has run)."""
    state = TorchMetricsState(sync_on_compute)
    object.__setattr__(metric, "_tm", state)
    return state


def tm_state(metric: Any) -> TorchMetricsState:
    """The bookkeeping of a compatible metric (made by `attach`)."""
    state: TorchMetricsState = metric._tm
    return state
