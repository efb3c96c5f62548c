"""TorchMetrics 1.9's text functions that have a compatible class: each is that class's value
on one batch (`one_batch`), so a function and its class cannot disagree."""

from __future__ import annotations

from torch import Tensor

from torchtally.compat.torchmetrics.functional._one_batch import compat_class, one_batch

__all__ = [
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
