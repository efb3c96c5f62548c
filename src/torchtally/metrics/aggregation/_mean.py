"""`MeanMetric` (also Burn's loss metric) and `PerplexityMetric`."""

from __future__ import annotations

import warnings
from typing import Any, cast, final

import torch
from torch import Tensor

from torchtally._errors import ErrorKinds, check_choice, tracing, user_stacklevel
from torchtally.functional._checks import check_tensor, count_negative, count_nonfinite
from torchtally.functional.aggregation._mean import (
    add_weighted,
    mean_compute,
    mean_update,
    scalar_weight_sum,
    scalar_weight_sum_checked,
)
from torchtally.functional.aggregation._perplexity import (
    LOSS_REDUCTIONS,
    is_logits,
    perplexity_logits_update,
    perplexity_loss_update,
)
from torchtally.functional.classification._inputs import check_index_labels
from torchtally.functional.regression._fused import eager_cpu
from torchtally.metrics._base import Metric
from torchtally.metrics.regression._errors import FLOAT64_SUMS_HELD, packed_from_old_states

__all__ = ["MeanMetric", "PerplexityMetric"]

_OLD_STATES = ("weighted_sum", "weight_total")


def _stacked(tensors: list[Tensor]) -> Tensor:
    return torch.stack([t.reshape(()).to(torch.float64) for t in tensors])


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

    unit = ""
    higher_is_better = None
    input_kind = "values"
    result_dtype = torch.float32  # as cstorch
    array_inputs = ("value", "weight")
    max_held_elements = FLOAT64_SUMS_HELD

    error_kinds = ErrorKinds(
        nonfinite_values="non-finite values", negative_weights="negative weights"
    )

    def __init__(self, name: str | None = None, *, check_values: bool = True) -> None:
        super().__init__(name, check_values=check_values)
        #: [weighted sum, weight total]: one tensor, so that a GPU update adds both in one op.
        self.register_state("totals", torch.zeros(2, dtype=torch.float64))
        self._views: tuple[Tensor, Tensor, Tensor] | None = None

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
        # The (2,) buffer itself: a state read as `self.totals` costs a failed attribute
        # lookup and __getattr__.
        totals: Tensor = self._buffers["totals"]  # type: ignore[assignment]
        if not eager_cpu(value):
            counts = add_weighted(totals, value, weight, self.check_values)
            if self.check_values:
                self.record_errors(nonfinite_values=counts[0], negative_weights=counts[1])
            return
        weight_total: Tensor | float
        if not isinstance(weight, Tensor):
            # A Python weight: its total is a number, added without making a tensor for it.
            if self.check_values:
                weighted_sum, weight_total, bad = scalar_weight_sum_checked(value, weight)
                self.record_errors(nonfinite_values=bad)
            else:
                weighted_sum, weight_total = scalar_weight_sum(value, weight)
        else:
            weighted_sum, weight_total = mean_update(value, weight)
            if self.check_values:
                self.record_errors(
                    nonfinite_values=count_nonfinite(value),
                    negative_weights=count_negative(weight),
                )
        # Cached views of the two entries (a select per call costs a dispatch).
        views = self._views
        if views is None or views[0] is not totals:
            views = self._views = (totals, totals[0], totals[1])
        views[1].add_(weighted_sum)
        views[2].add_(weight_total)

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        # A pickled view is unpickled as a tensor of its own, no longer an alias of the state.
        state["_views"] = None
        return state

    # Checkpoints written before the two sums were packed into `totals`.
    def _load_from_state_dict(self, state_dict: Any, prefix: str, *args: Any, **kw: Any) -> None:
        packed_from_old_states(state_dict, prefix, "totals", _OLD_STATES, _stacked)
        super()._load_from_state_dict(state_dict, prefix, *args, **kw)

    def load_state_dict_all(self, state: dict[str, Tensor]) -> None:
        super().load_state_dict_all(
            packed_from_old_states(dict(state), "", "totals", _OLD_STATES, _stacked)
        )

    @property
    def weighted_sum(self) -> Tensor:
        """Σ weight·value so far (a 0-d view of the state `totals`)."""
        return cast(Tensor, self.totals[0])

    @property
    def weight_total(self) -> Tensor:
        """Σ weight so far (a 0-d view of the state `totals`)."""
        return cast(Tensor, self.totals[1])

    def compute(self) -> Tensor:
        return mean_compute(self.weighted_sum, self.weight_total)

    def _coalescible(self, args: tuple[Tensor, ...]) -> bool:
        # Weighted sums over elements, row-additive only for a weight shaped exactly like the
        # values: a weight that broadcasts (a 0-d weight against (1, 3) values, (3,) against
        # (3, 3)) pairs with other values once batches are concatenated.
        return len(args) == 1 or (len(args) == 2 and args[0].shape == args[1].shape)


