"""TorchMetrics 1.9's text functions that have a compatible class: each is that class's value
on one batch (`one_batch`), so a function and its class cannot disagree; `bleu_score` is the
native BLEU with the class's TorchMetrics conventions."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from torchtally.compat.torchmetrics.functional._one_batch import compat_class, one_batch
from torchtally.functional.text import bleu_compute, bleu_counts

__all__ = [
    "bleu_score",
    "char_error_rate",
    "match_error_rate",
    "perplexity",
    "word_error_rate",
    "word_information_lost",
    "word_information_preserved",
]

Texts = str | list[str]


def _value(name: str, preds: object, target: object) -> Tensor:
    return one_batch(compat_class(name, "text")(), preds, target)  # type: ignore[no-any-return]


def char_error_rate(preds: Texts, target: Texts) -> Tensor:
    """Character edit operations over reference characters.

    Example:
        >>> char_error_rate(["this is the prediction"], ["this is the reference"])
        tensor(0.3810)
    """
    return _value("CharErrorRate", preds, target)


def word_error_rate(preds: Texts, target: Texts) -> Tensor:
    """Word edit operations over reference words."""
    return _value("WordErrorRate", preds, target)


def match_error_rate(preds: Texts, target: Texts) -> Tensor:
    """Word edit operations over the longer of each pair's word counts."""
    return _value("MatchErrorRate", preds, target)


def word_information_lost(preds: Texts, target: Texts) -> Tensor:
    """1 - (hits / reference words) * (hits / predicted words)."""
    return _value("WordInfoLost", preds, target)


def word_information_preserved(preds: Texts, target: Texts) -> Tensor:
    """(hits / reference words) * (hits / predicted words)."""
    return _value("WordInfoPreserved", preds, target)


def perplexity(preds: Tensor, target: Tensor, ignore_index: int | None = None) -> Tensor:
    """exp(mean negative log-likelihood) of `(B, T, V)` logits over `(B, T)` token ids."""
    metric = compat_class("Perplexity", "text")(ignore_index=ignore_index)
    return one_batch(metric, preds, target)  # type: ignore[no-any-return]


def bleu_score(
    preds: str | Sequence[str],
    target: Sequence[str | Sequence[str]],
    n_gram: int = 4,
    smooth: bool = False,
    weights: Sequence[float] | None = None,
) -> Tensor:
    """Corpus BLEU of predictions against one or more references each, with `BLEUScore`'s
    TorchMetrics conventions (the first of two equally close reference lengths; 0 when any
    n-gram order has no match).

    Example:
        >>> bleu_score(["the cat is on the mat"], [["there is a cat on the mat", "a cat is on the mat"]])
        tensor(0.7598)
    """
    from torchtally.compat.torchmetrics.text import bleu_arguments

    if isinstance(preds, str):
        preds = [preds]
    references = [[item] if isinstance(item, str) else item for item in target]
    if len(preds) != len(references):
        raise ValueError(f"Corpus has different size {len(preds)} != {len(references)}")
    weight = bleu_arguments(n_gram, weights)
    matched, predicted, preds_len, target_len = bleu_counts(
        preds, references, n_gram, reference_tie="first"
    )
    value = bleu_compute(
        torch.tensor(matched, dtype=torch.float64),
        torch.tensor(predicted, dtype=torch.float64),
        torch.tensor(float(preds_len), dtype=torch.float64),
        torch.tensor(float(target_len), dtype=torch.float64),
        weight,
        smooth,
        zero_if_any_unmatched=True,
    )
    return value.to(torch.get_default_dtype())
