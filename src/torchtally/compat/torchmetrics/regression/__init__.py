"""TorchMetrics 1.9's regression metrics on torchtally: sums in float64, one summed sync.

Every metric here is a function of a few running sums (of errors, squares, products and counts),
kept as preallocated float64 states. TorchMetrics' list states (CosineSimilarity,
`reduction="none"`) and its Welford merge (PearsonCorrCoef) become plain sums, so the state
syncs with one collective and never grows. Values are returned in the default float dtype, as
TorchMetrics' float32 states do.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any

import torch
from torch import Tensor

from torchtally._errors import ErrorKinds, tracing, user_stacklevel
from torchtally.compat.torchmetrics._base import Metric
from torchtally.compat.torchmetrics.utilities.exceptions import TorchMetricsUserError
from torchtally.functional.regression._crps import crps_rows
from torchtally.functional.regression._divergence import js_divergence_rows, kl_divergence_rows
from torchtally.functional.regression._kendall import (
    KENDALL_ALTERNATIVES,
    KENDALL_VARIANTS,
    kendall_p_value,
    kendall_statistics,
    kendall_tau_from_statistics,
)

__all__ = [
    "ConcordanceCorrCoef",
    "ContinuousRankedProbabilityScore",
    "CosineSimilarity",
    "CriticalSuccessIndex",
    "ExplainedVariance",
    "JensenShannonDivergence",
    "KLDivergence",
    "KendallRankCorrCoef",
    "LogCoshError",
    "MeanAbsoluteError",
    "MeanAbsolutePercentageError",
    "MeanSquaredError",
    "MeanSquaredLogError",
    "MinkowskiDistance",
    "NormalizedRootMeanSquaredError",
    "PearsonCorrCoef",
    "R2Score",
    "RelativeSquaredError",
    "SpearmanCorrCoef",
    "SymmetricMeanAbsolutePercentageError",
    "TweedieDevianceScore",
    "WeightedMeanAbsolutePercentageError",
]

_EPS = 1.17e-06  # TorchMetrics' floor on percentage-error denominators


def _check_pair(preds: Any, target: Any) -> None:
    if not isinstance(preds, Tensor) or not isinstance(target, Tensor):
        raise TypeError(
            "Arguments `preds` and `target` must be tensors (order: update(preds, target)). "
            f"Received: preds={type(preds).__name__}, target={type(target).__name__}"
        )
    if preds.shape != target.shape:
        # TorchMetrics' exception and words (its users and tests match them)
        raise RuntimeError(
            "Predictions and targets are expected to have the same shape, but got "
            f"{preds.shape} and {target.shape}."
        )


def _check_outputs(argument: str, value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(
            f"Argument `{argument}` must be an integer >= 1. Received: {argument}={value!r}"
        )
    return value


def _check_one_or_two_dims(preds: Tensor, target: Tensor) -> None:
    if preds.ndim > 2 or target.ndim > 2:
        raise ValueError(
            "Expected both predictions and target to be either 1- or 2-dimensional tensors, "
            f"but got {target.ndim} and {preds.ndim}."
        )


def _check_r2_dims(preds: Tensor) -> None:
    """TorchMetrics' check of R2Score and RelativeSquaredError (their shared update)."""
    if preds.ndim > 2:
        raise ValueError(
            "Expected both prediction and target to be 1D or 2D tensors, but received tensors "
            f"with dimension {preds.shape}"
        )


def _outputs_mismatch(num_outputs: int, preds: Tensor) -> ValueError:
    width = preds.shape[1] if preds.ndim > 1 else 1
    return ValueError(
        "Expected argument `num_outputs` to match the second dimension of input, but got "
        f"{num_outputs} and {width}."
    )


def _columns(
    preds: Tensor, target: Tensor, num_outputs: int, per_column: bool = False
) -> tuple[Tensor, Tensor]:
    """Float64 `(N, num_outputs)` views of the inputs (a single output is flattened, unless
    `per_column`: then TorchMetrics reads a 2-D input as several outputs, so it must be declared)."""
    _check_pair(preds, target)
    if per_column:
        _check_one_or_two_dims(preds, target)
        if num_outputs == 1 and preds.dim() == 2 and preds.shape[1] != 1:
            raise _outputs_mismatch(num_outputs, preds)
    if num_outputs == 1:
        return preds.reshape(-1, 1).double(), target.reshape(-1, 1).double()
    if preds.dim() != 2 or preds.shape[1] != num_outputs:
        raise _outputs_mismatch(num_outputs, preds)
    return preds.double(), target.double()


def _count(like: Tensor, count: int) -> Tensor:
    return torch.full((), float(count), dtype=torch.float64, device=like.device)


#: The dtype values are returned in while a function of `torchmetrics.functional` evaluates a
#: class on one batch (TorchMetrics' functions return their inputs' floating dtype, its classes
#: the default dtype of their float32 states); None: the default dtype.
_RESULT_DTYPE: ContextVar[torch.dtype | None] = ContextVar("_RESULT_DTYPE", default=None)


def _out(value: Tensor, num_outputs: int = 1) -> Tensor:
    value = value.to(_RESULT_DTYPE.get() or torch.get_default_dtype())
    return value.reshape(()) if num_outputs == 1 and value.numel() == 1 else value


