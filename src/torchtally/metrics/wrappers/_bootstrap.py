"""`BootStrapper`: bootstrap confidence intervals of any weighted metric, vectorized over
replicas.

A Poisson bootstrap: replica r sees sample i with weight `w_ri ~ Poisson(1)` (how often a
resample of the data would draw it), so each replica is the metric over a resample. All
replicas live in one stacked copy of the wrapped metric's state (a leading dimension of size
`num_bootstraps`) and are updated by one `torch.func.vmap` of the metric's own `update`: one
pass over the batch with fixed shapes, instead of TorchMetrics' `num_bootstraps` deep copies
fed index-resampled batches (data-dependent shapes, a Python loop). Poisson weights are drawn
per sample and per update, so batches and ranks need no coordination: the replicas stay valid
resamples of everything seen, and they merge and sync like the wrapped metric's state.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast, final

import torch
from torch import Tensor, nn

from torchtally._errors import MetricValueError, check_int, raise_for_counts, tracing
from torchtally.metrics._base import Metric

__all__ = ["BootStrapper", "poisson_weights"]

_PREFIX = "replica"
_MASK64 = (1 << 64) - 1
#: Poisson(1) draws are capped here; P(X > 20) is about 1e-19.
_MAX_DRAW = 20


def _signed(value: int) -> int:
    value &= _MASK64
    return value - (1 << 64) if value >= 1 << 63 else value


def _shift_right(x: Tensor, bits: int) -> Tensor:
    """Logical right shift of int64 (torch's `>>` is arithmetic)."""
    return (x >> bits) & ((1 << (64 - bits)) - 1)


def _mix(x: Tensor) -> Tensor:
    """splitmix64's finalizer on int64 (wrapping multiplication): a bijective hash."""
    x = (x ^ _shift_right(x, 30)) * _signed(0xBF58476D1CE4E5B9)
    x = (x ^ _shift_right(x, 27)) * _signed(0x94D049BB133111EB)
    return x ^ _shift_right(x, 31)


def poisson_weights(seed: int, step: Tensor, replicas: int, rows: int) -> Tensor:
    """`(replicas, rows)` Poisson(1) draws from a counter-based generator: a hash of
    `(seed, step, replica, row)` mapped through the Poisson(1) inverse CDF.

    Pure tensor work with no RNG state, so the draws are the same eager, compiled, under CUDA
    graphs and on replay, and depend only on the seed, the update count and the position.
    """
    device = step.device
    replica = torch.arange(replicas, device=device, dtype=torch.int64)[:, None]
    row = torch.arange(rows, device=device, dtype=torch.int64)[None, :]
    key = _mix(step.to(torch.int64).reshape(()) + _signed(seed * 0x9E3779B97F4A7C15))
    x = _mix(key + replica * _signed(0xD1B54A32D192ED03) + row * _signed(0x8CB92BA72F3D8DD7))
    uniform = _shift_right(x, 11).to(torch.float64) * 2.0**-53
    k = torch.arange(_MAX_DRAW + 1, dtype=torch.float64, device=device)
    cdf = torch.cumsum(torch.exp(-1.0 - torch.lgamma(k + 1.0)), 0)
    return torch.searchsorted(cdf, uniform, right=True).clamp(max=_MAX_DRAW).to(torch.float64)


class _Method(nn.Module):
    """Runs one method of a metric (unwrapped from the base's bookkeeping) as `forward`, so
    `torch.func.functional_call` can substitute the metric's buffers with replica slices."""

    def __init__(self, metric: Metric, method: str) -> None:
        super().__init__()
        self.metric = metric
        # The name, looked up at each call: the unwrapped function itself is not the class
        # attribute of its name, so it could not be pickled by reference.
        self.method = method

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        plain = getattr(type(self.metric), self.method)
        call: Callable[..., Any] = getattr(plain, "__wrapped__", plain)
        return call(self.metric, *args, **kwargs)


class _ErrorCounts(nn.Module):
    """Reads a metric's data error counts (its `_errors`) as `forward`, for
    `torch.func.functional_call` over substituted states: a metric that holds its counts
    inside another state answers `_errors` from that state, so the wrappers ask the metric
    instead of reading one state by name."""

    def __init__(self, metric: Metric) -> None:
        super().__init__()
        self.metric = metric

    def forward(self) -> Tensor:
        counts: Tensor = self.metric._errors
        return counts


def wrapped_error_counts(metric: Metric, states: dict[str, Tensor]) -> Tensor:
    """The data errors by kind `metric` reports when it holds `states` (named
    "metric.<state>", as `_Method` takes them)."""
    return cast(Tensor, torch.func.functional_call(_ErrorCounts(metric), states, ()))


@final
class BootStrapper(Metric):
    """Bootstrapped mean, standard deviation and quantiles of a metric (TorchMetrics'
    `BootStrapper` with `sampling_strategy="poisson"`), all replicas in one vectorized update.

    The wrapped metric must take per-sample weights in `update` (as `weights=`, or the
    keyword named by `weight_arg`), one per entry of the first argument's first dimension,
    that act as frequency weights (a weight of 2 counts the sample twice), keep no `cat` state,
    and have an `update` that `torch.func.vmap` can vectorize. (`AccuracyMetric` follows
    cstorch, whose denominator counts positive weights: bootstrap a `MeanMetric` of the
    correctness instead.) Its state is stacked `num_bootstraps` times; memory grows with
    that, time mostly does not (one vmapped update).

    Args:
        metric: The metric to bootstrap (a template: it is not updated itself).
        num_bootstraps: Replicas (>= 2).
        mean: Report the mean over replicas.
        std: Report the standard deviation (unbiased, as TorchMetrics).
        quantile: Optional quantile(s) in [0, 1] to report.
        raw: Report every replica's value.
        weight_arg: The keyword of the wrapped metric's `update` that takes sample weights.
        seed: Seed of the Poisson draws. They come from a counter-based hash of (seed, rank,
            update count, replica, sample position): reproducible, identical eager and
            compiled, and independent across torch.distributed ranks (the rank is mixed in).
        name: Metric name; defaults to "bootstrap_<metric name>".

    Example:
        >>> from torchtally.metrics import MeanMetric
        >>> boot = BootStrapper(MeanMetric(), 50, quantile=(0.05, 0.95), weight_arg="weight")
        >>> correct = torch.tensor([1.0, 1.0, 0.0, 1.0] * 25)  # accuracy 0.75 over 100
        >>> out = boot(correct)
        >>> sorted(out)
        ['mean', 'quantile', 'std']
        >>> 0.7 < float(out["mean"]) < 0.8 and 0.02 < float(out["std"]) < 0.07
        True
    """

    unit = ""
    higher_is_better = None
    input_kind = "wrapped"
    #: The wrapped metric (set past `nn.Module.__setattr__`: it is not a submodule).
    _template: Metric

    def __init__(
        self,
        metric: Metric,
        num_bootstraps: int = 10,
        mean: bool = True,
        std: bool = True,
        quantile: float | Sequence[float] | None = None,
        raw: bool = False,
        weight_arg: str = "weights",
        seed: int = 0,
        name: str | None = None,
    ) -> None:
        if not isinstance(metric, Metric):
            raise TypeError(
                "Argument `metric` must be a torchtally Metric. "
                f"Received: metric={type(metric).__name__}"
            )
        check_int("num_bootstraps", num_bootstraps, 2)
        levels: tuple[float, ...] | None = None
        if quantile is not None:
            levels = tuple(float(q) for q in torch.as_tensor(quantile).reshape(-1).tolist())
            if not levels or any(not 0 <= q <= 1 for q in levels):
                raise ValueError(
                    "Argument `quantile` must be a float or floats in [0, 1]. "
                    f"Received: quantile={quantile!r}"
                )
        cat_states = [n for n, _, r in metric.states() if r == "cat"]
        if cat_states:
            raise ValueError(
                "Argument `metric` must keep no 'cat' (buffer) state: each replica would need "
                f"its own copy of the samples. Received: {metric.name} with cat states "
                f"{cat_states}; use its binned/constant-memory mode."
            )
        super().__init__(name if name is not None else f"bootstrap_{metric.name}")
        # A template, deliberately not a submodule: its own state is never used.
        object.__setattr__(self, "_template", metric)
        self.num_bootstraps = num_bootstraps
        self.report_mean, self.report_std, self.report_raw = mean, std, raw
        self.quantile = quantile
        self._levels = levels
        self.weight_arg = weight_arg
        check_int("seed", seed, 0)
        self.seed = seed
        self.error_kinds = metric.error_kinds
        self._names: list[str] = []
        for state, tensor, reduction in metric.states():
            stacked = tensor.detach().unsqueeze(0).repeat(num_bootstraps, *([1] * tensor.dim()))
            registered = (
                f"{_PREFIX}_{state.lstrip('_')}" if state != "_errors" else "_replica_errors"
            )
            if registered.startswith("_"):
                self.register_internal_state(registered, stacked, reduction)
            else:
                self.register_state(registered, stacked, reduction=reduction)
            self._names.append(state)
        object.__setattr__(self, "_update_call", _Method(metric, "update"))
        object.__setattr__(self, "_compute_call", _Method(metric, "compute"))

    def _stacked(self) -> dict[str, Tensor]:
        out: dict[str, Tensor] = {}
        for state in self._names:
            registered = (
                f"{_PREFIX}_{state.lstrip('_')}" if state != "_errors" else "_replica_errors"
            )
            out[f"metric.{state}"] = self._buffers[registered]  # type: ignore[assignment]
        return out

    def update(self, *args: Any, **kwargs: Any) -> None:
        """Update every replica with the batch, each under its own Poisson(1) sample weights
        (times any weights passed in `kwargs[weight_arg]`)."""
        if not args or not isinstance(args[0], Tensor) or args[0].dim() == 0:
            raise ValueError(
                "The first argument of `update` must be a tensor whose first dimension runs "
                "over samples (the bootstrap draws a weight per sample)."
            )
        rows = args[0].shape[0]
        stacked = self._stacked()
        device = next(iter(stacked.values())).device
        rank = 0
        if torch.distributed.is_available() and torch.distributed.is_initialized():
            rank = torch.distributed.get_rank()
        step = self.update_counter
        seed = self.seed * 1_000_003 + rank
        draws = poisson_weights(seed, step, self.num_bootstraps, rows).to(device)
        given = kwargs.pop(self.weight_arg, None)
        if given is not None:
            draws = draws * given.reshape(1, -1).to(draws.dtype)
        call = self._update_call
        weight_arg = self.weight_arg

        def one(states: dict[str, Tensor], weights: Tensor) -> Tensor:
            torch.func.functional_call(call, states, args, {**kwargs, weight_arg: weights})
            return weights.sum()

        try:
            torch.func.vmap(one, in_dims=(0, 0))(stacked, draws)
        except RuntimeError as error:
            if "vmap" not in str(error):
                raise
            raise TypeError(
                f"`{type(self._template).__name__}.update` cannot be vectorized over "
                "bootstrap replicas with torch.func.vmap (it likely writes in place into a "
                f"tensor it creates, e.g. zeros(...).scatter_add_): {error}"
            ) from error

    def replicas(self) -> Tensor:
        """Every replica's value, stacked along a first dimension of size `num_bootstraps`."""
        call = self._compute_call
        replicas = torch.func.vmap(lambda states: torch.func.functional_call(call, states, ()))
        return cast(Tensor, replicas(self._stacked()))

    def compute(self) -> dict[str, Tensor]:
        values = self.replicas()
        if self._template.check_values and not tracing(values) and values.is_floating_point():
            # Inputs were checked already: a NaN replica drew no sample (a Poisson resample of
            # very few samples can be empty), and would silently turn every statistic to NaN.
            # All of them NaN is the value of no data at all, as the wrapped metric's own.
            empty = int(values.reshape(values.shape[0], -1).isnan().all(-1).sum())
            if 0 < empty < self.num_bootstraps:
                raise MetricValueError(
                    f"`{self.name}`: {empty} of {self.num_bootstraps} bootstrap replicas have no "
                    "value (NaN): their Poisson resample drew no sample (likely when very few "
                    "samples were seen; the first dimension of update's first argument runs "
                    "over samples), or the metric is undefined on it. Update with more samples."
                )
        out: dict[str, Tensor] = {}
        if self.report_mean:
            out["mean"] = values.mean(0)
        if self.report_std:
            out["std"] = values.std(0)
        if self._levels is not None:
            levels = torch.tensor(self._levels, dtype=values.dtype, device=values.device)
            q = torch.quantile(values, levels, dim=0)
            out["quantile"] = q[0] if isinstance(self.quantile, float) else q
        if self.report_raw:
            out["raw"] = values
        # The statistics are taken at the replicas' precision; the values come back in the dtype
        # the wrapped metric itself returns (cstorch metrics return float32).
        result_dtype = self._template.result_dtype
        if isinstance(result_dtype, torch.dtype):
            out = {key: value.to(result_dtype) for key, value in out.items()}
        return out

    def check_errors(self) -> None:
        """Raise the wrapped metric's data errors (every replica counts the same ones)."""
        errors: Tensor = self._buffers["_replica_errors"]  # type: ignore[assignment]
        if not self.error_kinds or tracing(errors):
            return
        first = {name: stacked[0] for name, stacked in self._stacked().items()}
        counts = wrapped_error_counts(self._template, first)
        raise_for_counts(self.name, tuple(self.error_kinds.values()), counts)

    def extra_repr(self) -> str:
        return f"name={self.name!r}, metric={type(self._template).__name__}, num_bootstraps={self.num_bootstraps}"
