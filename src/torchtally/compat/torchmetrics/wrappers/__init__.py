"""`torchmetrics.wrappers` on torchtally: ClasswiseWrapper, MultitaskWrapper, MetricTracker and
Running with TorchMetrics' names, arguments and outputs, over the compatible metrics.

`Running` keeps the window in torchtally's fixed-size ring (`torchtally.metrics.Running`):
fixed shapes, one summed state per slot, traceable, instead of TorchMetrics' `window` deep
copies of the metric. `MetricTracker` keeps each finished step's computed value (host-side
bookkeeping between epochs) instead of a deep copy of the metric per step.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import Tensor, nn

from torchtally.compat.torchmetrics._base import Metric, _Batch
from torchtally.metrics.wrappers import MetricTracker as _NativeTracker
from torchtally.metrics.wrappers import Running as _NativeRunning

__all__ = ["BootStrapper", "ClasswiseWrapper", "MetricTracker", "MultitaskWrapper", "Running"]


def _check_affix(name: str, value: Any) -> None:
    if value is not None and not isinstance(value, str):
        raise ValueError(f"Argument `{name}` must be None or a string. Received: {name}={value!r}")


class ClasswiseWrapper(nn.Module):
    """TorchMetrics' `ClasswiseWrapper`: a per-class result (`average=None`) as a dict
    `{prefix + label + postfix: value}`; without prefix and postfix the prefix is the
    metric's class name in lower case and "_". Updates go to the wrapped metric unchanged."""

    def __init__(
        self,
        metric: Metric,
        labels: list[str] | None = None,
        prefix: str | None = None,
        postfix: str | None = None,
    ) -> None:
        if not isinstance(metric, nn.Module) or not hasattr(metric, "compute"):
            raise ValueError(
                "Argument `metric` must be a compatible metric. "
                f"Received: metric={type(metric).__name__}"
            )
        if labels is not None and (
            not isinstance(labels, list) or not all(isinstance(x, str) for x in labels)
        ):
            raise ValueError(
                f"Argument `labels` must be None or a list of strings. Received: labels={labels!r}"
            )
        _check_affix("prefix", prefix)
        _check_affix("postfix", postfix)
        super().__init__()
        self.metric, self.labels = metric, labels
        self._prefix, self._postfix = prefix, postfix

    def _convert_output(self, values: Tensor) -> dict[str, Tensor]:
        if not self._prefix and not self._postfix:
            prefix, postfix = f"{type(self.metric).__name__.lower()}_", ""
        else:
            prefix, postfix = self._prefix or "", self._postfix or ""
        names = self.labels if self.labels is not None else [str(i) for i in range(len(values))]
        if len(names) != len(values):
            raise ValueError(
                f"Argument `labels` must name every class ({len(values)}). Received: "
                f"{len(names)} labels"
            )
        return {
            f"{prefix}{name}{postfix}": value for name, value in zip(names, values, strict=True)
        }

    def update(self, *args: Any, **kwargs: Any) -> None:
        self.metric.update(*args, **kwargs)

    def forward(self, *args: Any, **kwargs: Any) -> dict[str, Tensor]:
        return self._convert_output(self.metric(*args, **kwargs))

    def compute(self) -> dict[str, Tensor]:
        return self._convert_output(self.metric.compute())

    def reset(self) -> None:
        self.metric.reset()

    def persistent(self, mode: bool = False) -> None:
        """Save the wrapped metric's states in `state_dict()` (as TorchMetrics' wrapper, whose
        states are the wrapped metric's)."""
        self.metric.persistent(mode)


class MultitaskWrapper(nn.Module):
    """TorchMetrics' `MultitaskWrapper`: a metric or collection per task,
    `update(task_preds, task_targets)` with a dict of each, results keyed
    `prefix + task + postfix`."""

    def __init__(
        self,
        task_metrics: dict[str, Any],
        prefix: str | None = None,
        postfix: str | None = None,
    ) -> None:
        if not isinstance(task_metrics, dict) or not all(
            isinstance(m, nn.Module) and hasattr(m, "compute") for m in task_metrics.values()
        ):
            raise TypeError(
                "Argument `task_metrics` must be a dict of metrics or metric collections. "
                f"Received: task_metrics={task_metrics!r}"
            )
        _check_affix("prefix", prefix)
        _check_affix("postfix", postfix)
        super().__init__()
        self.task_metrics = nn.ModuleDict(task_metrics)
        self._prefix, self._postfix = prefix or "", postfix or ""

    def _check_keys(self, task_preds: Mapping[str, Any], task_targets: Mapping[str, Any]) -> None:
        tasks = set(self.task_metrics)
        if set(task_preds) != tasks or set(task_targets) != tasks:
            raise ValueError(
                f"Arguments `task_preds` and `task_targets` must have the task keys {sorted(tasks)}. "
                f"Received: {sorted(task_preds)} and {sorted(task_targets)}"
            )

    def _convert_output(self, output: Mapping[str, Any]) -> dict[str, Any]:
        return {f"{self._prefix}{task}{self._postfix}": value for task, value in output.items()}

    def _tasks(self) -> list[tuple[str, Any]]:
        return list(self.task_metrics.items())

    def update(self, task_preds: dict[str, Any], task_targets: dict[str, Any]) -> None:
        self._check_keys(task_preds, task_targets)
        for task, metric in self._tasks():
            metric.update(task_preds[task], task_targets[task])

    def forward(self, task_preds: dict[str, Any], task_targets: dict[str, Any]) -> dict[str, Any]:
        self._check_keys(task_preds, task_targets)
        return self._convert_output(
            {task: metric(task_preds[task], task_targets[task]) for task, metric in self._tasks()}
        )

    def compute(self) -> dict[str, Any]:
        return self._convert_output({task: metric.compute() for task, metric in self._tasks()})

    def reset(self) -> None:
        for _, metric in self._tasks():
            metric.reset()


