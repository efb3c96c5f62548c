"""TorchMetrics 1.9's regression functions: each is the compatible class's value on one batch
(`one_batch`: its `_batch` then its `_value`), so a function and its class cannot disagree.

Here: TorchMetrics' argument order and defaults, its shape check (RuntimeError "Predictions and
targets are expected to have the same shape"), and the number of outputs read from the inputs
(a 2-D `(N, D)` input has D outputs), which the classes must be told at construction.
"""

from __future__ import annotations

import warnings
from typing import Any, cast

import torch
from torch import Tensor

from torchtally.compat.torchmetrics.functional._one_batch import compat_class, one_batch
from torchtally.compat.torchmetrics.regression import (
    _RESULT_DTYPE,
    _check_ensemble,
    _check_kendall_args,
)
from torchtally.functional.regression import (
    average_ranks,
    crps_rows,
    kendall_p_value,
    kendall_statistics,
    kendall_tau_from_statistics,
)

__all__ = [
    "concordance_corrcoef",
    "continuous_ranked_probability_score",
    "cosine_similarity",
    "critical_success_index",
    "explained_variance",
    "jensen_shannon_divergence",
    "kendall_rank_corrcoef",
    "kl_divergence",
    "log_cosh_error",
    "mean_absolute_error",
    "mean_absolute_percentage_error",
    "mean_squared_error",
    "mean_squared_log_error",
    "minkowski_distance",
    "normalized_root_mean_squared_error",
    "pearson_corrcoef",
    "r2_score",
    "relative_squared_error",
    "spearman_corrcoef",
    "symmetric_mean_absolute_percentage_error",
    "tweedie_deviance_score",
    "weighted_mean_absolute_percentage_error",
]


def _same_shape(preds: Any, target: Any) -> None:
    if not isinstance(preds, Tensor) or not isinstance(target, Tensor):
        raise TypeError(
            "Arguments `preds` and `target` must be tensors. Received: "
            f"preds={type(preds).__name__}, target={type(target).__name__}"
        )
    if preds.shape != target.shape:
        raise RuntimeError(
            "Predictions and targets are expected to have the same shape, but got "
            f"{preds.shape} and {target.shape}."
        )


def _one_or_two_dims(preds: Tensor, target: Tensor) -> None:
    if preds.ndim > 2 or target.ndim > 2:
        raise ValueError(
            "Expected both predictions and target to be either 1- or 2-dimensional tensors, "
            f"but got {target.ndim} and {preds.ndim}."
        )


def _outputs(preds: Tensor) -> int:
    """TorchMetrics reads a 2-D input as one output per column."""
    return 1 if preds.ndim < 2 else int(preds.shape[-1])


def _floating_dtype(*inputs: Tensor) -> torch.dtype | None:
    """The dtype TorchMetrics' functions return: their floating inputs' promoted dtype (they
    compute in it), None (the default dtype) for integer inputs."""
    floating = [t.dtype for t in inputs if t.is_floating_point()]
    if not floating:
        return None
    dtype = floating[0]
    for other in floating[1:]:
        dtype = torch.promote_types(dtype, other)
    return dtype


def _value(
    name: str, preds: Tensor, target: Tensor, result_like: bool = True, **arguments: Any
) -> Tensor:
    """The class `name`'s value on this one batch, in the inputs' floating dtype (or with
    `result_like=False` the default dtype, as TorchMetrics' functions of counts return)."""
    _same_shape(preds, target)
    metric = compat_class(name, "regression")(**arguments)
    token = _RESULT_DTYPE.set(_floating_dtype(preds, target) if result_like else None)
    try:
        return cast(Tensor, one_batch(metric, preds, target))
    finally:
        _RESULT_DTYPE.reset(token)


def mean_squared_error(
    preds: Tensor, target: Tensor, squared: bool = True, num_outputs: int = 1
) -> Tensor:
    """Mean squared error (`squared=False`: its root).

    Example:
        >>> import torch
        >>> mean_squared_error(torch.tensor([0.0, 1.0, 2.0, 3.0]), torch.tensor([0.0, 1.0, 2.0, 2.0]))
        tensor(0.2500)
    """
    return _value("MeanSquaredError", preds, target, squared=squared, num_outputs=num_outputs)