class _SumsMetric(Metric):
    """A metric whose states are float64 running sums registered from `_shapes`."""

    is_differentiable = True
    num_outputs: int

    def _register_sums(self, shapes: Mapping[str, tuple[int, ...]]) -> None:
        for name, shape in shapes.items():
            self.register_state(name, torch.zeros(shape, dtype=torch.float64), False, "sum")

    # ------------------------------------------------- outputs read from the first batch
    #: The sum states with one entry per output (reallocated when the width is read).
    _per_output_states: tuple[str, ...] = ()

    def _declare_outputs(self, num_outputs: int | None) -> int:
        """The width to allocate now: `num_outputs` when given (preallocated, and inputs of
        another width refused), else 1 until a batch's shape says otherwise (TorchMetrics'
        classes without `num_outputs` take their width from the first update)."""
        self._declared_outputs = num_outputs
        return 1 if num_outputs is None else _check_outputs("num_outputs", num_outputs)

    def _width_from(self, preds: Tensor) -> int:
        """The number of outputs for this batch. An undeclared width follows the first batch
        after construction or `reset`: the per-output states are reallocated from its shape
        (a shape, not a value: nothing is read from the device)."""
        width = int(preds.shape[1]) if preds.ndim == 2 else 1
        if self._declared_outputs is not None or width == self.num_outputs:
            return int(self.num_outputs)
        if tracing(preds):
            raise ValueError(
                f"Argument `num_outputs` must be given to trace {type(self).__name__} with "
                f"inputs of {width} outputs (its states are allocated for "
                f"{self.num_outputs}). Received: num_outputs=None"
            )
        if self.update_count:  # the states hold batches of the other width (eager: a count read)
            raise _outputs_mismatch(int(self.num_outputs), preds)
        self.num_outputs = width
        self._register_sums({name: (width,) for name in self._per_output_states})
        return width


class MeanSquaredError(_SumsMetric):
    """TorchMetrics' `MeanSquaredError` (`squared=False` gives the RMSE)."""

    higher_is_better = False
    plot_lower_bound = 0.0

    def __init__(self, squared: bool = True, num_outputs: int = 1, **kwargs: Any) -> None:
        if not isinstance(squared, bool):
            raise ValueError(f"Expected argument `squared` to be a boolean but got {squared}")
        super().__init__(**kwargs)
        self.squared, self.num_outputs = squared, _check_outputs("num_outputs", num_outputs)
        self._register_sums({"sum_squared_error": (num_outputs,), "total": ()})

    def _batch(self, preds: Tensor, target: Tensor) -> dict[str, Tensor]:
        p, t = _columns(preds, target, self.num_outputs)
        return {"sum_squared_error": ((p - t) ** 2).sum(0), "total": _count(p, p.shape[0])}

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        mse = state["sum_squared_error"] / state["total"]
        return _out(mse if self.squared else mse.sqrt(), self.num_outputs)


