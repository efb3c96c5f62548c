"""BLEU against its oracles: NLTK's `corpus_bleu` for the native score (the standard
conventions: the shorter of two equally close references, Lin and Och's smoothing), and
TorchMetrics 1.9's `BLEUScore` / `bleu_score` for the compat adapters (its conventions: the
first of two equally close references, 0 when any order has no match)."""

from __future__ import annotations

import warnings

import pytest
import torch
import torchmetrics
import torchmetrics.functional.text as tm_text
from hypothesis import given, settings
from hypothesis import strategies as st
from nltk.translate.bleu_score import SmoothingFunction, corpus_bleu

import torchtally.compat.torchmetrics as ttm
from torchtally.compat.torchmetrics.functional import text as our_text
from torchtally.functional.text import bleu_compute, bleu_counts, bleu_score

WORDS = ["a", "b", "c", "d", "the", "cat"]


def _sentence(min_words: int) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(WORDS), min_size=min_words, max_size=12).map(" ".join)


def corpora(min_words: int) -> st.SearchStrategy[tuple[list[str], list[list[str]]]]:
    return st.integers(1, 4).flatmap(
        lambda n: st.tuples(
            st.lists(_sentence(min_words), min_size=n, max_size=n),
            st.lists(st.lists(_sentence(0), min_size=1, max_size=3), min_size=n, max_size=n),
        )
    )


# NLTK floors each sentence's n-gram count at 1 (`max(1, count)`), which differs from a plain
# corpus count only for a prediction shorter than the order: predictions here have >= 4 words.
@settings(max_examples=150, deadline=None)
@given(corpora(min_words=4), st.integers(1, 4), st.booleans())
def test_native_bleu_is_nltks(
    corpus: tuple[list[str], list[list[str]]], n: int, smooth: bool
) -> None:
    preds, target = corpus
    weights = [1.0 / n] * n
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NLTK warns when an order has no match
        expected = corpus_bleu(
            [[ref.split() for ref in refs] for refs in target],
            [pred.split() for pred in preds],
            weights=weights,
            smoothing_function=SmoothingFunction().method2 if smooth else None,
        )
    got = float(bleu_score(preds, target, n, smooth))
    if expected < 1e-30:  # NLTK's stand-in for a zero precision: sys.float_info.min
        assert got == 0.0
    else:
        assert got == pytest.approx(expected, rel=1e-12)


@settings(max_examples=150, deadline=None)
@given(corpora(min_words=0), st.integers(1, 4), st.booleans())
def test_compat_bleu_is_torchmetrics(
    corpus: tuple[list[str], list[list[str]]], n: int, smooth: bool
) -> None:
    preds, target = corpus
    expected = tm_text.bleu_score(preds, target, n, smooth)
    got = our_text.bleu_score(preds, target, n, smooth)
    assert got.dtype == expected.dtype
    torch.testing.assert_close(got, expected, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("smooth", [False, True])
def test_class_is_torchmetrics_batch_by_batch(smooth: bool) -> None:
    batches = [
        (
            ["the cat is on the mat", "a cat"],
            [["there is a cat on the mat", "a cat is on the mat"], ["a cat sat"]],
        ),
        (["b c d a"], [["b c d a b", "c d a"]]),
        (["the the the cat"], [["the cat the cat"]]),
    ]
    weights = [0.4, 0.3, 0.2, 0.1]
    mine = ttm.text.BLEUScore(n_gram=4, smooth=smooth, weights=weights)
    theirs = torchmetrics.text.BLEUScore(n_gram=4, smooth=smooth, weights=weights)
    for preds, target in batches:
        torch.testing.assert_close(mine(preds, target), theirs(preds, target), atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(mine.compute(), theirs.compute(), atol=1e-6, rtol=1e-5)


def test_the_conventions_that_differ_are_parameters() -> None:
    # two references equally close (3 and 5 words for 4): NLTK takes 3, TorchMetrics the first
    preds, target = ["a b c d"], [["a b c d e", "a b c"]]
    assert bleu_counts(preds, target, 2)[3] == 3
    assert bleu_counts(preds, target, 2, reference_tie="first")[3] == 5
    # no 4-gram matched: smoothing scores it, unless any unmatched order makes it 0 (TorchMetrics)
    counts = [
        torch.tensor(v, dtype=torch.float64) for v in ([4.0, 2.0, 1.0, 0.0], [4.0, 3.0, 2.0, 1.0])
    ]
    lengths = torch.tensor(4.0), torch.tensor(4.0)
    weights = [0.25] * 4
    assert float(bleu_compute(*counts, *lengths, weights, smooth=True)) > 0
    assert (
        float(bleu_compute(*counts, *lengths, weights, smooth=True, zero_if_any_unmatched=True))
        == 0
    )


def test_the_score_from_counts_traces() -> None:
    compiled = torch.compile(bleu_compute, fullgraph=True, backend="aot_eager")
    args = (
        torch.tensor([5.0, 4.0]),
        torch.tensor([6.0, 5.0]),
        torch.tensor(6.0),
        torch.tensor(7.0),
    )
    torch.testing.assert_close(compiled(*args, [0.5, 0.5]), bleu_compute(*args, [0.5, 0.5]))


def test_arguments_and_errors() -> None:
    with pytest.raises(
        ValueError, match="List of weights has different weights than `n_gram`: 2 != 4"
    ):
        ttm.text.BLEUScore(weights=[0.5, 0.5])
    with pytest.raises(ValueError, match="Corpus has different size 1 != 2"):
        our_text.bleu_score(["a"], [["a"], ["b"]])
    metric = ttm.text.BLEUScore()
    with pytest.raises(ValueError, match="as many entries"):
        metric.update(["a b", "c"], [["a b"]])
    with pytest.raises(ValueError, match="at least one reference"):
        metric.update(["a b"], [[]])
    from torchtally.compat.torchmetrics.functional.text.bleu import bleu_score as module_function
    from torchtally.compat.torchmetrics.text.bleu import BLEUScore

    assert BLEUScore is ttm.BLEUScore and module_function is our_text.bleu_score
    for attribute in (
        "full_state_update",
        "is_differentiable",
        "higher_is_better",
        "plot_lower_bound",
        "plot_upper_bound",
    ):
        assert getattr(BLEUScore, attribute) == getattr(torchmetrics.text.BLEUScore, attribute)
    with pytest.warns(FutureWarning, match="Import `bleu_score` from `torchmetrics.text`"):
        ttm.functional.bleu_score(["a b"], [["a b"]])