def mean_absolute_error(preds: Tensor, target: Tensor, num_outputs: int = 1) -> Tensor:
    """Mean absolute error."""
    return _value("MeanAbsoluteError", preds, target, num_outputs=num_outputs)


def mean_absolute_percentage_error(preds: Tensor, target: Tensor) -> Tensor:
    """Mean of `|preds - target| / max(|target|, 1.17e-6)`."""
    return _value("MeanAbsolutePercentageError", preds, target)


def symmetric_mean_absolute_percentage_error(preds: Tensor, target: Tensor) -> Tensor:
    """Symmetric mean absolute percentage error."""
    return _value("SymmetricMeanAbsolutePercentageError", preds, target)


def weighted_mean_absolute_percentage_error(preds: Tensor, target: Tensor) -> Tensor:
    """`sum |preds - target| / sum |target|`."""
    return _value("WeightedMeanAbsolutePercentageError", preds, target)


def mean_squared_log_error(preds: Tensor, target: Tensor) -> Tensor:
    """Mean of `(log1p(preds) - log1p(target))^2`."""
    return _value("MeanSquaredLogError", preds, target)


def log_cosh_error(preds: Tensor, target: Tensor) -> Tensor:
    """Mean of `log(cosh(preds - target))`, per output for 2-D inputs."""
    _same_shape(preds, target)
    _one_or_two_dims(preds, target)
    return _value("LogCoshError", preds, target, num_outputs=_outputs(preds))


def r2_score(
    preds: Tensor, target: Tensor, adjusted: int = 0, multioutput: str = "uniform_average"
) -> Tensor:
    """Coefficient of determination (`adjusted` for that many regressors)."""
    _same_shape(preds, target)
    if preds.ndim > 2:
        raise ValueError(
            "Expected both prediction and target to be 1D or 2D tensors, but received tensors "
            f"with dimension {preds.shape}"
        )
    if preds.shape[0] < 2:
        raise ValueError("Needs at least two samples to calculate r2 score.")
    if not isinstance(adjusted, int) or isinstance(adjusted, bool) or adjusted < 0:
        raise ValueError("`adjusted` parameter should be an integer larger or equal to 0.")
    if adjusted > preds.shape[0] - 1:
        warnings.warn(
            "More independent regressions than data points in adjusted r2 score. Falls back to "
            "standard r2 score.",
            UserWarning,
            stacklevel=2,
        )
    elif adjusted and adjusted == preds.shape[0] - 1:
        warnings.warn(
            "Division by zero in adjusted r2 score. Falls back to standard r2 score.",
            UserWarning,
            stacklevel=2,
        )
    return _value(
        "R2Score",
        preds,
        target,
        adjusted=adjusted,
        multioutput=multioutput,
        num_outputs=_outputs(preds),
    )


def explained_variance(
    preds: Tensor, target: Tensor, multioutput: str = "uniform_average"
) -> Tensor:
    """Explained variance, per output or averaged (`multioutput`)."""
    return _value(
        "ExplainedVariance", preds, target, multioutput=multioutput, num_outputs=_outputs(preds)
    )


def pearson_corrcoef(preds: Tensor, target: Tensor) -> Tensor:
    """Pearson correlation, per output for 2-D inputs."""
    _same_shape(preds, target)
    _one_or_two_dims(preds, target)
    return _value("PearsonCorrCoef", preds, target, num_outputs=_outputs(preds))


def concordance_corrcoef(preds: Tensor, target: Tensor) -> Tensor:
    """Lin's concordance correlation, per output for 2-D inputs (shape `(1,)` for 1-D inputs,
    as TorchMetrics' function returns)."""
    _same_shape(preds, target)
    _one_or_two_dims(preds, target)
    value = _value("ConcordanceCorrCoef", preds, target, num_outputs=_outputs(preds))
    return value.reshape(1) if preds.ndim == 1 else value