@final
class PerplexityMetric(Metric):
    """exp(total token loss / token count) over every batch (cstorch `PerplexityMetric`).

    `update(labels, loss)` takes, as cstorch does, the batch's loss **summed** over its tokens
    and counts the tokens itself (the elements of `labels`, or the positive `weights`). A mean
    loss (PyTorch's default `reduction="mean"`) read as a sum would give exp(mean / count), a
    perplexity near 1, and no value can tell the two apart, so:

    - declare the reduction: `loss_reduction="mean"` multiplies the mean back by the token
      count; `loss_reduction="sum"` declares a sum;
    - a loss that still carries its autograd node (eager, not detached) is checked against the
      declaration from that node's type and saved reduction (metadata: no host sync), and a
      mismatch raises;
    - undeclared, a one-number loss whose reduction cannot be read warns once (eagerly; never
      while tracing) that it is read as a sum;
    - or pass the logits, `update(labels, logits)` (shaped `labels.shape + (vocabulary,)`),
      which need no declaration: the cross-entropy is computed here, summed in float64.

    Args:
        name: Metric name; defaults to "perplexity".
        loss_reduction: "sum" (cstorch's input) or "mean": how `loss` was reduced over the
            counted tokens; None (default) reads it as "sum" and warns once when that cannot
            be checked.
        ignore_index: A label value (e.g. -100 padding) whose tokens do not count.
        check_values: Count non-finite losses/logits, negative weights and labels outside the
            vocabulary (logits only) and raise them at compute.

    Example:
        >>> ppl = PerplexityMetric()
        >>> labels = torch.zeros(2, 3, dtype=torch.long)
        >>> float(ppl(labels, loss=torch.tensor(0.0)))
        1.0
    """

    input_kind = "tokens"
    #: Display unit of its values (fractions shown ×100 for "%").
    unit = ""
    #: Whether a larger value is better (early stopping, best checkpoints).
    higher_is_better = False
    result_dtype = torch.float32  # as cstorch
    array_inputs = ("labels", "loss", "weights", "logits")
    # The loss's autograd node shows a mean passed as a sum; both update paths detach it.
    autograd_inputs = ("loss",)

    error_kinds = ErrorKinds(
        nonfinite_loss="non-finite loss",
        negative_weights="negative weights",
        invalid_labels="labels outside [0, vocabulary size)",
    )

    def __init__(
        self,
        name: str | None = None,
        *,
        loss_reduction: str | None = None,
        ignore_index: int | None = None,
        check_values: bool = True,
    ) -> None:
        check_choice("loss_reduction", loss_reduction, (*LOSS_REDUCTIONS, None))
        if ignore_index is not None and (
            isinstance(ignore_index, bool) or not isinstance(ignore_index, int)
        ):
            raise TypeError(
                "Argument `ignore_index` must be an integer or None. "
                f"Received: ignore_index={ignore_index!r}"
            )
        super().__init__(name, check_values=check_values)
        self.loss_reduction = loss_reduction or "sum"
        self._undeclared = loss_reduction is None  # until it has warned once
        self.ignore_index = ignore_index
        self.register_state("total_loss", torch.zeros((), dtype=torch.float64))
        self.register_state("total_tokens", torch.zeros((), dtype=torch.float64))

    def update(
        self,
        labels: Tensor,
        loss: Tensor | None = None,
        weights: Tensor | None = None,
        *,
        logits: Tensor | None = None,
    ) -> None:
        """Add one batch.

        Args:
            labels: The batch's target tokens, integer (floating labels raise: the order is
                `(labels, loss_or_logits)`, TorchMetrics' is `(preds, target)`).
            loss: The batch's loss summed over its tokens (or its mean, with
                `loss_reduction="mean"`); or logits of shape `labels.shape + (vocabulary,)`,
                recognised by that shape.
            weights: Optional per-token weights shaped like `labels`; tokens with weight > 0
                count.
            logits: The logits, by keyword, instead of `loss`.
        """
        check_index_labels(labels)
        if (loss is None) == (logits is None):
            raise TypeError(
                "PerplexityMetric.update takes exactly one of `loss` and `logits`. Received: "
                f"loss={'None' if loss is None else 'a tensor'}, "
                f"logits={'None' if logits is None else 'a tensor'}"
            )
        values = check_tensor(
            "logits" if loss is None else "loss", loss if logits is None else logits
        )
        bad_labels: Tensor | None = None
        if logits is not None or is_logits(labels, values):
            total_loss, total_tokens, bad_labels = perplexity_logits_update(
                labels, values, weights, self.ignore_index
            )
        else:
            total_loss, total_tokens = perplexity_loss_update(
                labels, values, weights, self.loss_reduction, self.ignore_index
            )
            if self._undeclared and values.numel() == 1 and labels.numel() > 1:
                self._warn_undeclared(values)
        if self.check_values:
            nonfinite = count_nonfinite(values if bad_labels is None else total_loss.reshape(1))
            self.record_errors(
                nonfinite_loss=nonfinite,
                negative_weights=count_negative(weights),
                invalid_labels=bad_labels,
            )
        self.total_loss.add_(total_loss)
        self.total_tokens.add_(total_tokens)

    def _warn_undeclared(self, loss: Tensor) -> None:
        if tracing(loss) or loss.grad_fn is not None:
            return  # nothing may be read, or the autograd node was already checked
        self._undeclared = False
        warnings.warn(
            f"PerplexityMetric `{self.name}` reads the one-number `loss` as the loss summed over "
            "the batch's tokens (cstorch's input). If it is a mean (PyTorch's default "
            "reduction), the perplexity comes out near 1: construct it with "
            "loss_reduction='mean', or pass the logits, `update(labels, logits)`. Pass "
            "loss_reduction='sum' to declare a sum and silence this warning.",
            stacklevel=user_stacklevel(),
        )

    def compute(self) -> Tensor:
        return torch.exp(mean_compute(self.total_loss, self.total_tokens))
