"""TorchMetrics 1.9's regression metrics on torchtally: sums in float64, one summed sync.

Every metric here is a function of a few running sums (of errors, squares, products and counts),
kept as preallocated float64 states. TorchMetrics' list states (CosineSimilarity,
`reduction="none"`) and its Welford merge (PearsonCorrCoef) become plain sums, so the state
syncs with one collective and never grows. Values are returned in the default float dtype, as
TorchMetrics' float32 states do.

The classes are adapters: TorchMetrics' arguments, checks, messages, warnings and output
shapes here; the sums and the values computed from them in `torchtally.functional.regression`
(where TorchMetrics' conventions differ from the native metrics', as parameters there).
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
from torchtally.functional.regression import (
    KENDALL_ALTERNATIVES,
    KENDALL_VARIANTS,
    absolute_error_sum,
    absolute_percentage_error_sum,
    average_ranks,
    comoment_sums,
    concordance_from_sums,
    cosine_similarity_rows,
    critical_success_counts,
    critical_success_index_compute,
    crps_rows,
    explained_variance_compute,
    explained_variance_sums,
    js_divergence_rows,
    kendall_p_value,
    kendall_statistics,
    kendall_tau_from_statistics,
    kl_divergence_rows,
    log_cosh_error_sum,
    minkowski_sum,
    nrmse_compute,
    pearson_from_sums,
    r2_compute,
    r2_sums,
    relative_squared_error_compute,
    smape_sum,
    spearman_from_ranks,
    squared_error_sum,
    squared_log_error_sum,
    tweedie_deviance_sum,
    weighted_absolute_percentage_error,
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


def _check_columns(
    preds: Tensor, target: Tensor, num_outputs: int, per_column: bool = False
) -> int:
    """`_columns`' checks alone, for the adapters that hand the inputs to a native function as
    they are; returns the number of rows the per-output sums count (all elements for one
    output unless `per_column`)."""
    _check_pair(preds, target)
    if per_column:
        _check_one_or_two_dims(preds, target)
        if num_outputs == 1 and preds.dim() == 2 and preds.shape[1] != 1:
            raise _outputs_mismatch(num_outputs, preds)
    if num_outputs == 1:
        return preds.numel() if not per_column else (preds.shape[0] if preds.dim() else 1)
    if preds.dim() != 2 or preds.shape[1] != num_outputs:
        raise _outputs_mismatch(num_outputs, preds)
    return int(preds.shape[0])


def _count(like: Tensor, count: int) -> Tensor:
    return torch.full((), float(count), dtype=torch.float64, device=like.device)


#: The dtype values are returned in while a function of `torchmetrics.functional` evaluates a
#: class on one batch (TorchMetrics' functions return their inputs' floating dtype, its classes
#: the default dtype of their float32 states); None: the default dtype.
_RESULT_DTYPE: ContextVar[torch.dtype | None] = ContextVar("_RESULT_DTYPE", default=None)


def _out(value: Tensor, num_outputs: int = 1) -> Tensor:
    # Dynamo cannot trace a ContextVar read, and a compiled step evaluates the classes (the
    # functions set the variable in eager calls only)
    dtype = None if torch.compiler.is_compiling() else _RESULT_DTYPE.get()
    value = value.to(dtype or torch.get_default_dtype())
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
        rows = _check_columns(preds, target, self.num_outputs)
        per_output = self.num_outputs > 1
        total = squared_error_sum(target, preds, per_output=per_output)
        # shaped as the state: a wrapper stacking batch statistics (BootStrapper) needs it
        total = total.reshape(self.num_outputs)
        return {"sum_squared_error": total, "total": _count(total, rows)}

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
        rows = _check_columns(preds, target, self.num_outputs)
        total = absolute_error_sum(target, preds, per_output=self.num_outputs > 1)
        total = total.reshape(self.num_outputs)
        return {"sum_abs_error": total, "total": _count(total, rows)}

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
        total = absolute_percentage_error_sum(target, preds, epsilon=_EPS)
        return {"sum_abs_per_error": total, "total": _count(total, target.numel())}

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
        total = 2 * smape_sum(target, preds, epsilon=_EPS)
        return {"sum_abs_per_error": total, "total": _count(total, target.numel())}

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
        rows = _check_columns(preds, target, self._width_from(preds), per_column=True)
        width = self.num_outputs
        sum_obs, sum_squared_obs, rss = (total.reshape(width) for total in r2_sums(target, preds))
        return {
            "sum_squared_obs": sum_squared_obs,
            "sum_obs": sum_obs,
            "rss": rss,
            "total": _count(rss, rows),
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
        # TorchMetrics' conventions: sums of squares within 1e-4 of 0 are 0 (a perfect fit, a
        # constant target), and "variance_weighted" over constant targets only is NaN.
        r2 = r2_compute(
            state["sum_obs"],
            state["sum_squared_obs"],
            state["rss"],
            n,
            self.multioutput,
            adjusted=self.adjusted,
            tolerance=1e-4,
            weighted_fallback=False,
        )
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
        rows = _check_columns(preds, target, self._width_from(preds), per_column=True)
        sums = explained_variance_sums(target, preds)
        names = ("sum_error", "sum_squared_error", "sum_target", "sum_squared_target")
        return {**dict(zip(names, sums, strict=True)), "num_obs": _count(sums[0], rows)}

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        value = explained_variance_compute(
            state["sum_error"],
            state["sum_squared_error"],
            state["sum_target"],
            state["sum_squared_target"],
            state["num_obs"],
            self.multioutput,
        )
        return _out(value, self.num_outputs if self.multioutput == "raw_values" else 1)


#: Pearson's and Lin's states: Σx, Σy, Σx², Σy², Σxy of preds (x) and target (y).
_MOMENTS = ("sx", "sy", "sxx", "syy", "sxy")


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
        rows = _check_columns(preds, target, self.num_outputs, per_column=True)
        sums = comoment_sums(preds, target)
        return {**dict(zip(_MOMENTS, sums, strict=True)), "n": _count(sums[0], rows)}

    def _moments(self, state: Mapping[str, Tensor]) -> tuple[Tensor, ...]:
        return (*(state[name] for name in _MOMENTS), state["n"])

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        return _out(pearson_from_sums(*self._moments(state)), self.num_outputs)


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
        similarity = cosine_similarity_rows(target, preds).sum()
        return {"similarity": similarity, "total": _count(similarity, preds.shape[0])}

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
        ranks_p = average_ranks(state["preds"], valid)
        ranks_t = average_ranks(state["target"], valid)
        # TorchMetrics' 1e-6 in the denominator
        return _out(spearman_from_ranks(ranks_p, ranks_t, valid, eps=1e-6), self.num_outputs)


def _check_kendall_args(variant: str, t_test: bool, alternative: str | None) -> None:
    """TorchMetrics' checks of Kendall's arguments, with its messages (class and function)."""
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
        _check_kendall_args(variant, t_test, alternative)
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
# regression family: each one a function of a few float64 running sums
# (`torchtally.functional.regression`).

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
        total = squared_log_error_sum(target, preds)
        return {"sum_squared_log_error": total, "total": _count(total, target.numel())}

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
        rows = _check_columns(preds, target, self.num_outputs, per_column=True)
        total = log_cosh_error_sum(target, preds, per_output=True)
        return {"sum_log_cosh_error": total, "total": _count(total, rows)}

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
        scale = target.double().abs().sum()
        return {"sum_abs_error": absolute_error_sum(target, preds), "sum_scale": scale}

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        return _out(
            weighted_absolute_percentage_error(
                state["sum_abs_error"], state["sum_scale"], epsilon=_EPS
            )
        )


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
        rows = _check_columns(preds, target, self.num_outputs, per_column=True)
        width = self.num_outputs
        sum_y, sum_y2, residual = (total.reshape(width) for total in r2_sums(target, preds))
        return {
            "sum_squared_error": sum_y2,
            "sum_error": sum_y,
            "residual": residual,
            "total": _count(residual, rows),
        }

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        rse = relative_squared_error_compute(
            state["sum_error"],
            state["sum_squared_error"],
            state["residual"],
            state["total"],
            squared=self.squared,
            epsilon=_FLOAT32_EPS,
        )
        return _out(rse)


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
        return {"minkowski_dist_sum": minkowski_sum(target, preds, self.p)}

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
        deviance, outside = tweedie_deviance_sum(target, preds, self.power)
        return {
            "sum_deviance_score": deviance,
            "num_observations": _count(deviance, preds.numel()),
            "_errors": {"values_outside_domain": outside},
        }

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        return _out(state["sum_deviance_score"] / state["num_observations"])


class ConcordanceCorrCoef(PearsonCorrCoef):
    """TorchMetrics' `ConcordanceCorrCoef` (Lin's concordance) from the same float64 moment
    sums as `PearsonCorrCoef`: `2 cov / (var_p + var_t + (mean_p - mean_t)^2)`, with
    TorchMetrics' unbiased (n - 1) variances and covariance."""

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        return _out(concordance_from_sums(*self._moments(state)), self.num_outputs)


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
        counts = critical_success_counts(target, preds, self.threshold)
        return dict(zip(("hits", "misses", "false_alarms"), counts, strict=True))

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        return _out(
            critical_success_index_compute(state["hits"], state["misses"], state["false_alarms"])
        )


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
        rows = _check_columns(preds, target, self.num_outputs)
        if self.num_outputs == 1:
            preds, target = preds.reshape(-1), target.reshape(-1)
        width = self.num_outputs
        sum_y, sum_y2, sse = (total.reshape(width) for total in r2_sums(target, preds))
        return {
            "sum_squared_error": sse,
            "sum_target": sum_y,
            "target_squared": sum_y2,
            "total": _count(sse, rows),
            "min_val": target.amin(0).double().reshape(width),
            "max_val": target.amax(0).double().reshape(width),
        }

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        value = nrmse_compute(
            state["sum_squared_error"],
            state["sum_target"],
            state["target_squared"],
            state["total"],
            state["min_val"],
            state["max_val"],
            self.normalization,
        )
        return _out(value, self.num_outputs)
