"""Streaming histogram and quantile functionals with a guaranteed error bound."""

from torchtally.functional.histogram._histogram import histogram_quantiles, histogram_update

__all__ = ["histogram_quantiles", "histogram_update"]
