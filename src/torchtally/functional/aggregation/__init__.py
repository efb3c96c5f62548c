"""Aggregation functionals."""

from torchtally.functional.aggregation._mean import mean, perplexity
from torchtally.functional.aggregation._perplexity import perplexity_from_logits

__all__ = ["mean", "perplexity", "perplexity_from_logits"]
