"""The base of every compatible metric: TorchMetrics' API over torchtally's state model.

A compatible metric describes one batch as a dict of statistics shaped like its registered
states (`_batch`), and its value as a function of such a dict (`_value`). Then

* `update` folds the batch statistics into the states by their reductions (in place);
* `forward` computes the batch statistics once, folds them in and returns `_value(batch)`: the
  batch value TorchMetrics' `forward` returns, without a second update pass;
* `compute` is `_value(states)`, synced under torch.distributed by the torchtally base.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import inspect
import sys
import warnings
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, ClassVar, cast

import torch
import torch.distributed as dist
from torch import Tensor

from torchtally._errors import tracing, user_stacklevel
from torchtally._optional import import_optional
from torchtally.compat.torchmetrics import _user
from torchtally.compat.torchmetrics._bookkeeping import TorchMetricsState, attach
from torchtally.compat.torchmetrics.utilities.data import dim_zero_cat
from torchtally.compat.torchmetrics.utilities.exceptions import TorchMetricsUserError
from torchtally.metrics import Metric as _TallyMetric

__all__ = ["CompositionalMetric", "Metric"]

#: The class attributes TorchMetrics makes read-only on instances (`Metric.__setattr__`).
_CONSTANTS = (
    "higher_is_better",
    "is_differentiable",
    "full_state_update",
    "plot_lower_bound",
    "plot_upper_bound",
    "plot_legend_name",
)

#: TorchMetrics' boolean keyword arguments, their defaults and the article of its message.
_FLAGS = (
    ("compute_on_cpu", False, "an"),
    ("dist_sync_on_step", False, "an"),
    ("sync_on_compute", True, "a"),
    ("compute_with_cache", True, "a"),
)


def _jit_unused_properties(cls: type) -> list[str]:
    """Every property of `cls`: `torch.jit.script(metric)` compiles a module's properties
    unless listed here, and ours read runtime state that TorchScript cannot type."""
    names = {
        name
        for klass in cls.__mro__
        for name, value in vars(klass).items()
        if isinstance(value, property)
    }
    return sorted(names)


def _jit_ignored_attributes(cls: type) -> list[str]:
    """Every attribute annotated in `cls`'s classes: TorchScript types an instance attribute
    by its class annotation, which (postponed, `str | None`) it cannot parse; nothing is
    compiled from them (`forward` is unused)."""
    names = {"device"}
    for klass in cls.__mro__:
        names.update(vars(klass).get("__annotations__", {}))
    return sorted(names)


#: The spare copy of each metric that `forward` syncs one step's statistics in
#: (`dist_sync_on_step`); kept beside the metric, so that copies and pickles leave it out.
_STEP_TWINS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def _subclass_update(update: Callable[..., Any]) -> Callable[..., Any]:
    """The own `update` of a subclass of a built-in metric (`update(values, weights)` that
    calls `super().update(values * weights)`), run as written: the built-in `update` it
    calls is the one the engine routes and counts.

    The engine runs a nested `update` call through the class's update (`spec`), which would
    be this subclass's again with the built-in's arguments; it is pointed at the built-in
    body instead.
    """

    @functools.wraps(update)
    def wrapped(self: Any, *args: Any, **kwargs: Any) -> Any:
        return update(self, *args, **kwargs)

    wrapped._torchtally_wrapped = True  # type: ignore[attr-defined]
    wrapped.spec = Metric.update.spec  # type: ignore[attr-defined]
    return wrapped


class _Batch(dict):  # type: ignore[type-arg]
    """Statistics of one batch, already computed (lets `forward` reuse them in `update`)."""


class _GroupBatches(dict):  # type: ignore[type-arg]
    """Precomputed batches keyed by `id(metric)`: a collection's `forward` hands each group
    owner its own batch through the inner collection's single `update` call."""


def _called_by_torchmetrics() -> bool:
    """Whether the method calling this was called by TorchMetrics' own code: its containers
    (MetricCollection, Running, metric arithmetic), which accept our metrics once Lightning
    registers them as `torchmetrics.Metric`, then rely on TorchMetrics' internals (Running
    keeps references to states that our in-place `reset` zeroes: a silent NaN). Never while
    compiling: Dynamo cannot trace the frame lookup, and TorchMetrics' containers are not
    compiled."""
    if torch.compiler.is_compiling():
        return False
    module = sys._getframe(2).f_globals.get("__name__", "")
    return bool(module == "torchmetrics" or module.startswith("torchmetrics."))


