"""TorchMetrics 1.9's `Perplexity` on torchtally (token log-likelihood sums, one summed sync) and
its string metrics (word and character error rate, match error rate, word information lost and
preserved, corpus BLEU): host work, summed into float64 states."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch import Tensor

from torchtally._errors import ErrorKinds, tracing
from torchtally.compat.torchmetrics._base import Metric
from torchtally.functional.aggregation import mean_compute, perplexity_logits_update
from torchtally.functional.text import (
    bleu_compute,
    bleu_counts,
    bleu_weights,
    edit_distance,
    error_counts,
)

__all__ = [
    "BLEUScore",
    "CharErrorRate",
    "MatchErrorRate",
    "Perplexity",
    "WordErrorRate",
    "WordInfoLost",
    "WordInfoPreserved",
]


class Perplexity(Metric):
    """TorchMetrics' `Perplexity`: `update(preds, target)` with logits `(B, T, V)` and token ids
    `(B, T)`; `exp(mean negative log-likelihood)` over the tokens whose id is not `ignore_index`
    (`torchtally.functional.aggregation.perplexity_logits_update`, the graph kept for the batch
    value: TorchMetrics' is differentiable).

    Token ids outside `[0, V)` that are not `ignore_index` are counted and raised at compute.
    """

    error_kinds = ErrorKinds(
        invalid_targets="token ids outside [0, vocabulary size) that are not ignore_index"
    )
    higher_is_better = False
    plot_lower_bound = 0.0
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

    def _batch(self, preds: Tensor, target: Tensor) -> dict[str, Any]:
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
        total, count, invalid = perplexity_logits_update(
            target, preds, ignore_index=self.ignore_index, detach=False
        )
        return {
            "total_log_probs": total,
            "count": count,
            "_errors": {"invalid_targets": invalid},
        }

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        mean_loss = mean_compute(state["total_log_probs"], state["count"])
        return mean_loss.exp().to(torch.get_default_dtype())


class _ErrorRate(Metric):
    """Edit operations over reference length, on two summed float64 states. The inputs are
    Python strings: host work by nature, so `update` raises inside a traced step."""

    _unit = "word"
    higher_is_better = False
    plot_lower_bound = 0.0
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


def _word_pairs(
    preds: str | list[str], target: str | list[str], metric: Metric
) -> list[tuple[list[str], list[str]]]:
    """Word lists of each (prediction, reference) pair; refuses a traced step (host work)."""
    if tracing(metric.update_counter):
        raise RuntimeError(
            f"`{type(metric).__name__}` takes Python strings, which is host work: update it "
            "outside torch.compile / traced steps (after decoding the step's outputs)."
        )
    predictions = [preds] if isinstance(preds, str) else list(preds)
    references = [target] if isinstance(target, str) else list(target)
    if not all(isinstance(x, str) for x in (*predictions, *references)):
        raise TypeError("Arguments `preds` and `target` must be strings or lists of strings.")
    if len(predictions) != len(references):
        raise ValueError(
            "Arguments `preds` and `target` must hold as many strings. "
            f"Received: {len(predictions)} and {len(references)}"
        )
    return [(p.split(), r.split()) for p, r in zip(predictions, references, strict=True)]


def _scalar(value: float, like: Tensor) -> Tensor:
    return torch.tensor(float(value), dtype=torch.float64, device=like.device)


class MatchErrorRate(Metric):
    """TorchMetrics' `MatchErrorRate`: word edit operations over, per pair, the longer of the
    reference and the prediction (host work: strings; raises inside a traced step)."""

    higher_is_better = False
    plot_lower_bound = 0.0
    is_differentiable = False

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.register_state("errors", torch.zeros((), dtype=torch.float64), False, "sum")
        self.register_state("total", torch.zeros((), dtype=torch.float64), False, "sum")

    def _batch(self, preds: str | list[str], target: str | list[str]) -> dict[str, Tensor]:
        pairs = _word_pairs(preds, target, self)
        errors = sum(edit_distance(p, r) for p, r in pairs)
        total = sum(max(len(p), len(r)) for p, r in pairs)
        return {"errors": _scalar(errors, self.errors), "total": _scalar(total, self.total)}

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        return (state["errors"] / state["total"]).to(torch.get_default_dtype())


class _WordInformation(Metric):
    """TorchMetrics' word-information statistics: `errors` is the summed edit distance minus
    the summed longer length (minus the matched words, as TorchMetrics keeps it), with the
    reference and prediction word counts."""

    is_differentiable = False

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        for name in ("errors", "target_total", "preds_total"):
            self.register_state(name, torch.zeros((), dtype=torch.float64), False, "sum")

    def _batch(self, preds: str | list[str], target: str | list[str]) -> dict[str, Tensor]:
        pairs = _word_pairs(preds, target, self)
        errors = sum(edit_distance(p, r) - max(len(p), len(r)) for p, r in pairs)
        return {
            "errors": _scalar(errors, self.errors),
            "target_total": _scalar(sum(len(r) for _, r in pairs), self.errors),
            "preds_total": _scalar(sum(len(p) for p, _ in pairs), self.errors),
        }

    def _preserved(self, state: Mapping[str, Tensor]) -> Tensor:
        errors = state["errors"]
        return (errors / state["target_total"]) * (errors / state["preds_total"])


class WordInfoPreserved(_WordInformation):
    """TorchMetrics' `WordInfoPreserved` (host work: strings; raises inside a traced step)."""

    higher_is_better = True

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        return self._preserved(state).to(torch.get_default_dtype())


class WordInfoLost(_WordInformation):
    """TorchMetrics' `WordInfoLost`: one minus the word information preserved (host work:
    strings; raises inside a traced step)."""

    higher_is_better = False
    plot_lower_bound = 0.0

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        return (1 - self._preserved(state)).to(torch.get_default_dtype())


def bleu_arguments(n_gram: Any, weights: Sequence[float] | None) -> list[float]:
    """TorchMetrics' BLEU argument checks (its message for a wrong number of weights), then
    the per-order weights."""
    if isinstance(n_gram, bool) or not isinstance(n_gram, int) or n_gram < 1:
        raise ValueError(f"Argument `n_gram` must be an integer >= 1. Received: n_gram={n_gram!r}")
    if weights is not None and len(weights) != n_gram:
        raise ValueError(
            f"List of weights has different weights than `n_gram`: {len(weights)} != {n_gram}"
        )
    return bleu_weights(n_gram, weights)


class BLEUScore(Metric):
    """TorchMetrics' `BLEUScore`: corpus BLEU of `update(preds, target)`, predictions against
    one or more references each (`torchtally.functional.text.bleu_score`).

    The n-grams are counted on the host (strings: `update` raises inside a traced step) into
    four summed float64 states (matched and predicted n-grams per order, prediction and
    reference lengths), so memory is constant and the sync is one sum. As in TorchMetrics: a
    tie between two reference lengths takes the first listed, and the score is 0 when any
    order has no match, smoothed or not. Unlike it, a single string is one prediction (or
    reference), not a list of characters, and `preds` and `target` of different lengths raise.

    Args:
        n_gram: The highest n-gram order (default 4).
        smooth: Add one to the matched and predicted counts of the orders above the first.
        weights: Per-order weights (default uniform).
    """

    is_differentiable = False
    higher_is_better = True
    full_state_update = True
    plot_lower_bound = 0.0
    plot_upper_bound = 1.0

    def __init__(
        self,
        n_gram: int = 4,
        smooth: bool = False,
        weights: Sequence[float] | None = None,
        **kwargs: Any,
    ) -> None:
        weight = bleu_arguments(n_gram, weights)
        super().__init__(**kwargs)
        self.n_gram = n_gram
        self.smooth = smooth
        self.weights = weight
        self.register_state("preds_len", torch.zeros((), dtype=torch.float64), False, "sum")
        self.register_state("target_len", torch.zeros((), dtype=torch.float64), False, "sum")
        self.register_state("numerator", torch.zeros(n_gram, dtype=torch.float64), False, "sum")
        self.register_state("denominator", torch.zeros(n_gram, dtype=torch.float64), False, "sum")

    def _batch(self, preds: str | Sequence[str], target: Sequence[Any]) -> dict[str, Tensor]:
        if tracing(self.numerator):
            raise RuntimeError(
                "`BLEUScore` takes Python strings, which is host work: update it outside "
                "torch.compile / traced steps (after decoding the step's outputs)."
            )
        matched, predicted, preds_len, target_len = bleu_counts(
            preds, target, self.n_gram, reference_tie="first"
        )
        device = self.numerator.device
        return {
            "preds_len": torch.tensor(float(preds_len), dtype=torch.float64, device=device),
            "target_len": torch.tensor(float(target_len), dtype=torch.float64, device=device),
            "numerator": torch.tensor(matched, dtype=torch.float64, device=device),
            "denominator": torch.tensor(predicted, dtype=torch.float64, device=device),
        }

    def _value(self, state: Mapping[str, Tensor]) -> Tensor:
        value = bleu_compute(
            state["numerator"],
            state["denominator"],
            state["preds_len"],
            state["target_len"],
            self.weights,
            self.smooth,
            zero_if_any_unmatched=True,
        )
        return value.to(torch.get_default_dtype())
