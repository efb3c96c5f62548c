"""Multilabel functionals: Hamming score."""

from torchtally.functional.multilabel._hamming import hamming_score, hamming_update

__all__ = ["hamming_score", "hamming_update"]
