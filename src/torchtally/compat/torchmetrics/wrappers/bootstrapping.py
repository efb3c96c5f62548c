"""`torchmetrics.wrappers.bootstrapping`: `BootStrapper` and its resampler."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Mapping
from typing import Any, cast

import torch
from torch import Tensor

from torchtally._errors import tracing, user_stacklevel
from torchtally.compat.torchmetrics._base import Metric

__all__ = ["BootStrapper"]

_STRATEGIES = ("poisson", "multinomial")


def _bootstrap_sampler(size: int, sampling_strategy: str = "poisson") -> Tensor:
    """Indices of a resample with replacement of `size` rows, drawn as TorchMetrics draws
    them on the CPU generator: "poisson" repeats row `i` a Poisson(1) number of times (so the
    resample's length varies), "multinomial" draws `size` rows uniformly.

    Raises:
        ValueError: another `sampling_strategy`.
    """
    if sampling_strategy == "poisson":
        counts = torch.distributions.Poisson(1).sample((size,))
        return torch.arange(size).repeat_interleave(counts.long(), dim=0)
    if sampling_strategy == "multinomial":
        return torch.multinomial(torch.ones(size), num_samples=size, replacement=True)
    raise ValueError(
        f"Unknown sampling strategy: argument `sampling_strategy` must be one of {_STRATEGIES}. "
        f"Received: sampling_strategy={sampling_strategy!r}"
    )


class BootStrapper(Metric):
    """TorchMetrics' `BootStrapper`: `num_bootstraps` replicas of the base metric, each
    updated with a resample (with replacement) of every batch, drawn as TorchMetrics draws it
    (`_bootstrap_sampler`, on the CPU generator, one draw per replica and update). `compute`
    returns `mean`, `std`, `quantile` and `raw` over the replicas' values.

    The replicas' states are stacked along a first dimension of size `num_bootstraps` in one
    state per base state, so they sync, merge and reset as one metric. With
    `sampling_strategy="multinomial"` a resample keeps the batch's shape: the update is
    traceable. TorchMetrics' default `"poisson"` repeats each row a Poisson(1) number of
    times, a data-dependent count: its update reads it on the host (eager only; for Poisson
    weights in a compiled step use `torchtally.metrics.BootStrapper`).
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
        if sampling_strategy not in _STRATEGIES:
            raise ValueError(
                f"Expected argument ``sampling_strategy`` to be one of {_STRATEGIES} but "
                f"received {sampling_strategy}"
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
        # Each replica's own update count (TorchMetrics' `metrics[i].update_count`): a replica
        # skips a batch whose Poisson resample is empty, and `metrics[i].update` adds to one.
        self.register_state(
            "updates_per_replica", torch.zeros(num_bootstraps, dtype=torch.int64), False, "sum"
        )

    @property
    def metrics(self) -> tuple[_BootstrapReplica, ...]:
        """The replicas, as TorchMetrics' `BootStrapper.metrics` holds them: `metrics[i]` is a
        view of replica `i`'s rows of the stacked states (its `update`, `compute`, `reset`
        and `update_count` read and write them), not a separate copy of the base metric."""
        return tuple(_BootstrapReplica(self, index) for index in range(self.num_bootstraps))

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
        updated: list[int] = []  # 0 for a replica that skips the batch (TorchMetrics' count)
        for _ in range(self.num_bootstraps):
            index = _bootstrap_sampler(size, self.sampling_strategy).to(device)

            def pick(value: Any, index: Tensor = index) -> Any:
                return value.index_select(0, index) if isinstance(value, Tensor) else value

            if self.sampling_strategy == "poisson" and index.numel() == 0:
                # an empty resample leaves the replica as it is (TorchMetrics skips it)
                batches.append(
                    {
                        name: base.initial_state(name).reshape(getattr(base, name).shape)
                        for name in self._base_names
                    }
                )
                updated.append(0)
                continue
            updated.append(1)
            batches.append(base._batch(*map(pick, args), **{k: pick(v) for k, v in kwargs.items()}))
        out = {
            f"replica_{name}": torch.stack([batch[name] for batch in batches])
            for name in self._base_names
        }
        out["updates_per_replica"] = torch.tensor(updated, dtype=torch.int64, device=device)
        if self.error_kinds:  # the base metric's data errors, counted over the batch itself
            errors = base._batch(*args, **kwargs).get("_errors")
            if errors is not None:
                out["_errors"] = errors
        return out

    def _value(self, state: Mapping[str, Tensor]) -> dict[str, Tensor]:
        base: Metric = self._template
        counts = state.get("updates_per_replica")
        if counts is not None and not tracing(counts) and bool((counts == 0).any()):
            # TorchMetrics' replicas warn in its `compute`, each under the base metric's name,
            # when one has taken no batch since the last reset: its value is that of no data.
            warnings.warn(
                f"The ``compute`` method of metric {type(base).__name__} was called before the "
                "``update`` method which may lead to errors, as metric states have not yet been "
                "updated.",
                UserWarning,
                stacklevel=user_stacklevel(),
            )
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


class _BootstrapReplica:
    """Replica `index` of a `BootStrapper`, as TorchMetrics' `BootStrapper.metrics[index]`:
    its `update` folds a batch (the caller's, not resampled) into that replica's rows of the
    stacked states; `compute` is the base metric's value on them. A view: it holds no state
    of its own, so the bootstrapper's `compute`, `reset`, sync and `state_dict` see every
    write.
    """

    def __init__(self, owner: BootStrapper, index: int) -> None:
        self._owner, self._index = owner, index

    def __repr__(self) -> str:
        return f"BootstrapReplica({type(self._owner._template).__name__}, index={self._index})"

    @property
    def update_count(self) -> int:
        """How many batches this replica took since the last reset."""
        owner = self._owner
        owner.flush()
        return int(owner.updates_per_replica[self._index])

    def _rows(self) -> dict[str, Tensor]:
        owner = self._owner
        return {n: getattr(owner, f"replica_{n}")[self._index] for n in owner._base_names}

    def _written(self) -> None:
        """The owner's state is about to change outside its own `update`: held batches go in
        first and its cached value no longer holds."""
        self._owner.prepare_state_write()

    def update(self, *args: Any, **kwargs: Any) -> None:
        """Fold one batch into this replica, as the base metric's `update` folds it."""
        owner = self._owner
        base: Metric = owner._template
        batch = base._batch(*args, **kwargs)
        self._written()
        rows = self._rows()
        for name in owner._base_names:
            row, value = rows[name], batch[name].detach().to(rows[name].dtype)
            reduction = owner.state_reduction(f"replica_{name}")
            if reduction == "sum":
                row.add_(value)
            elif reduction == "max":
                row.copy_(torch.maximum(row, value))
            else:  # "min" ("cat" states are refused by the constructor)
                row.copy_(torch.minimum(row, value))
        owner.updates_per_replica[self._index] += 1
        errors = batch.get("_errors")
        if errors is not None:
            owner.record_errors(**cast(Mapping[str, Tensor], errors))

    def compute(self) -> Any:
        """The base metric's value on this replica's states (synced over the process group
        as the bootstrapper's `compute` syncs)."""
        owner = self._owner
        owner.flush()
        syncing = owner._should_sync()
        with owner.synced() if syncing else contextlib.nullcontext():
            owner.check_errors()
            return owner._template._value(self._rows())

    def reset(self) -> None:
        """Restore this replica's states to the base metric's initial values."""
        owner = self._owner
        base: Metric = owner._template
        self._written()
        for name, row in self._rows().items():
            row.copy_(base.initial_state(name).reshape(row.shape))
        owner.updates_per_replica[self._index] = 0