class MetricTracker(_NativeTracker):
    """TorchMetrics' `MetricTracker`: `increment()` per epoch, `compute_all()`, and
    `best_metric(return_step=...)` by `maximize` (default: the metric's `higher_is_better`).

    Finished steps keep their computed values; the metric itself is reset in place (its state
    keeps its memory, so compiled steps stay valid).
    """

    def __init__(self, metric: Any, maximize: bool | list[bool] | None = None) -> None:
        higher: bool | dict[str, bool]
        if maximize is None:
            if isinstance(metric, Metric):
                if metric.higher_is_better is None:
                    raise ValueError(
                        "Argument `maximize` must be given for a metric without "
                        f"higher_is_better. Received: maximize=None for {type(metric).__name__}"
                    )
                higher = bool(metric.higher_is_better)
            else:
                higher = {
                    key: bool(getattr(member, "higher_is_better", True))
                    for key, member in metric.items()
                }
        elif isinstance(maximize, bool):
            higher = maximize
        elif isinstance(maximize, list) and all(isinstance(m, bool) for m in maximize):
            keys = list(metric.keys()) if hasattr(metric, "keys") else []
            if len(keys) != len(maximize):
                raise ValueError(
                    "Argument `maximize` must hold one bool per metric of the collection "
                    f"({len(keys)}). Received: maximize={maximize!r}"
                )
            higher = dict(zip(keys, maximize, strict=True))
        else:
            raise ValueError(
                f"Argument `maximize` must be None, a bool or a list of bools. Received: maximize={maximize!r}"
            )
        super().__init__(metric, higher_is_better=higher)
        self.maximize = maximize

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The current step's batch value (the metric's `forward`)."""
        self._require_step()
        return self.metric(*args, **kwargs)

    __call__ = forward

    def reset(self) -> None:
        """Reset the current step's metric."""
        self.metric.reset()

    def reset_all(self) -> None:
        """Forget every step."""
        self.metric.reset()
        self._history.clear()
        self._started = False


class Running(nn.Module):
    """TorchMetrics' `Running`: the base metric over its last `window` updates. `forward`
    returns the batch value (as TorchMetrics), `compute` the value over the window.

    The window is torchtally's ring of states (`torchtally.metrics.Running`, held as
    `.running`): fixed shapes, traceable, syncs like the base metric's states.
    """

    def __init__(self, base_metric: Metric, window: int = 5) -> None:
        if not isinstance(base_metric, Metric):
            raise ValueError(
                "Argument `base_metric` must be a compatible metric. "
                f"Received: base_metric={type(base_metric).__name__}"
            )
        if not isinstance(window, int) or isinstance(window, bool) or window < 1:
            raise ValueError(
                f"Argument `window` must be an integer >= 1. Received: window={window!r}"
            )
        super().__init__()
        self.base_metric, self.window = base_metric, window
        self.running = _NativeRunning(base_metric, window)

    def update(self, *args: Any, **kwargs: Any) -> None:
        self.running.update(*args, **kwargs)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        # The batch statistics once: folded into the ring and turned into the batch value.
        batch = _Batch(self.base_metric._batch(*args, **kwargs))
        self.running.update(batch)
        return self.base_metric._value({k: v for k, v in batch.items() if not k.startswith("_")})

    def compute(self) -> Any:
        return self.running.compute()

    def reset(self) -> None:
        self.running.reset()

    def persistent(self, mode: bool = False) -> None:
        """Save the window's states in `state_dict()` (mode=True) or leave them out."""
        self.running.persistent(mode)


