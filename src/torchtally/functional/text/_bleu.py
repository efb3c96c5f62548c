"""Corpus BLEU (Papineni et al. 2002): clipped n-gram precisions of predictions against one or
more references each, combined by a weighted geometric mean, times a brevity penalty.

Counting n-grams in strings is host work (`bleu_counts`, Python); what it returns is four
fixed-size statistics that add over batches (matched and predicted n-grams per order, the
prediction length and the effective reference length), and the score is tensor arithmetic on
them (`bleu_compute`, no host read: it traces).

    p_n = matched_n / predicted_n        (matched: each n-gram counted at most as often as
                                           in the reference that has most of it)
    BLEU = BP * exp(sum_n w_n log p_n),  BP = 1 if c > r else exp(1 - r / c)

with `c` the total prediction length and `r` the summed length of each prediction's closest
reference.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import torch
from torch import Tensor

from torchtally._errors import check_choice, check_int

__all__ = [
    "REFERENCE_TIES",
    "bleu_compute",
    "bleu_counts",
    "bleu_score",
    "bleu_weights",
]

REFERENCE_TIES = ("shortest", "first")
"""Which reference length counts when two are equally close to a prediction's: the shorter
("shortest", as NLTK and sacreBLEU) or the one listed first ("first", as TorchMetrics)."""


def _ngrams(tokens: Sequence[str], n_gram: int) -> Counter[tuple[str, ...]]:
    """Every n-gram of orders 1..n_gram with its count."""
    counts: Counter[tuple[str, ...]] = Counter()
    for order in range(1, n_gram + 1):
        for start in range(len(tokens) - order + 1):
            counts[tuple(tokens[start : start + order])] += 1
    return counts


def _corpus(
    preds: str | Sequence[str], target: Sequence[str | Sequence[str]]
) -> list[tuple[str, list[str]]]:
    """(prediction, its references) pairs, checked."""
    predictions = [preds] if isinstance(preds, str) else list(preds)
    references = [[item] if isinstance(item, str) else list(item) for item in target]
    if len(predictions) != len(references):
        raise ValueError(
            "Arguments `preds` and `target` must hold as many entries (one list of references "
            f"per prediction). Received: {len(predictions)} and {len(references)}"
        )
    for prediction, refs in zip(predictions, references):
        if not isinstance(prediction, str) or not all(isinstance(ref, str) for ref in refs):
            raise TypeError(
                "Arguments `preds` and `target` must be a string or strings, and per prediction "
                "a string or a list of reference strings."
            )
        if not refs:
            raise ValueError(
                "Argument `target` must give every prediction at least one reference. "
                f"Received: no reference for prediction {prediction!r}"
            )
    return list(zip(predictions, references))


def bleu_counts(
    preds: str | Sequence[str],
    target: Sequence[str | Sequence[str]],
    n_gram: int = 4,
    reference_tie: str = "shortest",
) -> tuple[list[int], list[int], int, int]:
    """The BLEU statistics of one batch, from whitespace-split words (host work).

    Args:
        preds: A prediction, or a list of them.
        target: Per prediction, a reference string or a list of reference strings.
        n_gram: The highest n-gram order.
        reference_tie: `REFERENCE_TIES`: the reference length taken when two are equally
            close to the prediction's.

    Returns:
        `(matched, predicted, preds_len, target_len)`: per order 1..n_gram the clipped matched
        n-grams and the predicted n-grams, the words of the predictions and the summed length
        of each prediction's closest reference.

    Example:
        >>> bleu_counts(["the cat is on the mat"], [["a cat is on the mat"]], n_gram=2)
        ([5, 4], [6, 5], 6, 6)
    """
    check_int("n_gram", n_gram, 1)
    check_choice("reference_tie", reference_tie, REFERENCE_TIES)
    matched = [0] * n_gram
    predicted = [0] * n_gram
    preds_len = target_len = 0
    for prediction, references in _corpus(preds, target):
        words = prediction.split()
        reference_words = [reference.split() for reference in references]
        preds_len += len(words)
        lengths = [len(ref) for ref in reference_words]
        if reference_tie == "shortest":
            target_len += min(lengths, key=lambda length: (abs(length - len(words)), length))
        else:
            target_len += min(lengths, key=lambda length: abs(length - len(words)))
        counts = _ngrams(words, n_gram)
        most: Counter[tuple[str, ...]] = Counter()
        for ref in reference_words:
            most |= _ngrams(ref, n_gram)
        for ngram, count in (counts & most).items():
            matched[len(ngram) - 1] += count
        for ngram, count in counts.items():
            predicted[len(ngram) - 1] += count
    return matched, predicted, preds_len, target_len


def bleu_weights(n_gram: int, weights: Sequence[float] | None) -> list[float]:
    """The per-order weights: uniform `1 / n_gram` by default, else `weights` (one per
    order, each >= 0)."""
    check_int("n_gram", n_gram, 1)
    if weights is None:
        return [1.0 / n_gram] * n_gram
    values = list(weights)
    if len(values) != n_gram:
        raise ValueError(
            f"Argument `weights` must hold one weight per n-gram order (n_gram={n_gram}). "
            f"Received: {len(values)} weights"
        )
    if not all(isinstance(w, (int, float)) and not isinstance(w, bool) and w >= 0 for w in values):
        raise ValueError(f"Argument `weights` must hold numbers >= 0. Received: {values!r}")
    return [float(w) for w in values]


def bleu_compute(
    matched: Tensor,
    predicted: Tensor,
    preds_len: Tensor,
    target_len: Tensor,
    weights: Sequence[float],
    smooth: bool = False,
    zero_if_any_unmatched: bool = False,
) -> Tensor:
    """BLEU from accumulated statistics (tensor arithmetic only: traceable), 0-d float64.

    Args:
        matched: `(n_gram,)` clipped matched n-grams per order.
        predicted: `(n_gram,)` predicted n-grams per order.
        preds_len: Total prediction length `c`.
        target_len: Total effective reference length `r`.
        weights: Per-order weights (`bleu_weights`).
        smooth: Add one to the matched and predicted counts of every order above the first
            (Lin and Och 2004), so a corpus with no matched 4-gram still scores.
        zero_if_any_unmatched: Score 0 whenever any order has no match, smoothed or not
            (TorchMetrics); otherwise an order with no match makes the score 0 only where it
            counts (unsmoothed, or the unigrams) and its weight is not 0.

    Example:
        >>> bleu_compute(torch.tensor([5.0, 4.0]), torch.tensor([6.0, 5.0]),
        ...              torch.tensor(6.0), torch.tensor(6.0), [0.5, 0.5])
        tensor(0.8165, dtype=torch.float64)
    """
    matched = matched.to(torch.float64)
    predicted = predicted.to(torch.float64)
    weight = torch.tensor(list(weights), dtype=torch.float64, device=matched.device)
    if smooth:
        extra = torch.ones_like(matched)
        extra[0] = 0.0
        matched_used, predicted_used = matched + extra, predicted + extra
    else:
        matched_used, predicted_used = matched, predicted
    precision = matched_used / predicted_used
    # p^0 = 1: an order weighted 0 never decides the score, matched or not
    log_terms = torch.where(weight > 0, weight * precision.log(), 0.0)
    geometric = log_terms.sum().exp()
    c, r = preds_len.to(torch.float64), target_len.to(torch.float64)
    brevity = torch.where(c > r, 1.0, (1 - r / c).exp())
    if zero_if_any_unmatched:
        zero = (matched == 0).any()
    else:
        zero = ((matched_used == 0) & (weight > 0)).any()
    return torch.where(zero, 0.0, brevity * geometric)


def bleu_score(
    preds: str | Sequence[str],
    target: Sequence[str | Sequence[str]],
    n_gram: int = 4,
    smooth: bool = False,
    weights: Sequence[float] | None = None,
    reference_tie: str = "shortest",
) -> Tensor:
    """Corpus BLEU of predictions against their references (see the module docstring).

    Example:
        >>> bleu_score(["the cat is on the mat"], [["there is a cat on the mat", "a cat is on the mat"]])
        tensor(0.7598, dtype=torch.float64)
    """
    weight = bleu_weights(n_gram, weights)
    matched, predicted, preds_len, target_len = bleu_counts(preds, target, n_gram, reference_tie)
    return bleu_compute(
        torch.tensor(matched, dtype=torch.float64),
        torch.tensor(predicted, dtype=torch.float64),
        torch.tensor(float(preds_len), dtype=torch.float64),
        torch.tensor(float(target_len), dtype=torch.float64),
        weight,
        smooth,
    )
