"""`MeanMetric` (also Burn's loss metric) and `PerplexityMetric`."""

from __future__ import annotations

from typing import final

import torch
from torch import Tensor

from torchtally.functional._checks import check_tensor, count_negative, count_nonfinite
from torchtally.functional.aggregation._mean import mean_compute, mean_update, perplexity_update
from torchtally.metrics._base import Metric

__all__ = ["MeanMetric", "PerplexityMetric"]


@final
class MeanMetric(Metric):
    """Weighted mean of every value seen (cstorch `MeanMetric`; log a loss with it).

    Args:
        name: Metric name; defaults to "mean".
        check_values: Count non-finite values and negative weights and raise them at compute.

    Example:
        >>> loss = MeanMetric("loss")
        >>> loss.update(torch.tensor(2.0)); loss.update(torch.tensor(4.0), weight=3.0)
        >>> float(loss)
        3.5
    """

    result_dtype = torch.float32  # as cstorch
    array_inputs = ("value", "weight")

    error_kinds = ("non-finite values", "negative weights")

    def __init__(self, name: str | None = None, *, check_values: bool = True) -> None:
        super().__init__(name, check_values=check_values)
        self.register_state("weighted_sum", torch.zeros((), dtype=torch.float64))
        self.register_state("weight_total", torch.zeros((), dtype=torch.float64))

    def update(self, value: Tensor | float, weight: Tensor | float = 1.0) -> None:
        """Add `value` (any shape) with `weight` (broadcast to it)."""
        value = check_tensor("value", value)
        if not isinstance(weight, Tensor | float | int) or isinstance(weight, bool):
            raise TypeError(
                "Argument `weight` must be a tensor or a number. "
                f"Received: weight={type(weight).__name__}"
            )
        if self.check_values and not isinstance(weight, Tensor) and not weight >= 0:
            # A Python number is checked right here: there is no tensor to count it into.
            raise ValueError(f"Argument `weight` must be >= 0. Received: weight={weight!r}")
        weighted_sum, weight_total = mean_update(value, weight)
        if self.check_values:
            weight_t = weight if isinstance(weight, Tensor) else None
            self._record_errors(count_nonfinite(value), count_negative(weight_t))
        self.weighted_sum.add_(weighted_sum)
        self.weight_total.add_(weight_total)

    def compute(self) -> Tensor:
        return mean_compute(self.weighted_sum, self.weight_total)


@final
class PerplexityMetric(Metric):
    """exp(total token loss / token count) over every batch (cstorch `PerplexityMetric`).

    Args:
        name: Metric name; defaults to "perplexity".
        check_values: Count non-finite losses and negative weights and raise them at compute.

    Example:
        >>> ppl = PerplexityMetric()
        >>> labels = torch.zeros(2, 3, dtype=torch.long)
        >>> float(ppl(labels, loss=torch.tensor(0.0)))
        1.0
    """

    #: Display unit of its values (fractions shown ×100 for "%").
    unit = ""
    #: Whether a larger value is better (early stopping, best checkpoints).
    higher_is_better = False
    result_dtype = torch.float32  # as cstorch
    array_inputs = ("labels", "loss", "weights")

    error_kinds = ("non-finite loss", "negative weights")

    def __init__(self, name: str | None = None, *, check_values: bool = True) -> None:
        super().__init__(name, check_values=check_values)
        self.register_state("total_loss", torch.zeros((), dtype=torch.float64))
        self.register_state("total_tokens", torch.zeros((), dtype=torch.float64))

    def update(self, labels: Tensor, loss: Tensor, weights: Tensor | None = None) -> None:
        """Add one batch.

        Args:
            labels: The batch's target tokens (only their count, or `weights > 0`, is used).
            loss: The batch's loss summed over its tokens.
            weights: Optional per-token weights shaped like `labels`.
        """
        labels, loss = check_tensor("labels", labels), check_tensor("loss", loss)
        if weights is not None:
            check_tensor("weights", weights)
        total_loss, total_tokens = perplexity_update(labels, loss, weights)
        if self.check_values:
            self._record_errors(count_nonfinite(loss), count_negative(weights))
        self.total_loss.add_(total_loss)
        self.total_tokens.add_(total_tokens)

    def compute(self) -> Tensor:
        return torch.exp(mean_compute(self.total_loss, self.total_tokens))
