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
from collections.abc import Mapping, Sequence
from typing import Any, cast

import torch
from torch import Tensor

from torchtally._errors import tracing, user_stacklevel
from torchtally._optional import import_optional
from torchtally.metrics import Metric as _TallyMetric

__all__ = ["Metric"]

#: TorchMetrics keyword arguments that have no effect here (syncing is one collective anyway).
_ACCEPTED_NOOPS = (
    "compute_on_cpu",
    "dist_sync_on_step",
    "dist_sync_fn",
    "distributed_available_fn",
)


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
    #: Read `cat` states at compute as their whole buffers (no host read of the fill count;
    #: for subclasses whose unfilled rows are masked by a state of their own) instead of as
    #: their filled rows.
    _cat_whole_buffers = False

    def __init__(self, **kwargs: Any) -> None:
        name = kwargs.pop("name", None)
        sync_on_compute = kwargs.pop("sync_on_compute", True)
        process_group = kwargs.pop("process_group", None)
        for key in _ACCEPTED_NOOPS:
            kwargs.pop(key, None)
        if kwargs:
            raise ValueError(
                f"Unexpected keyword arguments for {type(self).__name__}: {sorted(kwargs)}. "
                "Accepted: sync_on_compute, process_group, name and the metric's own arguments."
            )
        super().__init__(name)
        if not isinstance(sync_on_compute, bool):
            raise ValueError(
                "Argument `sync_on_compute` must be a bool. "
                f"Received: sync_on_compute={sync_on_compute!r}"
            )
        self.sync_on_compute = sync_on_compute
        self.process_group = process_group

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
        state = {}
        for name in self.state_names():
            if self.state_reduction(name) != "cat":
                state[name] = getattr(self, name)
            elif self._cat_whole_buffers:
                state[name] = self.cat_state(name).rows()
            else:  # the filled rows: one host read of the fill count
                state[name] = self.cat_state(name).filled_rows()
        return self._value(state)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """Update with the batch and return the metric's value on this batch alone."""
        batch = _Batch(self._batch(*args, **kwargs))
        self.update(batch)
        self.check_errors()
        value = self._value({k: v for k, v in batch.items() if not k.startswith("_")})
        self.set_batch_value(value)  # TorchMetrics' `_forward_cache` (Lightning logs it)
        return value

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

    #: The value range TorchMetrics' `plot` bounds a metric by (None: unbounded); the optimal
    #: value it draws is the upper bound when higher is better, else the lower.
    plot_lower_bound: float | None = None
    plot_upper_bound: float | None = None

    def _plot_optimum(self, ax: Any) -> None:
        best = self.plot_upper_bound if self.higher_is_better else self.plot_lower_bound
        if self.higher_is_better is None or best is None:
            return
        ax.axhline(best, color="gray", linestyle="--", label="Optimal value")
        ax.legend()
