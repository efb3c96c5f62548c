"""The base of every compatible metric: TorchMetrics' API over torchtally's state model.

A compatible metric describes one batch as a dict of statistics shaped like its registered
states (`_batch`), and its value as a function of such a dict (`_value`). Then

* `update` folds the batch statistics into the states by their reductions (in place);
* `forward` computes the batch statistics once, folds them in and returns `_value(batch)`: the
  batch value TorchMetrics' `forward` returns, without a second update pass;
* `compute` is `_value(states)`, synced under torch.distributed by the torchtally base.
"""

from __future__ import annotations

import copy
import warnings
import weakref
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, cast

import torch
import torch.distributed as dist
from torch import Tensor

from torchtally._errors import tracing, user_stacklevel
from torchtally._optional import import_optional
from torchtally.compat.torchmetrics.utilities.exceptions import TorchMetricsUserError
from torchtally.metrics import Metric as _TallyMetric
from torchtally.metrics._runtime import COUNT_SUFFIX

__all__ = ["Metric"]

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


class _Batch(dict):  # type: ignore[type-arg]
    """Statistics of one batch, already computed (lets `forward` reuse them in `update`)."""


class _GroupBatches(dict):  # type: ignore[type-arg]
    """Precomputed batches keyed by `id(metric)`: a collection's `forward` hands each group
    owner its own batch through the inner collection's single `update` call."""


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

    def __init_subclass__(cls, **kwargs: Any) -> None:
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

    @property
    def _defaults(self) -> dict[str, Any]:
        """TorchMetrics' `{state: the value reset restores}` (an empty list for a `cat`
        state, whose rows TorchMetrics keeps in a list)."""
        defaults: dict[str, Any] = {}
        for name in self._metric_states():
            if self.state_reduction(name) == "cat":
                defaults[name] = []
            else:
                defaults[name] = self.initial_state(name).reshape(getattr(self, name).shape)
        return defaults

    def _metric_states(self) -> list[str]:
        """The states TorchMetrics would list: the fill count of a `cat` state (part of it
        here) left out."""
        names = self.state_names()
        cats = {name + COUNT_SUFFIX for name in names if self.state_reduction(name) == "cat"}
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
        if self.is_synced:
            raise TorchMetricsUserError(
                "The Metric shouldn't be synced when performing ``forward``. HINT: Did you "
                "forget to call ``unsync`` ?."
            )
        batch = _Batch(self._batch(*args, **kwargs))
        self.update(batch)
        self.check_errors()
        value = self._batch_value({k: v for k, v in batch.items() if not k.startswith("_")})
        self.set_batch_value(value)  # TorchMetrics' `_forward_cache` (Lightning logs it)
        return value

    def _batch_value(self, stats: dict[str, Tensor]) -> Any:
        """The value of one batch's statistics; with `dist_sync_on_step` under
        torch.distributed, of every rank's statistics of this step, reduced as the states are
        (every rank must call `forward`, as TorchMetrics requires)."""
        if not (self.dist_sync_on_step and self._distributed()):
            return self._value(stats)
        twin = _STEP_TWINS.get(self)
        if twin is None or twin.device != self.device:
            # A spare copy that holds one step's statistics: synced by the states' own exact
            # collectives, then read as `compute` reads states.
            twin = copy.deepcopy(self)
            _STEP_TWINS[self] = twin
        twin.reset()
        twin._fold(stats)
        twin.sync(self.process_group)
        try:
            return twin._value(twin._read_states())
        finally:
            twin.unsync()

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
        return super()._should_sync() and self._distributed()

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
        # TorchMetrics loads a checkpoint without metric states into a persistent metric
        # (its states keep their values); a strict load of a model holding ours does too.
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
        )
        states = {prefix + name for name, _, _ in self.states()}
        missing_keys[:] = [key for key in missing_keys if key not in states]

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

    def _plot_optimum(self, ax: Any) -> None:
        best = self.plot_upper_bound if self.higher_is_better else self.plot_lower_bound
        if self.higher_is_better is None or best is None:
            return
        ax.axhline(best, color="gray", linestyle="--", label="Optimal value")
        ax.legend()
