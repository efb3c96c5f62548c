"""Word and character error rates (TorchMetrics' `WordErrorRate` / `CharErrorRate`).

The inputs are Python strings, so this is host work by nature: edit distances (Levenshtein:
substitutions, deletions, insertions) are computed in Python and only their sums become
tensors. Keep these metrics out of compiled or traced steps (they raise there).

    WER = sum of word edit distances / number of reference words
    CER = sum of character edit distances / number of reference characters
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["char_error_rate", "edit_distance", "error_counts", "word_error_rate"]


def edit_distance(prediction: Sequence[str], reference: Sequence[str]) -> int:
    """Levenshtein distance between two token sequences (one row of the DP table at a time)."""
    previous = list(range(len(reference) + 1))
    for i, token in enumerate(prediction, start=1):
        current = [i]
        for j, wanted in enumerate(reference, start=1):
            current.append(
                min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (token != wanted))
            )
        previous = current
    return previous[-1]


def _as_list(name: str, value: str | Sequence[str]) -> list[str]:
    items = [value] if isinstance(value, str) else list(value)
    if not all(isinstance(item, str) for item in items):
        raise TypeError(f"Argument `{name}` must be a string or a list of strings.")
    return items


def error_counts(
    preds: str | Sequence[str], target: str | Sequence[str], unit: str
) -> tuple[int, int]:
    """`(edit operations, reference length)` summed over the pairs, in words or chars."""
    predictions, references = _as_list("preds", preds), _as_list("target", target)
    if len(predictions) != len(references):
        raise ValueError(
            "Arguments `preds` and `target` must hold as many strings. "
            f"Received: {len(predictions)} and {len(references)}"
        )
    errors = total = 0
    for prediction, reference in zip(predictions, references):
        p = prediction.split() if unit == "word" else list(prediction)
        r = reference.split() if unit == "word" else list(reference)
        errors += edit_distance(p, r)
        total += len(r)
    return errors, total


def word_error_rate(preds: str | Sequence[str], target: str | Sequence[str]) -> float:
    """WER of a batch.

    Example:
        >>> word_error_rate(["this is the prediction"], ["this is the reference"])
        0.25
    """
    errors, total = error_counts(preds, target, "word")
    return errors / total if total else float("nan")


def char_error_rate(preds: str | Sequence[str], target: str | Sequence[str]) -> float:
    """CER of a batch.

    Example:
        >>> char_error_rate(["kitten"], ["sitting"])  # 3 edits over 7 characters
        0.42857142857142855
    """
    errors, total = error_counts(preds, target, "char")
    return errors / total if total else float("nan")