def _rank_data(data: Tensor) -> Tensor:
    """TorchMetrics' private 1-D ranking (1-based, ties share their mean rank), kept for its
    tests: `torchtally.functional.regression.average_ranks` of one column."""
    ranks = average_ranks(data.reshape(-1, 1))
    return ranks[:, 0].to(torch.get_default_dtype())


def spearman_corrcoef(preds: Tensor, target: Tensor) -> Tensor:
    """Spearman's rank correlation (ties share their mean rank), per output for 2-D inputs."""
    _same_shape(preds, target)
    if not (preds.is_floating_point() and target.is_floating_point()):
        raise TypeError(
            "Expected `preds` and `target` both to be floating point tensors, but got "
            f"{preds.dtype} and {target.dtype}"
        )
    _one_or_two_dims(preds, target)
    # The class's buffer is never filled here (the value comes from the batch itself).
    return _value("SpearmanCorrCoef", preds, target, num_outputs=_outputs(preds), capacity=1)


def relative_squared_error(preds: Tensor, target: Tensor, squared: bool = True) -> Tensor:
    """Residual over total sum of squares (`squared=False`: its root), averaged over outputs."""
    return _value(
        "RelativeSquaredError", preds, target, num_outputs=_outputs(preds), squared=squared
    )


def cosine_similarity(preds: Tensor, target: Tensor, reduction: str | None = "sum") -> Tensor:
    """Cosine similarity of the rows of `(N, D)` inputs, summed or averaged over rows."""
    _same_shape(preds, target)
    if preds.ndim != 2:
        raise ValueError(
            "Expected input to cosine similarity to be 2D tensors of shape `[N,D]` where `N` is "
            "the number of samples and `D` is the number of dimensions, but got tensor of shape "
            f"{preds.shape}"
        )
    return _value("CosineSimilarity", preds, target, reduction=reduction)


def kl_divergence(
    p: Tensor, q: Tensor, log_prob: bool = False, reduction: str | None = "mean"
) -> Tensor:
    """KL divergence of the rows of `(N, D)` distributions `p` from `q`."""
    _same_shape(p, q)
    if p.ndim != 2 or q.ndim != 2:
        raise ValueError(
            f"Expected both p and q distribution to be 2D but got {p.ndim} and {q.ndim} respectively"
        )
    return _value("KLDivergence", p, q, log_prob=log_prob, reduction=reduction)


def minkowski_distance(preds: Tensor, targets: Tensor, p: float) -> Tensor:
    """`(sum |preds - targets|^p)^(1/p)`."""
    return _value("MinkowskiDistance", preds, targets, p=p)


def _check_tweedie_domain(preds: Tensor, targets: Tensor, power: float) -> None:
    """TorchMetrics' input domain of each power, with its messages (the class counts the values
    outside it and raises at compute; a function raises at once, as TorchMetrics')."""
    if power == 0:
        return
    if power == 1:
        if bool((preds <= 0).any() | (targets < 0).any()):
            raise ValueError(
                f"For power={power}, 'preds' has to be strictly positive and 'targets' cannot be "
                "negative."
            )
    elif power == 2:
        if bool((preds <= 0).any() | (targets <= 0).any()):
            raise ValueError(
                f"For power={power}, both 'preds' and 'targets' have to be strictly positive."
            )
    elif power < 0:
        if bool((preds <= 0).any()):
            raise ValueError(f"For power={power}, 'preds' has to be strictly positive.")
    elif 1 < power < 2:
        if bool((preds <= 0).any() | (targets < 0).any()):
            raise ValueError(
                f"For power={power}, 'targets' has to be strictly positive and 'preds' cannot be "
                "negative."
            )
    elif bool((preds <= 0).any() | (targets <= 0).any()):
        raise ValueError(
            f"For power={power}, both 'preds' and 'targets' have to be strictly positive."
        )


