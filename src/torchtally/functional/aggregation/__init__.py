"""Aggregation functionals: the weighted mean (`mean_update` gives a batch's weighted sum and
weight total, `mean_compute` their ratio) and perplexity (exp of a mean token loss, from a
reduced loss or from logits)."""

from torchtally.functional.aggregation._mean import mean, mean_compute, mean_update, perplexity
from torchtally.functional.aggregation._perplexity import (
    perplexity_from_logits,
    perplexity_logits_update,
)

__all__ = [
    "mean",
    "mean_compute",
    "mean_update",
    "perplexity",
    "perplexity_from_logits",
    "perplexity_logits_update",
]