class MeanAbsoluteError(_SumsMetric):
    """TorchMetrics' `MeanAbsoluteError`."""

    higher_is_better = False
    plot_lower_bound = 0.0

    def __init__(self, num_outputs: int = 1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.num_outputs = _check_outputs("num_outputs", num_outputs)
        self._register_sums({"sum_abs_error": (num_outputs,), "total": ()})

    def _batch(self, preds: Tensor, target: Tensor) -> dict[str, Tensor]:
        p, t = _columns(preds, target, self.num_outputs)
        return {"sum_abs_error": (p - t).abs().sum(0), "total": _count(p, p.shape[0])}

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        return _out(state["sum_abs_error"] / state["total"], self.num_outputs)


class MeanAbsolutePercentageError(_SumsMetric):
    """TorchMetrics' `MeanAbsolutePercentageError`: |p - t| / max(|t|, 1.17e-6), averaged."""

    higher_is_better = False
    plot_lower_bound = 0.0

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._register_sums({"sum_abs_per_error": (), "total": ()})

    def _batch(self, preds: Tensor, target: Tensor) -> dict[str, Tensor]:
        _check_pair(preds, target)
        p, t = preds.double(), target.double()
        error = (p - t).abs() / t.abs().clamp(min=_EPS)
        return {"sum_abs_per_error": error.sum(), "total": _count(t, t.numel())}

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        return _out(state["sum_abs_per_error"] / state["total"])


class SymmetricMeanAbsolutePercentageError(_SumsMetric):
    """TorchMetrics' `SymmetricMeanAbsolutePercentageError`: 2|p - t| / max(|t| + |p|, 1.17e-6)."""

    higher_is_better = False
    plot_lower_bound = 0.0

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._register_sums({"sum_abs_per_error": (), "total": ()})

    def _batch(self, preds: Tensor, target: Tensor) -> dict[str, Tensor]:
        _check_pair(preds, target)
        p, t = preds.double(), target.double()
        error = 2 * (p - t).abs() / (t.abs() + p.abs()).clamp(min=_EPS)
        return {"sum_abs_per_error": error.sum(), "total": _count(t, t.numel())}

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        return _out(state["sum_abs_per_error"] / state["total"])


_MULTIOUTPUT = ("raw_values", "uniform_average", "variance_weighted")


def _check_multioutput(multioutput: Any) -> str:
    if multioutput not in _MULTIOUTPUT:
        raise ValueError(
            f"Argument `multioutput` must be one of {_MULTIOUTPUT}. Received: multioutput={multioutput!r}"
        )
    return str(multioutput)


class R2Score(_SumsMetric):
    """TorchMetrics' `R2Score` (`adjusted`, `multioutput`).

    The number of outputs comes from the first batch's shape, as TorchMetrics' (a 2-D input
    `(N, D)` has D). `num_outputs` (not TorchMetrics') preallocates the states for that width
    instead, and then refuses inputs of another.
    """

    higher_is_better = True
    _per_output_states = ("sum_squared_obs", "sum_obs", "rss")

    def __init__(
        self,
        adjusted: int = 0,
        multioutput: str = "uniform_average",
        num_outputs: int | None = None,
        **kwargs: Any,
    ) -> None:
        if not isinstance(adjusted, int) or isinstance(adjusted, bool) or adjusted < 0:
            raise ValueError("`adjusted` parameter should be an integer larger or equal to 0.")
        if multioutput not in _MULTIOUTPUT:
            raise ValueError(
                "Invalid input to argument `multioutput`. Choose one of the following: "
                f"{_MULTIOUTPUT}"
            )
        super().__init__(**kwargs)
        self.adjusted, self.multioutput = adjusted, str(multioutput)
        self.num_outputs = width = self._declare_outputs(num_outputs)
        self._register_sums(
            {"sum_squared_obs": (width,), "sum_obs": (width,), "rss": (width,), "total": ()}
        )

    def _batch(self, preds: Tensor, target: Tensor) -> dict[str, Tensor]:
        _check_pair(preds, target)
        _check_r2_dims(preds)
        p, t = _columns(preds, target, self._width_from(preds), per_column=True)
        return {
            "sum_squared_obs": (t * t).sum(0),
            "sum_obs": t.sum(0),
            "rss": ((t - p) ** 2).sum(0),
            "total": _count(t, t.shape[0]),
        }

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        n = state["total"]
        if not tracing(n):
            # TorchMetrics' checks and warnings, on the count it reads too
            samples = int(n)
            if samples < 2:
                raise ValueError("Needs at least two samples to calculate r2 score.")
            if self.adjusted > samples - 1:
                warnings.warn(
                    "More independent regressions than data points in adjusted r2 score. "
                    "Falls back to standard r2 score.",
                    UserWarning,
                    stacklevel=user_stacklevel(),
                )
            elif self.adjusted and self.adjusted == samples - 1:
                warnings.warn(
                    "Division by zero in adjusted r2 score. Falls back to standard r2 score.",
                    UserWarning,
                    stacklevel=user_stacklevel(),
                )
        rss = state["rss"]
        tss = state["sum_squared_obs"] - state["sum_obs"] * state["sum_obs"] / n
        # TorchMetrics' handling of near-constant targets and perfect fits (atol 1e-4).
        has_rss, has_tss = rss.abs() > 1e-4, tss.abs() > 1e-4
        raw = torch.where(has_rss & has_tss, 1 - rss / torch.where(has_tss, tss, 1.0), 1.0)
        raw = torch.where(has_rss & ~has_tss, 0.0, raw)
        if self.multioutput == "raw_values":
            r2 = raw
        elif self.multioutput == "uniform_average":
            r2 = raw.mean()
        else:
            r2 = (tss / tss.sum() * raw).sum()
        if self.adjusted:
            # TorchMetrics falls back to plain r2 when n - 1 <= adjusted.
            adjusted = 1 - (1 - r2) * (n - 1) / (n - self.adjusted - 1)
            r2 = torch.where(n - 1 > self.adjusted, adjusted, r2)
        return _out(r2, self.num_outputs if self.multioutput == "raw_values" else 1)


class ExplainedVariance(_SumsMetric):
    """TorchMetrics' `ExplainedVariance`: the number of outputs comes from the first batch's
    shape, as TorchMetrics'; `num_outputs` (not TorchMetrics') preallocates that width."""

    higher_is_better = True
    _per_output_states = ("sum_error", "sum_squared_error", "sum_target", "sum_squared_target")

    def __init__(
        self, multioutput: str = "uniform_average", num_outputs: int | None = None, **kwargs: Any
    ) -> None:
        if multioutput not in _MULTIOUTPUT:
            raise ValueError(
                "Invalid input to argument `multioutput`. Choose one of the following: "
                f"{_MULTIOUTPUT}"
            )
        super().__init__(**kwargs)
        self.multioutput = str(multioutput)
        self.num_outputs = width = self._declare_outputs(num_outputs)
        self._register_sums({name: (width,) for name in self._per_output_states})
        self._register_sums({"num_obs": ()})

    def _batch(self, preds: Tensor, target: Tensor) -> dict[str, Tensor]:
        _check_pair(preds, target)
        p, t = _columns(preds, target, self._width_from(preds), per_column=True)
        diff = t - p
        return {
            "sum_error": diff.sum(0),
            "sum_squared_error": (diff * diff).sum(0),
            "sum_target": t.sum(0),
            "sum_squared_target": (t * t).sum(0),
            "num_obs": _count(t, t.shape[0]),
        }

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        n = state["num_obs"]
        diff_avg = state["sum_error"] / n
        numerator = state["sum_squared_error"] / n - diff_avg * diff_avg
        target_avg = state["sum_target"] / n
        denominator = state["sum_squared_target"] / n - target_avg * target_avg
        has_num, has_den = numerator != 0, denominator != 0
        scores = torch.where(
            has_num & has_den, 1 - numerator / torch.where(has_den, denominator, 1.0), 1.0
        )
        scores = torch.where(has_num & ~has_den, 0.0, scores)
        if self.multioutput == "raw_values":
            return _out(scores, self.num_outputs)
        if self.multioutput == "uniform_average":
            return _out(scores.mean())
        return _out((denominator / denominator.sum() * scores).sum())


class PearsonCorrCoef(_SumsMetric):
    """TorchMetrics' `PearsonCorrCoef` from float64 moment sums (NaN for a constant input)."""

    higher_is_better = True

    def __init__(self, num_outputs: int = 1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.num_outputs = _check_outputs("num_outputs", num_outputs)
        width = (num_outputs,)
        self._register_sums(
            {"sx": width, "sy": width, "sxx": width, "syy": width, "sxy": width, "n": ()}
        )

    def _batch(self, preds: Tensor, target: Tensor) -> dict[str, Tensor]:
        p, t = _columns(preds, target, self.num_outputs, per_column=True)
        return {
            "sx": p.sum(0),
            "sy": t.sum(0),
            "sxx": (p * p).sum(0),
            "syy": (t * t).sum(0),
            "sxy": (p * t).sum(0),
            "n": _count(p, p.shape[0]),
        }

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        n = state["n"]
        cov = state["sxy"] - state["sx"] * state["sy"] / n
        var_x = state["sxx"] - state["sx"] ** 2 / n
        var_y = state["syy"] - state["sy"] ** 2 / n
        corr = (cov / (var_x * var_y).sqrt()).clamp(-1.0, 1.0)
        return _out(corr, self.num_outputs)


_REDUCTIONS = ("mean", "sum")


def _check_reduction(reduction: Any) -> str:
    if reduction not in _REDUCTIONS:
        raise ValueError(
            f"Argument `reduction` must be one of {_REDUCTIONS} (per-sample values, 'none', would "
            f"need an unbounded state). Received: reduction={reduction!r}"
        )
    return str(reduction)


def _check_2d(preds: Tensor, target: Tensor) -> None:
    """TorchMetrics' check of CosineSimilarity's inputs, with its words."""
    _check_pair(preds, target)
    if preds.ndim != 2:
        raise ValueError(
            "Expected input to cosine similarity to be 2D tensors of shape `[N,D]` where `N` is "
            "the number of samples and `D` is the number of dimensions, but got tensor of shape "
            f"{preds.shape}"
        )


def _check_distributions(p: Tensor, q: Tensor) -> None:
    """TorchMetrics' check of the KL and Jensen-Shannon divergences' inputs, with its words."""
    _check_pair(p, q)
    if p.ndim != 2 or q.ndim != 2:
        raise ValueError(
            f"Expected both p and q distribution to be 2D but got {p.ndim} and {q.ndim} respectively"
        )


class CosineSimilarity(_SumsMetric):
    """TorchMetrics' `CosineSimilarity` over rows of `(N, D)` inputs, summed or averaged."""

    higher_is_better = True

    def __init__(self, reduction: str = "sum", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.reduction = _check_reduction(reduction)
        self._register_sums({"similarity": (), "total": ()})

    def _batch(self, preds: Tensor, target: Tensor) -> dict[str, Tensor]:
        _check_2d(preds, target)
        p, t = preds.float(), target.float()  # TorchMetrics computes in float32
        similarity = (p * t).sum(-1) / (p.norm(dim=-1) * t.norm(dim=-1))
        return {"similarity": similarity.double().sum(), "total": _count(p, p.shape[0])}

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        total = state["similarity"]
        return _out(total if self.reduction == "sum" else total / state["total"])


def _check_log_prob(log_prob: Any) -> bool:
    if not isinstance(log_prob, bool):
        raise TypeError(f"Expected argument `log_prob` to be bool but got {log_prob}")
    return log_prob


class KLDivergence(_SumsMetric):
    """TorchMetrics' `KLDivergence(p || q)` over rows of `(N, D)`; probabilities are normalized
    per row, `log_prob=True` takes log-probabilities (the maths:
    `torchtally.functional.regression.kl_divergence_rows`)."""

    higher_is_better = False
    plot_lower_bound = 0.0

    def __init__(self, log_prob: bool = False, reduction: str = "mean", **kwargs: Any) -> None:
        log_prob = _check_log_prob(log_prob)
        super().__init__(**kwargs)
        self.log_prob, self.reduction = log_prob, _check_reduction(reduction)
        self._register_sums({"measures": (), "total": ()})

    def _batch(self, p: Tensor, q: Tensor) -> dict[str, Tensor]:
        _check_distributions(p, q)
        measures = kl_divergence_rows(p, q, self.log_prob)
        return {"measures": measures.sum(), "total": _count(p, p.shape[0])}

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        total = state["measures"]
        return _out(total if self.reduction == "sum" else total / state["total"])


class JensenShannonDivergence(KLDivergence):
    """TorchMetrics' `JensenShannonDivergence` over rows of `(N, D)` distributions:
    `KL(p || m) / 2 + KL(q || m) / 2` with `m = (p + q) / 2`, summed or averaged over rows
    (the maths: `torchtally.functional.regression.js_divergence_rows`)."""

    plot_upper_bound = math.log(2.0)

    def _batch(self, p: Tensor, q: Tensor) -> dict[str, Tensor]:
        _check_distributions(p, q)
        measures = js_divergence_rows(p, q, self.log_prob)
        return {"measures": measures.sum(), "total": _count(p, p.shape[0])}


def _check_ensemble(preds: Tensor, target: Tensor) -> None:
    """TorchMetrics' checks of an ensemble forecast `(N, m)` against `(N,)` targets."""
    if not isinstance(preds, Tensor) or not isinstance(target, Tensor):
        raise TypeError(
            "Arguments `preds` and `target` must be tensors. Received: "
            f"preds={type(preds).__name__}, target={type(target).__name__}"
        )
    if preds.ndim != 2:
        raise ValueError(
            "Argument `preds` must be 2-D (batch_size, ensemble_members). Received: preds of "
            f"shape {tuple(preds.shape)}"
        )
    _check_pair(preds[:, 0], target)
    if preds.shape[1] < 2:
        raise ValueError(
            f"CRPS requires at least 2 ensemble members, but you provided {preds.shape}."
        )


class ContinuousRankedProbabilityScore(_SumsMetric):
    """TorchMetrics' `ContinuousRankedProbabilityScore`: the mean CRPS of ensemble forecasts
    `(N, m)` against targets `(N,)` (the maths: `torchtally.functional.regression.crps_rows`)."""

    is_differentiable = False
    higher_is_better = False
    plot_lower_bound = 0.0

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._register_sums({"score": (), "total": ()})

    def _batch(self, preds: Tensor, target: Tensor) -> dict[str, Tensor]:
        _check_ensemble(preds, target)
        return {"score": crps_rows(target, preds).sum(), "total": _count(preds, preds.shape[0])}

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        return _out(state["score"] / state["total"])


def _average_ranks(values: Tensor, valid: Tensor) -> Tensor:
    """1-based ranks per column of `(M, K)` values, ties sharing their mean rank; rows with
    `valid` False sort last and rank among themselves (fixed shapes, no host sync)."""
    rows = values.shape[0]
    keyed = torch.where(valid.unsqueeze(1), values, float("inf"))
    ordered, order = torch.sort(keyed, dim=0, stable=True)
    position = torch.arange(1, rows + 1, dtype=torch.float64, device=values.device)
    position = position.unsqueeze(1).expand_as(ordered)
    new_group = torch.ones_like(ordered, dtype=torch.bool)
    new_group[1:] = ordered[1:] != ordered[:-1]
    group = torch.cumsum(new_group.long(), 0) - 1
    rank_sum = torch.zeros_like(ordered).scatter_add_(0, group, position)
    size = torch.zeros_like(ordered).scatter_add_(0, group, torch.ones_like(ordered))
    mean_rank = (rank_sum / size.clamp(min=1.0)).gather(0, group)
    return torch.empty_like(mean_rank).scatter_(0, order, mean_rank)


class SpearmanCorrCoef(Metric):
    """TorchMetrics' `SpearmanCorrCoef`: Pearson's correlation of the average ranks (ties
    share their mean rank), `cov / (std_p * std_t + 1e-6)` clamped to [-1, 1] as TorchMetrics.

    Ranks need every value, so the pairs go into a buffer preallocated at construction:
    `capacity` rows (default 65,536) of `num_outputs` columns, 17 bytes per cell. The update is
    an `index_copy_` and the compute ranks the whole buffer with sorts and scatters (unfilled
    rows masked): both traceable. More pairs than `capacity` raise at compute.
    """

    error_kinds = ErrorKinds()
    is_differentiable = False
    higher_is_better = True
    _cat_whole_buffers = True
    cat_overflow_terms = ("pairs", "")

    def __init__(self, num_outputs: int = 1, capacity: int = 1 << 16, **kwargs: Any) -> None:
        self.num_outputs = _check_outputs("num_outputs", num_outputs)
        self.capacity = _check_outputs("capacity", capacity)
        super().__init__(**kwargs)
        shape = (capacity, num_outputs)
        self.register_state("preds", torch.zeros(shape, dtype=torch.float64), False, "cat")
        self.register_state("target", torch.zeros(shape, dtype=torch.float64), False, "cat")
        self.register_state("valid", torch.zeros(capacity, dtype=torch.bool), False, "cat")

    def _batch(self, preds: Tensor, target: Tensor) -> dict[str, Tensor]:
        _check_pair(preds, target)
        if not preds.is_floating_point() or not target.is_floating_point():
            raise TypeError(
                "Expected `preds` and `target` both to be floating point tensors, but got "
                f"{preds.dtype} and {target.dtype}"
            )
        p, t = _columns(preds, target, self.num_outputs, per_column=True)
        return {"preds": p, "target": t, "valid": torch.ones_like(p[:, 0], dtype=torch.bool)}

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        valid = state["valid"]
        weight = valid.to(torch.float64).unsqueeze(1)
        count = weight.sum(0)
        ranks_p = _average_ranks(state["preds"], valid)
        ranks_t = _average_ranks(state["target"], valid)
        diff_p = (ranks_p - (ranks_p * weight).sum(0) / count) * weight
        diff_t = (ranks_t - (ranks_t * weight).sum(0) / count) * weight
        cov = (diff_p * diff_t).sum(0) / count
        std_p = (diff_p.square().sum(0) / count).sqrt()
        std_t = (diff_t.square().sum(0) / count).sqrt()
        return _out((cov / (std_p * std_t + 1e-6)).clamp(-1.0, 1.0), self.num_outputs)


class KendallRankCorrCoef(Metric):
    """TorchMetrics' `KendallRankCorrCoef`: Kendall's tau (`variant` "a", "b" or "c") and,
    with `t_test=True`, the asymptotic p-value of the test `alternative` ("two-sided", "less",
    "greater"); returns `(tau, p_value)` then.

    Pairs need the whole sample, so it goes into a buffer preallocated at construction, as
    `SpearmanCorrCoef`'s: `capacity` rows (default 65,536) of `num_outputs` columns; more pairs
    raise at compute. The compute counts pairs in O(n log² n) with sorts and batched searches
    (`torchtally.functional.regression.kendall_statistics`): traceable, no host read.
    """

    error_kinds = ErrorKinds()
    is_differentiable = False
    higher_is_better = None
    full_state_update = True
    plot_lower_bound = 0.0
    plot_upper_bound = 1.0
    _cat_whole_buffers = True
    cat_overflow_terms = ("pairs", "")

    def __init__(
        self,
        variant: str = "b",
        t_test: bool = False,
        alternative: str | None = "two-sided",
        num_outputs: int = 1,
        capacity: int = 1 << 16,
        **kwargs: Any,
    ) -> None:
        if not isinstance(t_test, bool):
            raise ValueError(
                f"Argument `t_test` is expected to be of a type `bool`, but got {type(t_test)}."
            )
        if t_test and alternative is None:
            raise ValueError("Argument `alternative` is required if `t_test=True` but got `None`.")
        if variant not in KENDALL_VARIANTS:
            raise ValueError(
                f"Invalid variant: expected one of {list(KENDALL_VARIANTS)}, but got {variant}."
            )
        if t_test and alternative not in KENDALL_ALTERNATIVES:
            raise ValueError(
                f"Invalid alternative: expected one of {list(KENDALL_ALTERNATIVES)}, but got "
                f"{alternative}."
            )
        self.num_outputs = _check_outputs("num_outputs", num_outputs)
        self.capacity = _check_outputs("capacity", capacity)
        super().__init__(**kwargs)
        self.variant = str(variant)
        self.t_test = t_test
        self.alternative = str(alternative) if t_test else None
        shape = (capacity, num_outputs)
        self.register_state("preds", torch.zeros(shape, dtype=torch.float64), False, "cat")
        self.register_state("target", torch.zeros(shape, dtype=torch.float64), False, "cat")
        self.register_state("valid", torch.zeros(capacity, dtype=torch.bool), False, "cat")

    def _batch(self, preds: Tensor, target: Tensor) -> dict[str, Tensor]:
        p, t = _columns(preds, target, self.num_outputs, per_column=True)
        return {"preds": p, "target": t, "valid": torch.ones_like(p[:, 0], dtype=torch.bool)}

    def _value(self, state: Mapping[str, Tensor]) -> Tensor | tuple[Tensor, Tensor]:
        stats = kendall_statistics(state["preds"], state["target"], state["valid"])
        tau = _out(kendall_tau_from_statistics(stats, self.variant), self.num_outputs)
        if self.alternative is None:
            return tau
        p_value = kendall_p_value(stats, self.variant, self.alternative)
        return tau, _out(p_value, self.num_outputs)


# ------------------------------------------------------------------ more of TorchMetrics'
# regression family: each one a function of a few float64 running sums (adapter maths here,
# as torchtally's native catalog does not have them).

#: TorchMetrics clamps some denominators with float32's machine epsilon (its states' dtype).
_FLOAT32_EPS = float(torch.finfo(torch.float32).eps)


class MeanSquaredLogError(_SumsMetric):
    """TorchMetrics' `MeanSquaredLogError`: mean of `(log1p(preds) - log1p(target))^2`."""

    higher_is_better = False
    plot_lower_bound = 0.0

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._register_sums({"sum_squared_log_error": (), "total": ()})

    def _batch(self, preds: Tensor, target: Tensor) -> dict[str, Tensor]:
        _check_pair(preds, target)
        error = (preds.double().log1p() - target.double().log1p()) ** 2
        return {"sum_squared_log_error": error.sum(), "total": _count(error, error.numel())}

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        return _out(state["sum_squared_log_error"] / state["total"])


class LogCoshError(_SumsMetric):
    """TorchMetrics' `LogCoshError` (`num_outputs` columns): mean of `log(cosh(preds - target))`,
    computed as `|d| + log1p(exp(-2|d|)) - log 2`, which does not overflow for large errors."""

    higher_is_better = False
    plot_lower_bound = 0.0

    def __init__(self, num_outputs: int = 1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.num_outputs = _check_outputs("num_outputs", num_outputs)
        self._register_sums({"sum_log_cosh_error": (num_outputs,), "total": ()})

    def _batch(self, preds: Tensor, target: Tensor) -> dict[str, Tensor]:
        p, t = _columns(preds, target, self.num_outputs, per_column=True)
        d = (p - t).abs()
        log_cosh = d + torch.log1p(torch.exp(-2 * d)) - math.log(2.0)
        return {"sum_log_cosh_error": log_cosh.sum(0), "total": _count(p, p.shape[0])}

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        return _out(state["sum_log_cosh_error"] / state["total"], self.num_outputs)


class WeightedMeanAbsolutePercentageError(_SumsMetric):
    """TorchMetrics' `WeightedMeanAbsolutePercentageError`: `sum|p - t| / max(sum|t|, 1.17e-6)`."""

    higher_is_better = False
    plot_lower_bound = 0.0

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._register_sums({"sum_abs_error": (), "sum_scale": ()})

    def _batch(self, preds: Tensor, target: Tensor) -> dict[str, Tensor]:
        _check_pair(preds, target)
        p, t = preds.double(), target.double()
        return {"sum_abs_error": (p - t).abs().sum(), "sum_scale": t.abs().sum()}

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        return _out(state["sum_abs_error"] / state["sum_scale"].clamp(min=_EPS))


class RelativeSquaredError(_SumsMetric):
    """TorchMetrics' `RelativeSquaredError`: residual over total sum of squares per output,
    averaged over outputs (`squared=False`: its square root first)."""

    higher_is_better = False
    plot_lower_bound = 0.0

    def __init__(self, num_outputs: int = 1, squared: bool = True, **kwargs: Any) -> None:
        if not isinstance(squared, bool):
            raise ValueError(f"Argument `squared` must be a bool. Received: squared={squared!r}")
        super().__init__(**kwargs)
        self.num_outputs = _check_outputs("num_outputs", num_outputs)
        self.squared = squared
        width = (num_outputs,)
        # TorchMetrics' state names: sums of squared targets, of targets, of squared residuals.
        self._register_sums(
            {"sum_squared_error": width, "sum_error": width, "residual": width, "total": ()}
        )

    def _batch(self, preds: Tensor, target: Tensor) -> dict[str, Tensor]:
        _check_pair(preds, target)
        _check_r2_dims(preds)
        p, t = _columns(preds, target, self.num_outputs, per_column=True)
        return {
            "sum_squared_error": (t * t).sum(0),
            "sum_error": t.sum(0),
            "residual": ((t - p) ** 2).sum(0),
            "total": _count(t, t.shape[0]),
        }

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        tss = state["sum_squared_error"] - state["sum_error"] ** 2 / state["total"]
        rse = state["residual"] / tss.clamp(min=_FLOAT32_EPS)
        return _out((rse if self.squared else rse.sqrt()).mean())


class MinkowskiDistance(_SumsMetric):
    """TorchMetrics' `MinkowskiDistance(p)`: `(sum |preds - target|^p)^(1/p)`, `p >= 1`."""

    higher_is_better = False
    plot_lower_bound = 0.0

    def __init__(self, p: float, **kwargs: Any) -> None:
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not p >= 1:
            raise TorchMetricsUserError(
                f"Argument ``p`` must be a float or int greater than 1, but got {p}"
            )
        super().__init__(**kwargs)
        self.p = p
        self._register_sums({"minkowski_dist_sum": ()})

    def _batch(self, preds: Tensor, target: Tensor) -> dict[str, Tensor]:
        _check_pair(preds, target)
        distance = (preds.double() - target.double()).abs().pow(self.p).sum()
        return {"minkowski_dist_sum": distance}

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        return _out(state["minkowski_dist_sum"].pow(1.0 / self.p))


def _tweedie_domain(power: float) -> str:
    """TorchMetrics' words for the inputs outside the deviance's domain at `power`."""
    if power == 1:
        return f"For power={power}, 'preds' has to be strictly positive and 'targets' cannot be negative."
    if power < 0:
        return f"For power={power}, 'preds' has to be strictly positive."
    if 1 < power < 2:
        return (
            f"For power={power}, 'targets' has to be strictly positive and 'preds' cannot be "
            "negative."
        )
    return f"For power={power}, both 'preds' and 'targets' have to be strictly positive."


class TweedieDevianceScore(_SumsMetric):
    """TorchMetrics' `TweedieDevianceScore(power)`: the mean Tweedie deviance (power 0: squared
    error, 1: Poisson, 2: gamma; undefined for 0 < power < 1).

    Inputs outside the power's domain (TorchMetrics checks them with a host read and raises in
    `update`) are counted during `update` and raised, with TorchMetrics' words, by `forward`
    and `compute` (a `MetricValueError`, a `ValueError` as TorchMetrics').
    """

    error_kinds = ErrorKinds(
        values_outside_domain="values outside the Tweedie deviance's domain for this power"
    )
    higher_is_better = False
    plot_lower_bound = 0.0

    def __init__(self, power: float = 0.0, **kwargs: Any) -> None:
        if isinstance(power, bool) or not isinstance(power, (int, float)):
            raise ValueError(f"Argument `power` must be a number. Received: power={power!r}")
        if 0 < power < 1:
            raise ValueError(f"Deviance Score is not defined for power={power}.")
        if power != 0:
            # TorchMetrics' message names the power: this instance's own description.
            self.error_kinds = ErrorKinds(
                values_outside_domain="values outside the Tweedie deviance's domain "
                f"({_tweedie_domain(power)})"
            )
        super().__init__(**kwargs)
        self.power = float(power)
        self._register_sums({"sum_deviance_score": (), "num_observations": ()})

    def _batch(self, preds: Tensor, target: Tensor) -> dict[str, Any]:
        _check_pair(preds, target)
        p, t, power = preds.double(), target.double(), self.power
        if power == 0:
            invalid = torch.zeros_like(p, dtype=torch.bool)
            deviance = (t - p) ** 2
        elif power == 1:
            invalid = (p <= 0) | (t < 0)
            safe_p = torch.where(invalid, 1.0, p)
            deviance = 2 * (torch.xlogy(t, t / safe_p) + safe_p - t)
        elif power == 2:
            invalid = (p <= 0) | (t <= 0)
            safe_p, safe_t = torch.where(invalid, 1.0, p), torch.where(invalid, 1.0, t)
            deviance = 2 * (torch.log(safe_p / safe_t) + safe_t / safe_p - 1)
        else:
            if power < 0:
                invalid = p <= 0
            elif power < 2:
                invalid = (p <= 0) | (t < 0)
            else:
                invalid = (p <= 0) | (t <= 0)
            safe_p = torch.where(invalid, 1.0, p)
            term_1 = t.clamp(min=0).pow(2 - power) / ((1 - power) * (2 - power))
            term_2 = t * safe_p.pow(1 - power) / (1 - power)
            term_3 = safe_p.pow(2 - power) / (2 - power)
            deviance = 2 * (term_1 - term_2 + term_3)
        deviance = torch.where(invalid, 0.0, deviance)
        return {
            "sum_deviance_score": deviance.sum(),
            "num_observations": _count(p, p.numel()),
            "_errors": {"values_outside_domain": invalid.sum()},
        }

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        return _out(state["sum_deviance_score"] / state["num_observations"])


class ConcordanceCorrCoef(PearsonCorrCoef):
    """TorchMetrics' `ConcordanceCorrCoef` (Lin's concordance) from the same float64 moment
    sums as `PearsonCorrCoef`: `2 cov / (var_p + var_t + (mean_p - mean_t)^2)`, with
    TorchMetrics' unbiased (n - 1) variances and covariance."""

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        n = state["n"]
        mean_x, mean_y = state["sx"] / n, state["sy"] / n
        cov = (state["sxy"] - state["sx"] * state["sy"] / n) / (n - 1)
        var_x = (state["sxx"] - state["sx"] ** 2 / n) / (n - 1)
        var_y = (state["syy"] - state["sy"] ** 2 / n) / (n - 1)
        ccc = 2 * cov / (var_x + var_y + (mean_x - mean_y) ** 2)
        return _out(ccc, self.num_outputs)


class CriticalSuccessIndex(_SumsMetric):
    """TorchMetrics' `CriticalSuccessIndex(threshold)`: hits / (hits + misses + false alarms)
    of `preds >= threshold` against `target >= threshold`, over all elements.

    `keep_sequence_dim` (one value per sequence position, a list state in TorchMetrics) is
    refused: it needs a state that grows with the data.
    """

    higher_is_better = True
    is_differentiable = False

    def __init__(
        self, threshold: float, keep_sequence_dim: int | None = None, **kwargs: Any
    ) -> None:
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
            raise ValueError(
                f"Argument `threshold` must be a number. Received: threshold={threshold!r}"
            )
        if keep_sequence_dim is not None:
            raise ValueError(
                "Argument `keep_sequence_dim` must be None here (per-sequence values need a "
                "state that grows with the data). Received: "
                f"keep_sequence_dim={keep_sequence_dim!r}"
            )
        super().__init__(**kwargs)
        self.threshold, self.keep_sequence_dim = float(threshold), keep_sequence_dim
        self._register_sums({"hits": (), "misses": (), "false_alarms": ()})

    def _batch(self, preds: Tensor, target: Tensor) -> dict[str, Tensor]:
        _check_pair(preds, target)
        p, t = preds >= self.threshold, target >= self.threshold
        return {
            "hits": (p & t).sum().double(),
            "misses": (~p & t).sum().double(),
            "false_alarms": (p & ~t).sum().double(),
        }

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        denominator = state["hits"] + state["misses"] + state["false_alarms"]
        return _out(torch.where(denominator > 0, state["hits"] / denominator.clamp(min=1), 0.0))


_NORMALIZATIONS = ("mean", "range", "std", "l2")


class NormalizedRootMeanSquaredError(_SumsMetric):
    """TorchMetrics' `NormalizedRootMeanSquaredError`: the RMSE divided by the target's mean,
    range (max - min), population standard deviation or L2 norm, per output.

    The target's moments are float64 sums and its extremes max/min states, so the sync stays
    one collective per (dtype, reduction), where TorchMetrics merges running means by hand.
    """

    higher_is_better = False
    plot_lower_bound = 0.0

    def __init__(self, normalization: str = "mean", num_outputs: int = 1, **kwargs: Any) -> None:
        if normalization not in _NORMALIZATIONS:
            raise ValueError(
                "Argument `normalization` should be either 'mean', 'range', 'std' or 'l2', but "
                f"got {normalization}"
            )
        super().__init__(**kwargs)
        self.normalization = normalization
        self.num_outputs = _check_outputs("num_outputs", num_outputs)
        width = (num_outputs,)
        self._register_sums(
            {"sum_squared_error": width, "sum_target": width, "target_squared": width, "total": ()}
        )
        inf = torch.full(width, float("inf"), dtype=torch.float64)
        self.register_state("min_val", inf.clone(), False, "min")
        self.register_state("max_val", -inf, False, "max")

    def _batch(self, preds: Tensor, target: Tensor) -> dict[str, Tensor]:
        # As TorchMetrics': one output reads every element as one (a 2-D input flattened)
        p, t = _columns(preds, target, self.num_outputs)
        return {
            "sum_squared_error": ((p - t) ** 2).sum(0),
            "sum_target": t.sum(0),
            "target_squared": (t * t).sum(0),
            "total": _count(t, t.shape[0]),
            "min_val": t.min(0).values,
            "max_val": t.max(0).values,
        }

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        n = state["total"]
        mean = state["sum_target"] / n
        if self.normalization == "mean":
            denominator = mean
        elif self.normalization == "range":
            denominator = state["max_val"] - state["min_val"]
        elif self.normalization == "std":
            denominator = (state["target_squared"] / n - mean * mean).clamp(min=0).sqrt()
        else:
            denominator = state["target_squared"].sqrt()
        rmse = (state["sum_squared_error"] / n).sqrt()
        return _out(rmse / denominator, self.num_outputs)
