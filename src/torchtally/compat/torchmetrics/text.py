"""TorchMetrics 1.9's `Perplexity` on torchtally: token log-likelihood sums, one summed sync."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import Tensor

from torchtally._errors import tracing
from torchtally.compat.torchmetrics._base import Metric
from torchtally.functional.text import error_counts

__all__ = ["CharErrorRate", "Perplexity", "WordErrorRate"]


class Perplexity(Metric):
    """TorchMetrics' `Perplexity`: `update(preds, target)` with logits `(B, T, V)` and token ids
    `(B, T)`; `exp(mean negative log-likelihood)` over the tokens whose id is not `ignore_index`.

    Token ids outside `[0, V)` that are not `ignore_index` are counted and raised at compute.
    """

    error_kinds = ("token ids outside [0, vocabulary size) that are not ignore_index",)
    higher_is_better = False
    is_differentiable = True

    def __init__(self, ignore_index: int | None = None, **kwargs: Any) -> None:
        if ignore_index is not None and (
            not isinstance(ignore_index, int) or isinstance(ignore_index, bool)
        ):
            raise ValueError(
                f"Argument `ignore_index` must be None or an integer. Received: ignore_index={ignore_index!r}"
            )
        super().__init__(**kwargs)
        self.ignore_index = ignore_index
        self.register_state("total_log_probs", torch.zeros((), dtype=torch.float64), False, "sum")
        self.register_state("count", torch.zeros((), dtype=torch.float64), False, "sum")

    def _batch(self, preds: Tensor, target: Tensor) -> dict[str, Tensor]:
        if not isinstance(preds, Tensor) or preds.dim() != 3 or not preds.is_floating_point():
            raise ValueError(
                "Argument `preds` must be float logits of shape (batch, sequence, vocabulary); "
                "a mean loss is not accepted (use exp of it yourself). Received: "
                f"{tuple(preds.shape) if isinstance(preds, Tensor) else type(preds).__name__}"
            )
        if not isinstance(target, Tensor) or target.shape != preds.shape[:2]:
            raise ValueError(
                f"Argument `target` must be token ids of shape {tuple(preds.shape[:2])}. Received: "
                f"{tuple(target.shape) if isinstance(target, Tensor) else type(target).__name__}"
            )
        if target.is_floating_point():
            raise ValueError(
                "Argument `target` must hold integer token ids (the order is "
                f"update(preds, target)). Received dtype {target.dtype}"
            )
        vocabulary = preds.shape[-1]
        flat = target.reshape(-1).long()
        in_range = (flat >= 0) & (flat < vocabulary)
        counted = in_range if self.ignore_index is None else in_range & (flat != self.ignore_index)
        invalid = (
            ~in_range if self.ignore_index is None else ~in_range & (flat != self.ignore_index)
        )
        log_probs = preds.reshape(-1, vocabulary).float().log_softmax(-1)
        picked = log_probs.gather(1, flat.clamp(0, vocabulary - 1).unsqueeze(1)).squeeze(1)
        return {
            "total_log_probs": -torch.where(counted, picked, 0.0).double().sum(),
            "count": counted.double().sum(),
            "_errors": invalid.sum().reshape(1),
        }

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        return (state["total_log_probs"] / state["count"]).exp().to(torch.get_default_dtype())


class _ErrorRate(Metric):
    """Edit operations over reference length, on two summed float64 states. The inputs are
    Python strings: host work by nature, so `update` raises inside a traced step."""

    _unit = "word"
    higher_is_better = False
    is_differentiable = False

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.register_state("errors", torch.zeros((), dtype=torch.float64), False, "sum")
        self.register_state("total", torch.zeros((), dtype=torch.float64), False, "sum")

    def _batch(self, preds: str | list[str], target: str | list[str]) -> dict[str, Tensor]:
        if tracing(self.errors):
            raise RuntimeError(
                f"`{type(self).__name__}` takes Python strings, which is host work: update it "
                "outside torch.compile / traced steps (after decoding the step's outputs)."
            )
        errors, total = error_counts(preds, target, self._unit)
        device = self.errors.device
        return {
            "errors": torch.tensor(float(errors), dtype=torch.float64, device=device),
            "total": torch.tensor(float(total), dtype=torch.float64, device=device),
        }

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        return (state["errors"] / state["total"]).to(torch.get_default_dtype())


class WordErrorRate(_ErrorRate):
    """TorchMetrics' `WordErrorRate`: word edit operations over reference words."""

    _unit = "word"


class CharErrorRate(_ErrorRate):
    """TorchMetrics' `CharErrorRate`: character edit operations over reference characters."""

    _unit = "char"
