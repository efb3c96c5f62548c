"""Text functionals: word and character error rates and corpus BLEU (host work on strings;
BLEU's score from its counts is tensor arithmetic)."""

from torchtally.functional.text._bleu import (
    REFERENCE_TIES,
    bleu_compute,
    bleu_counts,
    bleu_score,
    bleu_weights,
)
from torchtally.functional.text._edit import (
    char_error_rate,
    edit_distance,
    error_counts,
    word_error_rate,
)

__all__ = [
    "REFERENCE_TIES",
    "bleu_compute",
    "bleu_counts",
    "bleu_score",
    "bleu_weights",
    "char_error_rate",
    "edit_distance",
    "error_counts",
    "word_error_rate",
]
