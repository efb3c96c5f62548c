"""Aggregation functionals."""

from torchtally.functional.aggregation._mean import mean, perplexity

__all__ = ["mean", "perplexity"]
