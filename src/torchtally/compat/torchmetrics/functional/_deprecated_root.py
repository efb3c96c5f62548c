"""TorchMetrics 1.9 still offers its text and image functions at the root of
`torchmetrics.functional`, deprecated: the same function (and signature) after a FutureWarning
naming the module to import it from."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from torch import Tensor

from torchtally.compat.torchmetrics.functional import image, text

__all__ = [
    "bleu_score",
    "char_error_rate",
    "match_error_rate",
    "peak_signal_noise_ratio",
    "perplexity",
    "structural_similarity_index_measure",
    "word_error_rate",
    "word_information_lost",
    "word_information_preserved",
]

P = ParamSpec("P")
R = TypeVar("R")


def _deprecated(function: Callable[P, R], domain: str) -> Callable[P, R]:
    name = function.__name__

    @functools.wraps(function)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        warnings.warn(
            f"Importing `{name}` from `torchmetrics.functional` was deprecated and will be "
            f"removed in 2.0. Import `{name}` from `torchmetrics.{domain}` instead.",
            FutureWarning,
            stacklevel=2,
        )
        return function(*args, **kwargs)

    return wrapper


bleu_score = _deprecated(text.bleu_score, "text")
char_error_rate = _deprecated(text.char_error_rate, "text")
match_error_rate = _deprecated(text.match_error_rate, "text")
perplexity = _deprecated(text.perplexity, "text")
word_error_rate = _deprecated(text.word_error_rate, "text")
word_information_lost = _deprecated(text.word_information_lost, "text")
word_information_preserved = _deprecated(text.word_information_preserved, "text")
_psnr = _deprecated(image.peak_signal_noise_ratio, "image")


def peak_signal_noise_ratio(
    preds: Tensor,
    target: Tensor,
    data_range: float | tuple[float, float] = 3.0,
    base: float = 10.0,
    reduction: str | None = "elementwise_mean",
    dim: int | tuple[int, ...] | None = None,
) -> Tensor:
    """Deprecated root name of `functional.image.peak_signal_noise_ratio`, with the default
    `data_range=3.0` TorchMetrics gives it there (its docstring example's range)."""
    return _psnr(preds, target, data_range, base, reduction, dim)


structural_similarity_index_measure = _deprecated(
    image.structural_similarity_index_measure, "image"
)
