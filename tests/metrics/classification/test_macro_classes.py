"""Which classes "macro" averages over, by name, against scikit-learn: "all" (cstorch's rule,
the default) is `labels=range(C)`; "seen" is scikit-learn's default `labels=None`. And a
multiclass accuracy refuses one-hot labels instead of thresholding them."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import f1_score, fbeta_score, precision_score, recall_score

from torchtally.metrics import (
    AccuracyMetric,
    F1ScoreMetric,
    FBetaScoreMetric,
    PrecisionMetric,
    RecallMetric,
)

C = 5


def _data(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    n = draw(st.integers(1, 30))
    # few classes drawn, so that absent classes are common
    used = draw(st.lists(st.integers(0, C - 1), min_size=1, max_size=3, unique=True))
    labels = draw(st.lists(st.sampled_from(used), min_size=n, max_size=n))
    predicted = draw(st.lists(st.sampled_from(used), min_size=n, max_size=n))
    return np.array(labels), np.array(predicted)


CASES = [
    (PrecisionMetric, {}, precision_score, {}),
    (RecallMetric, {}, recall_score, {}),
    (F1ScoreMetric, {}, f1_score, {}),
    (FBetaScoreMetric, {"beta": 2.0}, fbeta_score, {"beta": 2.0}),
]


@pytest.mark.parametrize(("cls", "kwargs", "oracle", "oracle_kwargs"), CASES)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_macro_over_all_and_over_seen_classes_equal_scikit_learn(
    cls: type, kwargs: dict, oracle: object, oracle_kwargs: dict, data: st.DataObject
) -> None:
    labels, predicted = data.draw(st.composite(_data)())
    for rule, sklearn_labels in (("all", list(range(C))), ("seen", None)):
        metric = cls(C, average_type="macro", macro_classes=rule, **kwargs)
        metric.update(torch.tensor(labels), torch.tensor(predicted))
        expected = oracle(  # type: ignore[operator]
            labels,
            predicted,
            labels=sklearn_labels,
            average="macro",
            zero_division=0,
            **oracle_kwargs,
        )
        assert float(metric.compute()) == pytest.approx(expected, abs=1e-6), rule


def test_the_issue_example_one_correct_sample_of_four_classes() -> None:
    for rule, expected in (("all", 0.25), ("seen", 1.0)):
        metric = F1ScoreMetric(4, average_type="macro", macro_classes=rule)
        metric.update(torch.tensor([0]), torch.tensor([0]))
        assert float(metric.compute()) == expected


def test_macro_classes_is_checked() -> None:
    with pytest.raises(ValueError, match=r"Argument `macro_classes` must be one of"):
        PrecisionMetric(3, average_type="macro", macro_classes="present")


def test_multiclass_accuracy_refuses_one_hot_labels_shaped_like_the_scores() -> None:
    labels = torch.nn.functional.one_hot(torch.tensor([0, 1, 2, 3]), 4)
    scores = torch.tensor(
        [[0.7, 0.1, 0.1, 0.1], [0.1, 0.7, 0.1, 0.1], [0.6, 0.2, 0.1, 0.1], [0.1, 0.1, 0.1, 0.7]]
    )
    with pytest.raises(TypeError, match=r"Argument `predictions`.*labels.argmax"):
        AccuracyMetric(num_classes=4).update(labels, scores)
    accuracy = AccuracyMetric(num_classes=4)
    accuracy.update(labels.argmax(-1), scores)
    assert float(accuracy.compute()) == 0.75


@pytest.mark.parametrize(
    "predictions",
    [torch.tensor([0.1, 0.9]), torch.tensor([0.0, 2.0]), torch.tensor([float("nan"), 0.9])],
    ids=["binary-scores", "float-indices", "nan-score"],
)
def test_multiclass_accuracy_refuses_floats_shaped_like_the_labels(
    predictions: torch.Tensor,
) -> None:
    metric = AccuracyMetric(num_classes=3)
    with pytest.raises(TypeError, match=r"Argument `predictions` must be integer class indices"):
        metric.update(torch.tensor([0, 1]), predictions)
    assert metric.num_updates == 0


@pytest.mark.parametrize(("cls", "kwargs", "oracle", "oracle_kwargs"), CASES)
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_ignore_index_leaves_padding_out_as_scikit_learn_on_the_kept_elements(
    cls: type, kwargs: dict, oracle: object, oracle_kwargs: dict, data: st.DataObject
) -> None:
    labels, predicted = data.draw(st.composite(_data)())
    padded = data.draw(st.lists(st.booleans(), min_size=len(labels), max_size=len(labels)))
    keep = ~np.array(padded)
    given_labels = np.where(keep, labels, -100)
    for average in ("macro", "micro", "weighted"):
        metric = cls(C, average_type=average, ignore_index=-100, **kwargs)
        metric.update(torch.tensor(given_labels), torch.tensor(predicted))
        if not keep.any():
            continue  # nothing kept: no oracle value to compare with
        expected = oracle(  # type: ignore[operator]
            labels[keep],
            predicted[keep],
            labels=list(range(C)),
            average=average,
            zero_division=0,
            **oracle_kwargs,
        )
        assert float(metric.compute()) == pytest.approx(expected, abs=1e-6), average


def test_ignore_index_is_no_label_error_and_is_checked() -> None:
    for rule, expected in (("all", 2 / 3), ("seen", 1.0)):  # class 1 is left with nothing
        metric = F1ScoreMetric(3, average_type="macro", ignore_index=-100, macro_classes=rule)
        metric.update(torch.tensor([0, -100, 2]), torch.tensor([0, 1, 2]))
        # -100 is neither counted nor an invalid label (compute would raise)
        assert float(metric.compute()) == pytest.approx(expected)
    with pytest.raises(ValueError, match=r"Argument `ignore_index` must be an integer"):
        PrecisionMetric(3, ignore_index=1.5)  # type: ignore[arg-type]
