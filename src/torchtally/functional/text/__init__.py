"""Text functionals: word and character error rates (host work on strings)."""

from torchtally.functional.text._edit import (
    char_error_rate,
    edit_distance,
    error_counts,
    word_error_rate,
)

__all__ = ["char_error_rate", "edit_distance", "error_counts", "word_error_rate"]