class Metric(_TallyMetric):
    """A torchtally metric with TorchMetrics' calling conventions.

    Subclasses register states and implement `_batch(*inputs) -> dict` and
    `_value(states) -> value`. `update`, `forward`, `compute`, `reset`, `clone` and `plot`
    follow TorchMetrics; state is preallocated, so everything traces without host syncs.

    Args:
        sync_on_compute: Sync the state over the process group in `compute` (default True).
        process_group: The process group to sync over (None: the default group).
        name: torchtally's metric name (defaults to the class name in snake case).
    """

    is_differentiable: bool | None = None
    higher_is_better: bool | None = None
    full_state_update: bool | None = False
    #: The value range TorchMetrics' `plot` bounds a metric by (None: unbounded); the optimal
    #: value it draws is the upper bound when higher is better, else the lower.
    plot_lower_bound: float | None = None
    plot_upper_bound: float | None = None
    plot_legend_name: str | None = None
    #: Read `cat` states at compute as their whole buffers (no host read of the fill count;
    #: for subclasses whose unfilled rows are masked by a state of their own) instead of as
    #: their filled rows.
    _cat_whole_buffers = False
    __jit_ignored_attributes__: ClassVar[list[str]] = ["device"]
    __jit_unused_properties__: ClassVar[list[str]] = []

    #: Whether the class writes its own `update` and `compute` over `add_state` states
    #: (TorchMetrics' way, see `_user`) instead of `_batch` and `_value`.
    _tm_user: ClassVar[bool] = False
    #: A `compute` TorchMetrics leaves unwrapped (no cache, no sync: `CompositionalMetric`,
    #: the wrappers, whose wrapped metrics cache and sync themselves).
    _tm_plain_compute: ClassVar[bool] = False
    #: An `update` TorchMetrics leaves unwrapped (not counted here: the wrappers').
    _tm_plain_update: ClassVar[bool] = False
    #: TorchMetrics' bookkeeping (`_bookkeeping`), in the instance from construction on.
    _tm: TorchMetricsState

    def __init_subclass__(cls, **kwargs: Any) -> None:
        cls._tm_user = cls._batch is Metric._batch
        if cls._tm_user:
            # TorchMetrics' semantics for the user's own methods, not the engine's routing
            # (which presumes preallocated states): skip torchtally's wrappers.
            super(_TallyMetric, cls).__init_subclass__(**kwargs)
            wrappers: dict[str, Callable[..., Any]] = {"reset": _user.wrap_reset}
            if not cls._tm_plain_update:
                wrappers["update"] = _user.wrap_update
            if not cls._tm_plain_compute:
                wrappers["compute"] = _user.wrap_compute
            for method, wrap in wrappers.items():
                own = cls.__dict__.get(method)
                if own is not None and not _user.is_wrapped(own):
                    setattr(cls, method, wrap(own))
        else:
            own_update = cls.__dict__.get("update")
            if own_update is not None and not getattr(own_update, "_torchtally_wrapped", False):
                cls.update = _subclass_update(own_update)  # type: ignore[method-assign]
            super().__init_subclass__(**kwargs)
        # `torch.jit.script(metric)` (TorchMetrics' tester checks it) compiles `forward`
        # unless marked unused, and every property not listed as unused.
        own_forward = cls.__dict__.get("forward")
        if own_forward is not None:
            torch.jit.unused(own_forward)
        cls.__jit_unused_properties__ = _jit_unused_properties(cls)
        cls.__jit_ignored_attributes__ = _jit_ignored_attributes(cls)

    def __init__(self, **kwargs: Any) -> None:
        name = kwargs.pop("name", None)
        flags = {}
        for key, default, article in _FLAGS:
            value = kwargs.pop(key, default)
            if not isinstance(value, bool):
                raise ValueError(
                    f"Expected keyword argument `{key}` to be {article} `bool` but got {value!r}"
                )
            flags[key] = value
        process_group = kwargs.pop("process_group", None)
        dist_sync_fn = kwargs.pop("dist_sync_fn", None)
        if dist_sync_fn is not None and not callable(dist_sync_fn):
            raise ValueError(
                "Expected keyword argument `dist_sync_fn` to be an callable function but got "
                f"{dist_sync_fn!r}"
            )
        available_fn = kwargs.pop("distributed_available_fn", None)
        if available_fn is not None and not callable(available_fn):
            raise ValueError(
                "Expected keyword argument `distributed_available_fn` to be a callable "
                f"function but got {available_fn!r}"
            )
        if kwargs:
            names = ", ".join(f"`{key}`" for key in sorted(kwargs))
            raise ValueError(
                f"Unexpected keyword arguments: {names} (for {type(self).__name__}; accepted "
                "besides its own: compute_on_cpu, dist_sync_on_step, process_group, "
                "dist_sync_fn, distributed_available_fn, sync_on_compute, compute_with_cache, "
                "name)"
            )
        # First of all: torchtally's base calls `reset` while it builds the metric, which reads
        # the bookkeeping (and does nothing until it is ready).
        tm = attach(self, flags["sync_on_compute"])
        super().__init__(name)
        self.sync_on_compute = flags["sync_on_compute"]
        self.process_group = process_group
        #: Kept for TorchMetrics' API: `cat` states are preallocated on the metric's device and
        #: read there (the values do not depend on where they are computed).
        self.compute_on_cpu = flags["compute_on_cpu"]
        #: `forward` returns the batch value synced over the process group (TorchMetrics'
        #: `dist_sync_on_step`): the batch statistics are reduced, then turned into the value.
        self.dist_sync_on_step = flags["dist_sync_on_step"]
        self.compute_with_cache = flags["compute_with_cache"]
        self.dist_sync_fn = dist_sync_fn
        self.distributed_available_fn = available_fn
        tm.ready = True

    # ------------------------------------------------------- TorchMetrics' state API

    def add_state(
        self,
        name: str,
        default: Tensor | list[Any],
        dist_reduce_fx: str | Callable[..., Any] | None = None,
        persistent: bool = False,
    ) -> None:
        """Add a state as TorchMetrics does (for a metric that writes its own `update` and
        `compute`): a tensor, or an empty list to append tensors to; `reset` restores a copy
        of `default`; `dist_reduce_fx` ("sum", "mean", "cat", "min", "max", a callable or
        None) reduces the values gathered from every rank; `persistent` puts it in
        `state_dict()`.

        Raises:
            TypeError: the metric is a built-in one (its states are preallocated).
            ValueError: `default` is neither a tensor nor an empty list, or `dist_reduce_fx`
                is none of the above.
        """
        if not self._tm_user:
            raise TypeError(
                f"`add_state` is for metrics that write their own `update` and `compute`: "
                f"{type(self).__name__} keeps preallocated states (use `register_state`)."
            )
        if not isinstance(default, (Tensor, list)) or (isinstance(default, list) and default):
            raise ValueError(
                "state variable must be a tensor or any empty list (where you can append "
                f"tensors). Received: default={default!r}"
            )
        reduce_fn: Callable[..., Any] | None
        if isinstance(dist_reduce_fx, str) and dist_reduce_fx in _user.REDUCTIONS:
            reduce_fn = _user.REDUCTIONS[dist_reduce_fx]
        elif dist_reduce_fx is None or (
            callable(dist_reduce_fx) and not isinstance(dist_reduce_fx, str)
        ):
            reduce_fn = dist_reduce_fx
        else:
            raise ValueError(
                "`dist_reduce_fx` must be callable or one of ['mean', 'sum', 'cat', 'min', "
                f"'max', None]. Received: dist_reduce_fx={dist_reduce_fx!r}"
            )
        if isinstance(default, Tensor):
            default = default.contiguous()
        setattr(self, name, default)
        tm = self._tm
        tm.defaults[name] = copy.deepcopy(default)
        tm.persistent[name] = persistent
        tm.reductions[name] = reduce_fn

    @property
    def _defaults(self) -> dict[str, Any]:
        """TorchMetrics' `{state: the value reset restores}` (for a built-in metric an empty
        list for a `cat` state, whose rows TorchMetrics keeps in a list)."""
        if _called_by_torchmetrics():
            return cast(dict[str, Any], self._not_torchmetrics())
        if self._tm_user:
            return self._tm.defaults
        defaults: dict[str, Any] = {}
        for name in self._metric_states():
            if self.state_reduction(name) == "cat":
                defaults[name] = []
            else:
                defaults[name] = self.initial_state(name).reshape(getattr(self, name).shape)
        return defaults

    @property
    def _reductions(self) -> dict[str, Any]:
        """TorchMetrics' `{state: dist_reduce_fx}` (the `dim_zero_*` functions)."""
        if self._tm_user:
            return self._tm.reductions
        return {
            name: _user.REDUCTIONS[self.state_reduction(name)] for name in self._metric_states()
        }

    @_reductions.setter
    def _reductions(self, reductions: dict[str, Any]) -> None:
        # TorchMetrics' own DDP tests swap the map on a metric written its way; a built-in
        # metric's reductions are its states' (its sync is torch.distributed's collectives).
        if not self._tm_user:
            raise AttributeError(
                f"`{type(self).__name__}._reductions` is read-only: a built-in metric syncs "
                "each state by its own reduction. Received an assignment of "
                f"{sorted(reductions)!r}."
            )
        self._tm.reductions = dict(reductions)

    @property
    def _persistent(self) -> dict[str, bool]:
        """TorchMetrics' `{state: whether state_dict() holds it}`."""
        if self._tm_user:
            return self._tm.persistent
        skipped = self._non_persistent_buffers_set
        return {name: name not in skipped for name in self._metric_states()}

    @property
    def metric_state(self) -> dict[str, Any]:
        """Every state by name (a built-in `cat` state as its filled rows: a host read)."""
        if self._tm_user:
            return {name: getattr(self, name) for name in self._tm.defaults}
        return {
            name: self.cat_state(name).filled_rows()
            if self.state_reduction(name) == "cat"
            else getattr(self, name)
            for name in self._metric_states()
        }

    @property
    def update_count(self) -> int:
        """How many times `update` (or `forward`) ran since the last reset."""
        if self._tm_user:
            return int(self._tm.update_count)
        return int(self.num_updates)

    @property
    def update_called(self) -> bool:
        """Whether `update` (or `forward`) ran since the last reset."""
        return self.update_count > 0

    @property
    def _update_called(self) -> bool:
        return self.update_called

    @property
    def _is_synced(self) -> bool:
        return self.is_synced

    # TorchMetrics' bookkeeping attributes, which its tests and the code written for it read
    # and write: fields of the metric's bookkeeping object (`_bookkeeping`). A built-in metric
    # counts, caches and syncs in torchtally's state instead (its count is `update_count`).

    @property
    def _update_count(self) -> int:
        """`update` calls since the last reset."""
        return self._tm.update_count if self._tm_user else self.update_count

    @_update_count.setter
    def _update_count(self, value: int) -> None:
        self._tm.update_count = value

    @property
    def _computed(self) -> Any:
        """The value `compute` returned, until the next update or reset (None: none)."""
        return self._tm.computed

    @_computed.setter
    def _computed(self, value: Any) -> None:
        self._tm.computed = value

    @property
    def _cache(self) -> dict[str, Any] | None:
        """The local states while synced, which `unsync` restores."""
        return self._tm.cache

    @_cache.setter
    def _cache(self, value: dict[str, Any] | None) -> None:
        self._tm.cache = value

    @property
    def _to_sync(self) -> bool:
        """Whether `compute` syncs the states over the process group."""
        return self._tm.to_sync

    @_to_sync.setter
    def _to_sync(self, value: bool) -> None:
        self._tm.to_sync = value

    @property
    def _should_unsync(self) -> bool:
        """Whether `compute` restores the local states after syncing them."""
        return self._tm.should_unsync

    @_should_unsync.setter
    def _should_unsync(self, value: bool) -> None:
        self._tm.should_unsync = value

    @property
    def _enable_grad(self) -> bool:
        """Whether `update` keeps grad (within `forward`, for its batch value)."""
        return self._tm.enable_grad

    @_enable_grad.setter
    def _enable_grad(self, value: bool) -> None:
        self._tm.enable_grad = value

    @property
    def _dtype(self) -> torch.dtype:
        """The metric's floating dtype (`dtype`)."""
        return self._tm.dtype

    @_dtype.setter
    def _dtype(self, value: torch.dtype) -> None:
        self._tm.dtype = value

    @property
    def _from_collection(self) -> bool:
        """Whether a collection took this metric from a nested collection (its dict results
        are keyed with the nested collection's `prefix` and `postfix`)."""
        return self._tm.from_collection

    @_from_collection.setter
    def _from_collection(self, value: bool) -> None:
        self._tm.from_collection = value

    @property
    def is_synced(self) -> bool:
        """Whether the states hold the values over the process group (between `sync` and
        `unsync`)."""
        if self._tm_user:
            return self._tm.is_synced
        # Not `super().is_synced`: under torch 2.13's Dynamo that reads the property object
        # itself (always true), so a compiled `forward` would refuse as if synced.
        return bool(_TallyMetric.is_synced.__get__(self))

    @property
    def _update_signature(self) -> inspect.Signature:
        """The parameters `update` takes (TorchMetrics' `_update_signature`)."""
        if self._tm_user:
            update = type(self).update
            function = getattr(update, "__wrapped__", update)
        else:
            function = type(self)._batch
        parameters = list(inspect.signature(function).parameters.values())[1:]
        return inspect.Signature(parameters)

    def _filter_kwargs(self, **kwargs: Any) -> dict[str, Any]:
        """The keyword arguments `update` takes (all of them if it takes `**kwargs`; none if
        it names none of them), as TorchMetrics' collections and compositions pass them."""
        if _called_by_torchmetrics():
            return cast(dict[str, Any], self._not_torchmetrics())
        parameters = self._update_signature.parameters
        variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        named = {
            k: v
            for k, v in kwargs.items()
            if k in parameters and parameters[k].kind not in variadic
        }
        if any(p.kind == inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
            return kwargs
        return named

    # ------------------------------------------------------------------- dtype, device

    @property
    def dtype(self) -> torch.dtype:
        """The metric's floating dtype: the default dtype at construction, or `set_dtype`'s."""
        return self._tm.dtype

    def set_dtype(self, dst_type: str | torch.dtype) -> Metric:
        """Cast the floating-point states to `dst_type` (the only dtype change a metric
        takes: `half()`, `float()`, `double()` and `type()` leave it as it is, as in
        TorchMetrics, so that casting a model does not cast its metrics' accumulators).
        Integer states (counts) keep their dtype."""
        dtype = (
            dst_type if isinstance(dst_type, torch.dtype) else torch.empty(0).type(dst_type).dtype
        )

        def cast_float(tensor: Tensor) -> Tensor:
            return tensor.to(dtype) if tensor.is_floating_point() else tensor

        super()._apply(cast_float)
        if self._tm_user:
            self._apply_to_user_states(cast_float)
        self._tm.dtype = dtype
        return self

    def type(self, dst_type: Any) -> Metric:
        """Leaves the metric as it is (TorchMetrics' guard): use `set_dtype`."""
        return self

    def float(self) -> Metric:
        """Leaves the metric as it is (TorchMetrics' guard): use `set_dtype`."""
        return self

    def double(self) -> Metric:
        """Leaves the metric as it is (TorchMetrics' guard): use `set_dtype`."""
        return self

    def half(self) -> Metric:
        """Leaves the metric as it is (TorchMetrics' guard): use `set_dtype`."""
        return self

    def bfloat16(self) -> Metric:
        """Leaves the metric as it is (TorchMetrics' guard): use `set_dtype`."""
        return self

    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> Metric:
        result = cast(Metric, super()._apply(fn, recurse))
        if self._tm_user:
            self._apply_to_user_states(fn)
            probe = fn(torch.zeros(1, device=self.device, dtype=self.dtype))
            self._tm.dtype = probe.dtype if probe.is_floating_point() else self.dtype
        return result

    def _apply_to_user_states(self, fn: Callable[[Tensor], Tensor]) -> None:
        tm = self._tm
        defaults = tm.defaults
        for name, default in defaults.items():
            if isinstance(default, Tensor):
                defaults[name] = fn(default)
            current = getattr(self, name)
            if isinstance(current, Tensor):
                setattr(self, name, fn(current))
            elif isinstance(current, Sequence):
                setattr(self, name, [fn(v) for v in current])
            else:
                raise TypeError(
                    "Expected metric state to be either a Tensor or a list of Tensor, but "
                    f"encountered {current}"
                )
        if tm.computed is not None:
            tm.computed = _user._apply_to_tensors(tm.computed, fn)

    def _metric_states(self) -> list[str]:
        """The states TorchMetrics would list: the fill count of a `cat` state (part of it
        here) left out."""
        names = self.state_names()
        cats = {self.cat_state(n).count_name for n in names if self.state_reduction(n) == "cat"}
        return [name for name in names if name not in cats]

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _CONSTANTS:
            raise RuntimeError(
                f"Can't change const `{name}`: it is a class attribute of "
                f"{type(self).__name__} (set it in a subclass). Received: {name}={value!r}"
            )
        super().__setattr__(name, value)

    # ----------------------------------------------------------- what subclasses write

    def _batch(self, *args: Any, **kwargs: Any) -> dict[str, Tensor]:
        raise NotImplementedError

    def _value(self, state: Mapping[str, Tensor]) -> Any:
        raise NotImplementedError

    # ------------------------------------------------------------------------ the API

    def update(self, *args: Any, **kwargs: Any) -> None:
        """Fold one batch into the state (tensor ops only)."""
        batch: dict[str, Tensor]
        if len(args) == 1 and not kwargs and isinstance(args[0], _Batch):
            batch = args[0]
        elif len(args) == 1 and not kwargs and isinstance(args[0], _GroupBatches):
            batch = args[0][id(self)]
        else:
            batch = self._batch(*args, **kwargs)
        self._fold(batch)

    def _fold(self, batch: Mapping[str, Tensor]) -> None:
        for name, value in batch.items():
            if name == "_errors":  # data errors seen in this batch, by kind, raised by compute
                self.record_errors(**cast(Mapping[str, Tensor], value))
                continue
            state: Tensor = getattr(self, name)
            reduction = self.state_reduction(name)
            # A batch computed from inputs that carry grad (logits in a training step) must not
            # link the states into each step's autograd graph (kept alive all epoch, and a
            # compiled step's second backward fails); TorchMetrics updates with grad off.
            value = value.detach()
            if reduction == "sum":
                state.add_(value.to(state.dtype))
            elif reduction == "max":
                state.copy_(torch.maximum(state, value.to(state.dtype)))
            elif reduction == "min":
                state.copy_(torch.minimum(state, value.to(state.dtype)))
            elif reduction == "cat":  # a preallocated buffer: append at the fill count
                self.cat_state(name).append(value)
            else:
                raise TypeError(f"state {name!r} with reduction {reduction!r} cannot be folded")

    def compute(self) -> Any:
        """The value over everything seen since the last reset (with TorchMetrics' warning
        when no `update` came since then: the value of no data)."""
        count = self.update_counter
        if not tracing(count) and int(count) == 0:
            warnings.warn(
                f"The ``compute`` method of metric {type(self).__name__} was called before the "
                "``update`` method which may lead to errors, as metric states have not yet been "
                "updated.",
                UserWarning,
                stacklevel=user_stacklevel(),
            )
        return self._value(self._read_states())

    def _read_states(self) -> dict[str, Tensor]:
        """The states as `_value` takes them (`cat` states as their filled rows, or their whole
        buffers for the subclasses that mask unfilled rows themselves)."""
        state = {}
        for name in self.state_names():
            if self.state_reduction(name) != "cat":
                state[name] = getattr(self, name)
            elif self._cat_whole_buffers:
                state[name] = self.cat_state(name).rows()
            else:  # the filled rows: one host read of the fill count
                state[name] = self.cat_state(name).filled_rows()
        return state

    @torch.jit.unused
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """Update with the batch and return the metric's value on this batch alone (with
        `dist_sync_on_step=True` under torch.distributed: on the batches of every rank)."""
        if self._tm_user:
            value = _user.forward(self, *args, **kwargs)
            self.set_batch_value(value)
            return value
        if self.is_synced:
            raise TorchMetricsUserError(
                "The Metric shouldn't be synced when performing ``forward``. HINT: Did you "
                "forget to call ``unsync`` ?."
            )
        cls = type(self)
        if cls.update is not Metric.update or cls.compute is not Metric.compute:
            value = self._forward_through_own_methods(*args, **kwargs)
            self.set_batch_value(value)
            return value
        with self._batch_grad_mode():
            batch = _Batch(self._batch(*args, **kwargs))
            self.update(batch)
            self.check_errors()
            value = self._batch_value({k: v for k, v in batch.items() if not k.startswith("_")})
        self.set_batch_value(value)  # TorchMetrics' `_forward_cache` (Lightning logs it)
        return value

    def _batch_grad_mode(self) -> contextlib.AbstractContextManager[Any]:
        """Autograd for `forward`'s batch value: kept for a differentiable metric (TorchMetrics
        computes its batch value with grad on), off for one TorchMetrics declares not
        differentiable. Those compute their value without a graph (the curves under
        `no_grad`, the rest from integer counts), while ours derive some points from the
        scores themselves (a curve's thresholds, a calibration bin's mean confidence, the
        sigmoid of logits), which would carry a graph that TorchMetrics' output has not;
        the functional API (`one_batch`) computes under the same rule."""
        if self.is_differentiable is False:
            return torch.no_grad()
        return contextlib.nullcontext()

    def _batch_value(self, stats: dict[str, Tensor]) -> Any:
        """The value of one batch's statistics; with `dist_sync_on_step` under
        torch.distributed, of every rank's statistics of this step, reduced as the states are
        (every rank must call `forward`, as TorchMetrics requires)."""
        if not (self.dist_sync_on_step and self._distributed()):
            return self._value(stats)
        # The step's statistics in a spare copy, synced by the states' own exact collectives,
        # then read as `compute` reads states.
        twin = self._spare_copy()
        twin.reset()
        twin._fold(stats)
        _TallyMetric.sync(twin, self.process_group)
        try:
            return twin._value(twin._read_states())
        finally:
            _TallyMetric.unsync(twin)

    def _forward_through_own_methods(self, *args: Any, **kwargs: Any) -> Any:
        """`forward` of a subclass that overrides `update` or `compute` (TorchMetrics'
        full-state `forward`): its `update` on the accumulated state, and its `update` and
        `compute` on a spare copy holding the batch alone for the batch value."""
        self.update(*args, **kwargs)
        twin = self._spare_copy()
        twin.reset()
        twin.update(*args, **kwargs)
        twin.sync_on_compute = self.dist_sync_on_step
        value = twin.compute()
        self.check_errors()
        return value

    def _spare_copy(self) -> Metric:
        """A copy of this metric (settings and states) kept beside it for one step's batch:
        `dist_sync_on_step`'s sync and a subclass's own `update` in `forward`."""
        twin: Metric | None = _STEP_TWINS.get(self)
        if twin is None or twin.device != self.device:
            twin = copy.deepcopy(self)
            _STEP_TWINS[self] = twin
        return twin

    def _distributed(self) -> bool:
        """Whether states sync: torch.distributed is initialized with more than one rank in
        the process group (and `distributed_available_fn`, when given, agrees)."""
        if not (dist.is_available() and dist.is_initialized()):
            return False
        if dist.get_world_size(self.process_group) < 2:
            return False
        available = self.distributed_available_fn
        return available is None or bool(available())

    def _should_sync(self) -> bool:
        if not self.sync_on_compute or self.is_synced or tracing(self.update_counter):
            return False
        if self._distributed():
            return True
        self._refuse_foreign_transport(self.distributed_available_fn, self.dist_sync_fn)
        return False

    def _refuse_foreign_transport(self, available: Any, sync_fn: Any) -> None:
        """A built-in metric syncs by torch.distributed's exact collectives (the values a
        gather and reduce give): a `dist_sync_fn` that would be the only transport (the
        availability check says distributed, torch.distributed is not initialized) is
        refused rather than leaving the states unsynced."""
        if sync_fn is None or available is None or not bool(available()):
            return
        if dist.is_available() and dist.is_initialized():
            return
        raise NotImplementedError(
            f"{type(self).__name__} syncs its preallocated states over torch.distributed, "
            "which is not initialized here, while `distributed_available_fn` says the run is "
            "distributed: argument `dist_sync_fn` cannot carry them. Received: "
            f"dist_sync_fn={sync_fn!r}"
        )

    # ------------------------------------------------------------- TorchMetrics' sync

    def sync(  # type: ignore[override]
        self,
        dist_sync_fn: Callable[..., Any] | None = None,
        process_group: Any = None,
        should_sync: bool = True,
        distributed_available: Callable[[], bool] | None = None,
    ) -> None:
        """Replace the states by their values over the process group (TorchMetrics'
        signature); `unsync` restores the local ones.

        Raises:
            TorchMetricsUserError: the metric is synced already.
        """
        if self.is_synced and should_sync:
            raise TorchMetricsUserError("The Metric has already been synced.")
        if not should_sync:
            return
        available = distributed_available or self.distributed_available_fn
        if not self._tm_user:
            group = process_group if process_group is not None else self.process_group
            if available is None:
                if not (dist.is_available() and dist.is_initialized()):
                    return
            elif not bool(available()):
                return
            self._refuse_foreign_transport(available, dist_sync_fn or self.dist_sync_fn)
            if dist.get_world_size(group) > 1:
                super().sync(group)
            return
        if available is None:
            distributed = dist.is_available() and dist.is_initialized()
        else:
            distributed = bool(available())
        if not distributed:
            return
        self._tm.cache = _user.copy_states(self)
        self._sync_dist(dist_sync_fn or _user.default_sync_fn(), process_group=process_group)
        self._tm.is_synced = True

    def _sync_dist(
        self, dist_sync_fn: Callable[..., Any] | None = None, process_group: Any = None
    ) -> None:
        # TorchMetrics' default transport, `gather_all_tensors`, when none is given
        sync_fn = dist_sync_fn if dist_sync_fn is not None else _user.default_sync_fn()
        _user.sync_dist(self, sync_fn, process_group)

    def unsync(self, should_unsync: bool = True) -> None:
        """Restore the local states saved by `sync`.

        Raises:
            TorchMetricsUserError: the metric is not synced.
        """
        if not should_unsync:
            return
        if not self.is_synced:
            raise TorchMetricsUserError("The Metric has already been un-synced.")
        if not self._tm_user:
            super().unsync()
            return
        tm = self._tm
        if tm.cache is None:
            raise TorchMetricsUserError("The internal cache should exist to unsync the Metric.")
        for name, value in tm.cache.items():
            setattr(self, name, value)
        tm.is_synced = False
        tm.cache = None

    @contextlib.contextmanager
    def sync_context(
        self,
        dist_sync_fn: Callable[..., Any] | None = None,
        process_group: Any = None,
        should_sync: bool = True,
        should_unsync: bool = True,
        distributed_available: Callable[[], bool] | None = None,
    ) -> Iterator[None]:
        """Within the block the states hold their values over the process group; the local
        ones are restored after it (unless `should_unsync=False`)."""
        self.sync(
            dist_sync_fn=dist_sync_fn,
            process_group=process_group,
            should_sync=should_sync,
            distributed_available=distributed_available,
        )
        yield
        self.unsync(should_unsync=self.is_synced and should_unsync)

    # -------------------------------------------------------------------- combination

    def merge_state(self, incoming_state: dict[str, Any] | Metric) -> Metric:  # type: ignore[override]
        """Fold another metric's state (or a dict of states) into this one, as if this metric
        had seen its data too (TorchMetrics' `merge_state`); returns the metric.

        Raises:
            ValueError: `incoming_state` is neither a dict nor a metric of this class.
            RuntimeError: the metric's `forward` needs its whole state (`full_state_update`)
                or syncs on step.
        """
        if not isinstance(incoming_state, (dict, Metric)):
            raise ValueError(
                "Expected incoming state to be a dict or an instance of Metric but got "
                f"{type(incoming_state)}"
            )
        if self.full_state_update or self.full_state_update is None or self.dist_sync_on_step:
            raise RuntimeError(
                "``merge_state`` is not supported for metrics with ``full_state_update=True`` "
                "or ``dist_sync_on_step=True``. Please overwrite the merge_state method in the "
                "metric class."
            )
        if isinstance(incoming_state, Metric):
            if not isinstance(incoming_state, type(self)):
                raise ValueError(
                    f"Expected incoming state to be an instance of {type(self).__name__} but "
                    f"got {type(incoming_state)}"
                )
            if not self._tm_user:
                super().merge_state(incoming_state)
                return self
            incoming_state = incoming_state.metric_state
        self._reduce_states(incoming_state)
        return self

    def _reduce_states(self, incoming_state: dict[str, Any]) -> None:
        """Fold a dict of states into this metric's, by each state's reduction."""
        if _called_by_torchmetrics():
            self._not_torchmetrics()
        if self._tm_user:
            _user.reduce_states(self, incoming_state)
            return
        other = copy.deepcopy(self)
        other.reset()
        names = self._metric_states()
        missing = [name for name in names if name not in incoming_state]
        if missing:
            raise ValueError(
                f"Expected state variable {missing[0]} to be present in incoming state "
                f"{incoming_state}"
            )
        for name in names:
            value = incoming_state[name]
            if self.state_reduction(name) == "cat":
                rows = value if isinstance(value, Tensor) else dim_zero_cat(list(value))
                other.cat_state(name).append(torch.as_tensor(rows, device=self.device))
            else:
                getattr(other, name).copy_(
                    torch.as_tensor(value).reshape(getattr(other, name).shape)
                )
        _TallyMetric.merge_state(self, other)

    def reset(self) -> None:
        """Every state back to its initial value (TorchMetrics' `reset`)."""
        if not self._tm.ready:
            return  # called by torchtally's base while it builds the metric
        if self._tm_user:
            _user.reset(self)
            return
        super().reset()

    def persistent(self, mode: bool = False) -> Metric:
        """Save the metric states in `state_dict()` (mode=True) or leave them out (the
        default at construction, as in TorchMetrics: a model holding metrics saves and loads
        its plain checkpoint). TorchMetrics' default `mode` is False here too."""
        super().persistent(mode)
        return self

    def _load_from_state_dict(
        self,
        state_dict: Any,
        prefix: str,
        local_metadata: Any,
        strict: bool,
        missing_keys: list[str],
        unexpected_keys: list[str],
        error_msgs: list[str],
    ) -> None:
        if self._tm_user:
            for name in self._tm.defaults:
                if prefix + name in state_dict:
                    setattr(self, name, state_dict.pop(prefix + name))
        # TorchMetrics loads the states a checkpoint holds whether or not the metric saves
        # them itself: the non-persistent ones present are loaded as if persistent.
        skipped = self._non_persistent_buffers_set
        present = {n for n, _, _ in self.states() if n in skipped and prefix + n in state_dict}
        skipped.difference_update(present)
        try:
            super()._load_from_state_dict(
                state_dict,
                prefix,
                local_metadata,
                strict,
                missing_keys,
                unexpected_keys,
                error_msgs,
            )
        finally:
            skipped.update(present)
        # TorchMetrics loads a checkpoint without metric states into a persistent metric
        # (its states keep their values); a strict load of a model holding ours does too.
        states = {prefix + name for name, _, _ in self.states()}
        missing_keys[:] = [key for key in missing_keys if key not in states]

    def _save_to_state_dict(self, destination: Any, prefix: str, keep_vars: bool) -> None:
        super()._save_to_state_dict(destination, prefix, keep_vars)
        if not self._tm_user:
            return
        for name, persistent in self._tm.persistent.items():
            if not persistent:
                continue
            value = getattr(self, name)
            if not keep_vars:
                if isinstance(value, Tensor):
                    value = value.detach()
                elif isinstance(value, list):
                    value = [v.detach() if isinstance(v, Tensor) else v for v in value]
            destination[prefix + name] = copy.deepcopy(value)

    def clone(self, *args: Any, **kwargs: Any) -> Metric:
        """An independent deep copy (state included), as TorchMetrics' `clone`."""
        return copy.deepcopy(self)

    def plot(self, val: Any = None, ax: Any = None) -> tuple[Any, Any]:
        """Plot one value (or a sequence of values) with matplotlib; returns `(figure, axes)`.

        As TorchMetrics' `plot`: a scalar is a point, a vector bars per class, a matrix (a
        confusion matrix) an image with its counts written in, a sequence of values a line over
        steps; the axes are labelled, and the optimal value (the upper bound when higher is
        better, the lower one otherwise, where the metric has them) is a dashed line.

        Raises:
            ImportError: matplotlib is not installed (the `plots` extra).
        """
        plt = import_optional("matplotlib.pyplot", f"`{type(self).__name__}.plot`", "plots")
        value = self.compute() if val is None else val
        if ax is None:
            fig, ax = plt.subplots()
        else:
            fig = ax.get_figure()
        name = type(self).__name__
        ax.set_title(name)
        if isinstance(value, Sequence) and not isinstance(value, Tensor):
            ys = [float(torch.as_tensor(v).float().mean()) for v in value]
            ax.plot(range(len(ys)), ys, marker="o", label=name)
            ax.set_xlabel("step")
            ax.set_ylabel(name)
            self._plot_optimum(ax)
            return fig, ax
        tensor = torch.as_tensor(value).detach().cpu().float()
        if tensor.dim() == 0:
            ax.plot([0], [float(tensor)], marker="o", label=name)
            ax.set_xticks([])
            ax.set_ylabel(name)
            self._plot_optimum(ax)
        elif tensor.dim() == 1:
            ax.bar(range(tensor.numel()), tensor.tolist(), label=name)
            ax.set_xlabel("class")
            ax.set_ylabel(name)
            self._plot_optimum(ax)
        else:
            matrix = tensor.reshape(-1, tensor.shape[-1])
            image = ax.imshow(matrix.tolist(), cmap="Blues")
            fig.colorbar(image, ax=ax)
            ax.set_xlabel("Predicted class")
            ax.set_ylabel("True class")
            integral = bool(torch.equal(matrix, matrix.round()))
            middle = float(matrix.max() + matrix.min()) / 2
            for (row, column), cell in zip(
                ((r, c) for r in range(matrix.shape[0]) for c in range(matrix.shape[1])),
                matrix.reshape(-1).tolist(),
            ):
                ax.text(
                    column,
                    row,
                    f"{int(cell)}" if integral else f"{cell:.2f}",
                    ha="center",
                    va="center",
                    color="white" if cell > middle else "black",
                )
        return fig, ax

    # ------------------------------------------------- arithmetic: CompositionalMetric

    # A metric combined with another (or a number) is a `CompositionalMetric` whose value is
    # the operator applied to the operands' values, as in TorchMetrics. Not `==` and `!=`:
    # metrics compare and hash by identity, as every module (torch's module traversal and
    # `torch.compile` rely on it); `CompositionalMetric(torch.eq, a, b)` builds that one.

    def __add__(self, other: Any) -> CompositionalMetric:
        return CompositionalMetric(torch.add, self, other)

    def __and__(self, other: Any) -> CompositionalMetric:
        return CompositionalMetric(torch.bitwise_and, self, other)

    def __floordiv__(self, other: Any) -> CompositionalMetric:
        return CompositionalMetric(torch.floor_divide, self, other)

    def __ge__(self, other: Any) -> CompositionalMetric:
        return CompositionalMetric(torch.ge, self, other)

    def __gt__(self, other: Any) -> CompositionalMetric:
        return CompositionalMetric(torch.gt, self, other)

    def __le__(self, other: Any) -> CompositionalMetric:
        return CompositionalMetric(torch.le, self, other)

    def __lt__(self, other: Any) -> CompositionalMetric:
        return CompositionalMetric(torch.lt, self, other)

    def __matmul__(self, other: Any) -> CompositionalMetric:
        return CompositionalMetric(torch.matmul, self, other)

    def __mod__(self, other: Any) -> CompositionalMetric:
        return CompositionalMetric(torch.fmod, self, other)

    def __mul__(self, other: Any) -> CompositionalMetric:
        return CompositionalMetric(torch.mul, self, other)

    def __or__(self, other: Any) -> CompositionalMetric:
        return CompositionalMetric(torch.bitwise_or, self, other)

    def __pow__(self, other: Any) -> CompositionalMetric:
        return CompositionalMetric(torch.pow, self, other)

    def __radd__(self, other: Any) -> CompositionalMetric:
        return CompositionalMetric(torch.add, other, self)

    def __rand__(self, other: Any) -> CompositionalMetric:
        return CompositionalMetric(torch.bitwise_and, self, other)

    def __rfloordiv__(self, other: Any) -> CompositionalMetric:
        return CompositionalMetric(torch.floor_divide, other, self)

    def __rmatmul__(self, other: Any) -> CompositionalMetric:
        return CompositionalMetric(torch.matmul, other, self)

    def __rmod__(self, other: Any) -> CompositionalMetric:
        return CompositionalMetric(torch.fmod, other, self)

    def __rmul__(self, other: Any) -> CompositionalMetric:
        return CompositionalMetric(torch.mul, other, self)

    def __ror__(self, other: Any) -> CompositionalMetric:
        return CompositionalMetric(torch.bitwise_or, other, self)

    def __rpow__(self, other: Any) -> CompositionalMetric:
        return CompositionalMetric(torch.pow, other, self)

    def __rsub__(self, other: Any) -> CompositionalMetric:
        return CompositionalMetric(torch.sub, other, self)

    def __rtruediv__(self, other: Any) -> CompositionalMetric:
        return CompositionalMetric(torch.true_divide, other, self)

    def __rxor__(self, other: Any) -> CompositionalMetric:
        return CompositionalMetric(torch.bitwise_xor, self, other)

    def __sub__(self, other: Any) -> CompositionalMetric:
        return CompositionalMetric(torch.sub, self, other)

    def __truediv__(self, other: Any) -> CompositionalMetric:
        return CompositionalMetric(torch.true_divide, self, other)

    def __xor__(self, other: Any) -> CompositionalMetric:
        return CompositionalMetric(torch.bitwise_xor, self, other)

    def __abs__(self) -> CompositionalMetric:
        return CompositionalMetric(torch.abs, self, None)

    def __invert__(self) -> CompositionalMetric:
        return CompositionalMetric(torch.bitwise_not, self, None)

    __inv__ = __invert__

    def __neg__(self) -> CompositionalMetric:
        return CompositionalMetric(_neg, self, None)

    def __pos__(self) -> CompositionalMetric:
        return CompositionalMetric(torch.abs, self, None)

    def __getitem__(self, idx: int) -> CompositionalMetric:
        return CompositionalMetric(lambda x: x[idx], self, None)

    #: `__getitem__` builds a composition: iterating a metric must not call it.
    __iter__ = None

    def _plot_optimum(self, ax: Any) -> None:
        best = self.plot_upper_bound if self.higher_is_better else self.plot_lower_bound
        if self.higher_is_better is None or best is None:
            return
        ax.axhline(best, color="gray", linestyle="--", label="Optimal value")
        ax.legend()


def _neg(x: Tensor) -> Tensor:
    return -torch.abs(x)


class CompositionalMetric(Metric):
    """Two metrics (or a metric and a number) combined by an operator: `update`, `forward`,
    `reset` and `persistent` go to the metric operands, `compute` applies the operator to
    their values (TorchMetrics' `CompositionalMetric`, what `metric_a + metric_b` builds).

    Args:
        operator: Takes the value of `metric_a` (and of `metric_b` unless it is None).
        metric_a: A metric, a number or a tensor.
        metric_b: A metric, a number, a tensor, or None for a unary operator.
    """

    _tm_plain_compute = True  # the operands compute (and sync) themselves

    def __init__(
        self,
        operator: Callable[..., Any],
        metric_a: Metric | float | Tensor,
        metric_b: Metric | float | Tensor | None,
    ) -> None:
        super().__init__()
        self.op = operator
        for name, operand in (("metric_a", metric_a), ("metric_b", metric_b)):
            if isinstance(operand, Tensor):
                self.register_buffer(name, operand, persistent=False)
            else:
                setattr(self, name, operand)

    def _sync_dist(
        self, dist_sync_fn: Callable[..., Any] | None = None, process_group: Any = None
    ) -> None:
        """Nothing of its own to sync: the operands sync in their `compute`."""

    def update(self, *args: Any, **kwargs: Any) -> None:
        """Update each metric operand (with the keyword arguments its `update` takes)."""
        for operand in (self.metric_a, self.metric_b):
            if isinstance(operand, Metric):
                operand.update(*args, **operand._filter_kwargs(**kwargs))

    def compute(self) -> Any:
        """The operator applied to the operands' values."""
        a = self.metric_a.compute() if isinstance(self.metric_a, Metric) else self.metric_a
        b = self.metric_b.compute() if isinstance(self.metric_b, Metric) else self.metric_b
        if b is None:
            return self.op(a)
        return self.op(a, b)

    @torch.jit.unused
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The operator applied to the operands' batch values (each operand updated)."""
        a = (
            self.metric_a(*args, **self.metric_a._filter_kwargs(**kwargs))
            if isinstance(self.metric_a, Metric)
            else self.metric_a
        )
        b = (
            self.metric_b(*args, **self.metric_b._filter_kwargs(**kwargs))
            if isinstance(self.metric_b, Metric)
            else self.metric_b
        )
        value: Any
        if a is None or (b is None and isinstance(self.metric_b, Metric)):
            value = None
        elif b is None:
            value = self.op(a)
        else:
            value = self.op(a, b)
        self.set_batch_value(value)
        return value

    def reset(self) -> None:
        """Reset each metric operand."""
        for operand in (self.metric_a, self.metric_b):
            if isinstance(operand, Metric):
                operand.reset()

    def persistent(self, mode: bool = False) -> CompositionalMetric:
        """Save the metric operands' states in `state_dict()` (mode=True) or not."""
        for operand in (self.metric_a, self.metric_b):
            if isinstance(operand, Metric):
                operand.persistent(mode)
        return self

    def __repr__(self) -> str:
        name = getattr(self.op, "__name__", repr(self.op))
        return f"{type(self).__name__}(\n  {name}(\n    {self.metric_a!r},\n    {self.metric_b!r}\n  )\n)"