class BootStrapper(Metric):
    """TorchMetrics' `BootStrapper` with `sampling_strategy="multinomial"`: `num_bootstraps`
    replicas of the base metric, each updated with a same-size resample (with replacement) of
    every batch, drawn as TorchMetrics draws it (`torch.multinomial` on the CPU generator, one
    draw per replica and update). `compute` returns `mean`, `std`, `quantile` and `raw` over
    the replicas' values.

    The replicas' states are stacked along a first dimension of size `num_bootstraps` in one
    state per base state, so they sync, merge and reset as one metric; resamples keep the
    batch's shape (traceable). TorchMetrics' default `"poisson"` strategy draws a
    data-dependent number of rows per replica and is refused: use `"multinomial"`, or
    `torchtally.metrics.BootStrapper` (Poisson(1) weights, one vectorized update).
    """

    def __init__(
        self,
        base_metric: Metric,
        num_bootstraps: int = 10,
        mean: bool = True,
        std: bool = True,
        quantile: float | Tensor | None = None,
        raw: bool = False,
        sampling_strategy: str = "poisson",
        **kwargs: Any,
    ) -> None:
        if not isinstance(base_metric, Metric):
            raise ValueError(
                "Argument `base_metric` must be a compatible metric. "
                f"Received: base_metric={type(base_metric).__name__}"
            )
        if (
            not isinstance(num_bootstraps, int)
            or isinstance(num_bootstraps, bool)
            or num_bootstraps < 2
        ):
            raise ValueError(
                f"Argument `num_bootstraps` must be an integer >= 2. Received: num_bootstraps={num_bootstraps!r}"
            )
        if sampling_strategy != "multinomial":
            raise ValueError(
                "Argument `sampling_strategy` must be 'multinomial' here: 'poisson' resamples "
                "a data-dependent number of rows (no fixed shapes). For Poisson weights use "
                "torchtally.metrics.BootStrapper. "
                f"Received: sampling_strategy={sampling_strategy!r}"
            )
        cat_states = [n for n, _, r in base_metric.states() if r == "cat"]
        if cat_states:
            raise ValueError(
                "Argument `base_metric` must keep no buffer ('cat') state: each replica would "
                f"need its own copy of the samples. Received: {type(base_metric).__name__} "
                f"with {cat_states}; use its binned/constant-memory mode."
            )
        # The base metric's data errors, sized before the base class allocates their counts.
        object.__setattr__(self, "error_kinds", base_metric.error_kinds)
        super().__init__(**kwargs)
        # A template, deliberately not a submodule: its own state is never used.
        object.__setattr__(self, "_template", base_metric)
        self.num_bootstraps, self.sampling_strategy = num_bootstraps, sampling_strategy
        self.mean, self.std, self.quantile, self.raw = mean, std, quantile, raw
        self._base_names = base_metric.state_names()
        for name in self._base_names:
            state = getattr(base_metric, name).detach()
            stacked = state.unsqueeze(0).repeat(num_bootstraps, *([1] * state.dim()))
            self.register_state(
                f"replica_{name}", stacked, False, base_metric.state_reduction(name)
            )

    def _batch(self, *args: Any, **kwargs: Any) -> dict[str, Tensor]:
        tensors = [a for a in (*args, *kwargs.values()) if isinstance(a, Tensor)]
        if not tensors or tensors[0].dim() == 0:
            raise ValueError(
                "`BootStrapper.update` needs a tensor argument whose first dimension runs over "
                "samples (it resamples along it)."
            )
        size, device = tensors[0].shape[0], tensors[0].device
        base: Metric = self._template
        batches = []
        for _ in range(self.num_bootstraps):
            index = torch.multinomial(torch.ones(size), size, replacement=True).to(device)

            def pick(value: Any, index: Tensor = index) -> Any:
                return value.index_select(0, index) if isinstance(value, Tensor) else value

            batches.append(base._batch(*map(pick, args), **{k: pick(v) for k, v in kwargs.items()}))
        out = {
            f"replica_{name}": torch.stack([batch[name] for batch in batches])
            for name in self._base_names
        }
        if self.error_kinds:  # the base metric's data errors, counted over the batch itself
            errors = base._batch(*args, **kwargs).get("_errors")
            if errors is not None:
                out["_errors"] = errors
        return out

    def _value(self, state: Mapping[str, Tensor]) -> dict[str, Tensor]:
        base: Metric = self._template
        values = torch.stack(
            [
                torch.as_tensor(
                    base._value({n: state[f"replica_{n}"][i] for n in self._base_names})
                )
                for i in range(self.num_bootstraps)
            ]
        )
        out: dict[str, Tensor] = {}
        if self.mean:
            out["mean"] = values.mean(0)
        if self.std:
            out["std"] = values.std(0)
        if self.quantile is not None:
            out["quantile"] = torch.quantile(
                values, torch.as_tensor(self.quantile, dtype=values.dtype)
            )
        if self.raw:
            out["raw"] = values
        return out