def tweedie_deviance_score(preds: Tensor, targets: Tensor, power: float = 0.0) -> Tensor:
    """Mean Tweedie deviance for `power` (0: squared error, 1: Poisson, 2: gamma)."""
    _same_shape(preds, targets)
    if isinstance(power, (int, float)) and 0 < power < 1:
        raise ValueError(f"Deviance Score is not defined for power={power}.")
    _check_tweedie_domain(preds, targets, power)
    return _value("TweedieDevianceScore", preds, targets, power=power)


def critical_success_index(
    preds: Tensor, target: Tensor, threshold: float, keep_sequence_dim: int | None = None
) -> Tensor:
    """Hits / (hits + misses + false alarms) of values at or above `threshold`."""
    return _value(
        "CriticalSuccessIndex",
        preds,
        target,
        result_like=False,
        threshold=threshold,
        keep_sequence_dim=keep_sequence_dim,
    )


def normalized_root_mean_squared_error(
    preds: Tensor, target: Tensor, normalization: str = "mean", num_outputs: int = 1
) -> Tensor:
    """RMSE over the target's mean, range, standard deviation or L2 norm."""
    _same_shape(preds, target)
    if num_outputs == 1:  # TorchMetrics' function reads any shape as one output
        preds, target = preds.reshape(-1), target.reshape(-1)
    return _value(
        "NormalizedRootMeanSquaredError",
        preds,
        target,
        normalization=normalization,
        num_outputs=num_outputs,
    )


def jensen_shannon_divergence(
    p: Tensor, q: Tensor, log_prob: bool = False, reduction: str | None = "mean"
) -> Tensor:
    """Jensen-Shannon divergence of the rows of `(N, D)` distributions `p` and `q`.

    Example:
        >>> import torch
        >>> jensen_shannon_divergence(torch.tensor([[0.36, 0.48, 0.16]]), torch.tensor([[1/3, 1/3, 1/3]]))
        tensor(0.0225)
    """
    _same_shape(p, q)
    if p.ndim != 2 or q.ndim != 2:
        raise ValueError(
            f"Expected both p and q distribution to be 2D but got {p.ndim} and {q.ndim} respectively"
        )
    return _value("JensenShannonDivergence", p, q, log_prob=log_prob, reduction=reduction)


def continuous_ranked_probability_score(preds: Tensor, target: Tensor) -> Tensor:
    """Mean continuous ranked probability score of `(N, m)` ensemble forecasts against `(N,)`
    targets, in the forecasts' floating dtype.

    Example:
        >>> import torch
        >>> continuous_ranked_probability_score(torch.tensor([[0.0, 1.0]]), torch.tensor([0.5]))
        tensor(0.2500)
    """
    _check_ensemble(preds, target)
    value = crps_rows(target, preds).mean()
    return value.to(_floating_dtype(preds, target) or torch.get_default_dtype())


def kendall_rank_corrcoef(
    preds: Tensor,
    target: Tensor,
    variant: str = "b",
    t_test: bool = False,
    alternative: str | None = "two-sided",
) -> Tensor | tuple[Tensor, Tensor]:
    """Kendall's tau (`variant` "a", "b" or "c"), per output for 2-D inputs; with
    `t_test=True`, `(tau, p_value)` of the asymptotic test `alternative`.

    Example:
        >>> import torch
        >>> kendall_rank_corrcoef(torch.tensor([2.5, 0.0, 2, 8]), torch.tensor([3, -0.5, 2, 1]))
        tensor(0.3333)
    """
    _check_kendall_args(variant, t_test, alternative)
    _same_shape(preds, target)
    _one_or_two_dims(preds, target)
    stats = kendall_statistics(preds, target)
    dtype = torch.get_default_dtype()  # TorchMetrics' value of counts
    tau = kendall_tau_from_statistics(stats, variant).to(dtype)
    one = preds.ndim < 2 or preds.shape[1] == 1
    if one:
        tau = tau.reshape(())
    if not t_test:
        return tau
    p_value = kendall_p_value(stats, variant, str(alternative)).to(dtype)
    return tau, p_value.reshape(()) if one else p_value
