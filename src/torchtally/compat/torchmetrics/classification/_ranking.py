"""TorchMetrics' multilabel ranking metrics (coverage error, label ranking average precision,
label ranking loss) on two summed float64 states.

TorchMetrics loops over samples in Python (ranking average precision) or filters rows with
boolean masks (ranking loss); here every sample's value comes from `(N, L, L)` score
comparisons or a double argsort, masked with `torch.where`, so the update has fixed shapes and
never reads the data on the host. Scores outside [0, 1] go through a sigmoid per batch and
`ignore_index` positions get TorchMetrics' masking score `-4 * num_labels` (an ignored label
ranks last and is never relevant), so the values match TorchMetrics'.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import Tensor

from torchtally._errors import ErrorKinds
from torchtally.compat.torchmetrics._base import Metric
from torchtally.compat.torchmetrics.functional._stat_scores import sigmoid_if_logits

__all__ = [
    "MultilabelCoverageError",
    "MultilabelRankingAveragePrecision",
    "MultilabelRankingLoss",
]


class _Ranking(Metric):
    error_kinds = ErrorKinds(invalid_targets="targets that are neither 0, 1 nor ignore_index")
    is_differentiable = False

    def __init__(
        self,
        num_labels: int,
        ignore_index: int | None = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        if not isinstance(num_labels, int) or isinstance(num_labels, bool) or num_labels < 2:
            raise ValueError(
                f"Argument `num_labels` must be an integer >= 2. Received: num_labels={num_labels!r}"
            )
        if ignore_index is not None and (
            not isinstance(ignore_index, int) or isinstance(ignore_index, bool)
        ):
            raise ValueError(
                "Argument `ignore_index` must be None or an integer. "
                f"Received: ignore_index={ignore_index!r}"
            )
        super().__init__(**kwargs)
        self.num_labels, self.ignore_index = num_labels, ignore_index
        self.validate_args = validate_args
        self.register_state("measure", torch.zeros((), dtype=torch.float64), False, "sum")
        self.register_state("total", torch.zeros((), dtype=torch.float64), False, "sum")

    def _rows(self, preds: Tensor, target: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """`(scores (M, L) float64, relevant (M, L), candidates (M, L), invalid count)`:
        candidates are the relevant or ignored labels (TorchMetrics' `target != 0`)."""
        labels = self.num_labels
        if not isinstance(preds, Tensor) or not preds.is_floating_point():
            raise ValueError(
                "Argument `preds` must be a float tensor of scores or logits (order: "
                f"update(preds, target)). Received: {getattr(preds, 'dtype', type(preds))}"
            )
        if not isinstance(target, Tensor) or target.shape != preds.shape:
            raise ValueError(
                f"Argument `target` must have the shape of `preds` {tuple(preds.shape)}. "
                f"Received: {tuple(getattr(target, 'shape', ()))}"
            )
        if preds.dim() < 2 or preds.shape[1] != labels:
            raise ValueError(
                f"Argument `preds` must have shape (N, {labels}, ...) for num_labels={labels}. "
                f"Received: {tuple(preds.shape)}"
            )
        scores = sigmoid_if_logits(preds).double().movedim(1, -1).reshape(-1, labels)
        target = target.movedim(1, -1).reshape(-1, labels)
        ignored = (
            torch.zeros_like(target, dtype=torch.bool)
            if self.ignore_index is None
            else target == self.ignore_index
        )
        valid = (target == 0) | (target == 1) | ignored
        scores = torch.where(ignored, float(-4 * labels), scores)
        relevant = (target == 1) & ~ignored
        candidates = (target != 0) | ignored
        invalid = (~valid).sum() if self.validate_args else None
        return scores, relevant, candidates, invalid  # type: ignore[return-value]

    def _with_errors(self, batch: dict[str, Any], invalid: Tensor | None) -> dict[str, Any]:
        if invalid is not None:
            batch["_errors"] = {"invalid_targets": invalid}
        return batch

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        return (state["measure"] / state["total"]).to(torch.get_default_dtype())


class MultilabelCoverageError(_Ranking):
    """TorchMetrics' `MultilabelCoverageError`: per sample, how many labels score at least
    as high as the lowest-scored relevant label, averaged over samples (0 for a sample
    without relevant labels)."""

    higher_is_better = False
    plot_lower_bound = 0.0

    def _batch(self, preds: Tensor, target: Tensor) -> dict[str, Tensor]:
        scores, _, candidates, invalid = self._rows(preds, target)
        lowest = torch.where(candidates, scores, float("inf")).min(1, keepdim=True).values
        coverage = (scores >= lowest).sum(1).double()
        batch = {"measure": coverage.sum(), "total": coverage.new_full((), coverage.numel())}
        return self._with_errors(batch, invalid)


class MultilabelRankingAveragePrecision(_Ranking):
    """TorchMetrics' `MultilabelRankingAveragePrecision`: per sample, the mean over relevant
    labels of (relevant labels ranked at or above it) / (labels ranked at or above it); 1 for a
    sample with no or only relevant labels. Ties share the lowest rank, as TorchMetrics'."""

    higher_is_better = True

    def _batch(self, preds: Tensor, target: Tensor) -> dict[str, Tensor]:
        scores, relevant, _, invalid = self._rows(preds, target)
        # at_or_above[n, i, j]: label j scores at least as high as label i
        at_or_above = scores.unsqueeze(1) >= scores.unsqueeze(2)
        rank_all = at_or_above.sum(2).double()
        rank_relevant = (at_or_above & relevant.unsqueeze(1)).sum(2).double()
        ratio = torch.where(relevant, rank_relevant / rank_all, 0.0)
        count = relevant.sum(1)
        mean = ratio.sum(1) / count.clamp(min=1)
        partial = (count > 0) & (count < self.num_labels)
        score = torch.where(partial, mean, 1.0)
        batch = {"measure": score.sum(), "total": score.new_full((), score.numel())}
        return self._with_errors(batch, invalid)


class MultilabelRankingLoss(_Ranking):
    """TorchMetrics' `MultilabelRankingLoss`: per sample, the fraction of (relevant,
    irrelevant) label pairs ranked the wrong way round, summed over the samples with some but
    not all labels relevant and divided by the number of samples. As in TorchMetrics, a batch
    without any such sample adds 0 to the sum and 1 (not its size) to the count."""

    higher_is_better = False
    plot_lower_bound = 0.0

    def _batch(self, preds: Tensor, target: Tensor) -> dict[str, Tensor]:
        scores, relevant, _, invalid = self._rows(preds, target)
        labels = self.num_labels
        count = relevant.sum(1).double()
        partial = (count > 0) & (count < labels)
        position = scores.argsort(1).argsort(1).double()  # 0 = lowest score
        per_label = torch.where(relevant, labels - position, 0.0).sum(1)
        correction = 0.5 * count * (count + 1)
        pairs = count * (labels - count)
        loss = torch.where(partial, (per_label - correction) / pairs.clamp(min=1), 0.0)
        rows = float(scores.shape[0])
        total = torch.where(partial.any(), rows, 1.0).to(torch.float64)
        batch = {"measure": loss.sum(), "total": total.reshape(())}
        return self._with_errors(batch, invalid)
