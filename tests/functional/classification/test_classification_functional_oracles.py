"""Classification functionals against scikit-learn, on random data with absent classes, ties,
sample weights and ignored classes (hypothesis drives sizes, seeds and options)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from sklearn import metrics as sk

from torchtally.functional.classification._class_counts import class_counts
from torchtally.functional.classification._confusion_matrix import confusion_matrix
from torchtally.functional.classification._dice import dice_coefficient
from torchtally.functional.classification._mean_iou import mean_iou
from torchtally.functional.classification._mean_per_class_accuracy import (
    mean_per_class_accuracy,
)
from torchtally.functional.classification._precision_recall import (
    f1_score,
    fbeta_score,
    precision,
    recall,
)
from torchtally.functional.classification._top_k_accuracy import top_k_accuracy

AVERAGES = ["micro", "macro", "weighted", "none"]
SETTINGS = settings(max_examples=40, deadline=None)
# 72 parametrizations of precision/recall/F: fewer examples each keeps the file fast
PRF_SETTINGS = settings(max_examples=20, deadline=None)


def _quiet(oracle: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call scikit-learn with its undefined-metric warnings silenced (0 is what we expect)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return oracle(*args, **kwargs)


def _assert_close(got: torch.Tensor, expected: Any, rtol: float = 1e-9) -> None:
    assert got.dtype == torch.float64
    want = torch.as_tensor(np.asarray(expected, dtype=np.float64))
    torch.testing.assert_close(got, want.reshape(got.shape), rtol=rtol, atol=1e-12, equal_nan=True)


@st.composite
def multiclass(draw: st.DrawFn, min_classes: int = 2) -> dict[str, Any]:
    """Labels drawn from a subset of the classes (so some are absent), predictions right about
    half the time, optional positive weights, optional float64 scores."""
    num_classes = draw(st.integers(min_classes, 7))
    n = draw(st.integers(1, 60))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    seen = draw(st.integers(1, num_classes))
    labels = rng.integers(0, seen, n)
    guesses = rng.integers(0, draw(st.integers(1, num_classes)), n)
    predictions = np.where(rng.random(n) < 0.5, labels, guesses)
    weights = rng.uniform(0.1, 2.0, n) if draw(st.booleans()) else None
    ignore = sorted(set(draw(st.lists(st.integers(0, num_classes - 1), max_size=2))))
    return {
        "C": num_classes,
        "labels": labels,
        "predictions": predictions,
        "weights": weights,
        "ignore": ignore,
        "scores": rng.normal(size=(n, num_classes)),
    }


def _t(array: np.ndarray | None, dtype: torch.dtype | None = None) -> torch.Tensor | None:
    return None if array is None else torch.from_numpy(np.ascontiguousarray(array)).to(dtype)


def _sk_labels(
    data: dict[str, Any],
    average: str,
    y_pred: np.ndarray | None = None,
    present_only: bool = True,
) -> list[int]:
    """scikit-learn's `labels=` equivalent to our `ignore_labels` and averaging convention:
    every kept class for precision/recall/F (cstorch's macro counts absent classes as 0), the
    kept classes present for mean IoU and Dice."""
    if average == "none":
        return list(range(data["C"]))
    kept = [c for c in range(data["C"]) if c not in data["ignore"]]
    if not present_only:
        return kept
    y_pred = data["predictions"] if y_pred is None else y_pred
    present = set(data["labels"]) | set(y_pred)
    return [c for c in kept if c in present]


# ------------------------------------------------------------------ precision / recall / F


PRF = [
    ("precision", precision, sk.precision_score, {}),
    ("recall", recall, sk.recall_score, {}),
    ("f1", f1_score, sk.f1_score, {}),
    ("f0.5", fbeta_score, sk.fbeta_score, {"beta": 0.5}),
    ("f2", fbeta_score, sk.fbeta_score, {"beta": 2.0}),
    ("f0", fbeta_score, sk.fbeta_score, {"beta": 0.0}),
]


@pytest.mark.parametrize(("ours", "oracle", "extra"), [p[1:] for p in PRF], ids=[p[0] for p in PRF])
@pytest.mark.parametrize("average", AVERAGES)
@PRF_SETTINGS
@given(data=multiclass())
def test_multiclass_prf_matches_sklearn(ours, oracle, extra, average, data) -> None:
    use_scores = data["C"] > 2 and len(data["labels"]) % 2 == 0
    predictions = _t(data["scores"]) if use_scores else _t(data["predictions"])
    y_pred = data["scores"].argmax(1) if use_scores else data["predictions"]
    labels = _sk_labels(data, average, y_pred, present_only=False)
    assume(labels)  # every class ignored: scikit-learn has nothing to average
    got = ours(
        _t(data["labels"]),
        predictions,
        data["C"],
        average_type=average,
        ignore_labels=data["ignore"] or None,
        weights=_t(data["weights"]),
        **extra,
    )
    expected = _quiet(
        oracle,
        data["labels"],
        y_pred,
        labels=labels,
        average=None if average == "none" else average,
        sample_weight=data["weights"],
        **extra,
    )
    _assert_close(got, expected)


@st.composite
def binary(draw: st.DrawFn) -> dict[str, Any]:
    n = draw(st.integers(1, 60))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    positive_rate = draw(st.sampled_from([0.0, 0.3, 0.5, 1.0]))
    return {
        "labels": (rng.random(n) < positive_rate).astype(np.int64),
        "probabilities": rng.random(n),
        "threshold": draw(st.sampled_from([0.5, 0.25, 0.9])),
        "weights": rng.uniform(0.1, 2.0, n) if draw(st.booleans()) else None,
        "float32": draw(st.booleans()),
    }


@pytest.mark.parametrize(("ours", "oracle", "extra"), [p[1:] for p in PRF], ids=[p[0] for p in PRF])
@pytest.mark.parametrize("average", AVERAGES)
@PRF_SETTINGS
@given(data=binary())
def test_binary_prf_is_sklearns_positive_class_score(ours, oracle, extra, average, data) -> None:
    probabilities, threshold = data["probabilities"], data["threshold"]
    if data["float32"]:  # torch compares float32 scores with the threshold cast to float32
        probabilities, threshold = probabilities.astype(np.float32), np.float32(threshold)
    y_pred = (probabilities > threshold).astype(np.int64)
    got = ours(
        _t(data["labels"]),
        _t(probabilities),
        None,
        average_type=average,
        threshold=data["threshold"],
        weights=_t(data["weights"]),
        **extra,
    )
    expected = _quiet(
        oracle, data["labels"], y_pred, average="binary", sample_weight=data["weights"], **extra
    )
    _assert_close(got, [expected] if average == "none" else expected)


@st.composite
def multilabel(draw: st.DrawFn) -> dict[str, Any]:
    num_labels = draw(st.integers(2, 5))
    n = draw(st.integers(1, 40))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    rates = rng.choice([0.0, 0.2, 0.6], size=num_labels)
    return {
        "L": num_labels,
        "labels": (rng.random((n, num_labels)) < rates).astype(np.int64),
        "scores": rng.random((n, num_labels)),
        "weights": rng.uniform(0.1, 2.0, n) if draw(st.booleans()) else None,
        "ignore": sorted(set(draw(st.lists(st.integers(0, num_labels - 1), max_size=1)))),
    }


@pytest.mark.parametrize(("ours", "oracle", "extra"), [p[1:] for p in PRF], ids=[p[0] for p in PRF])
@pytest.mark.parametrize("average", AVERAGES)
@PRF_SETTINGS
@given(data=multilabel())
def test_multilabel_prf_matches_sklearn(ours, oracle, extra, average, data) -> None:
    kept = [c for c in range(data["L"]) if c not in data["ignore"]]
    got = ours(
        _t(data["labels"]),
        _t(data["scores"]),
        data["L"],
        average_type=average,
        multilabel=True,
        ignore_labels=data["ignore"] or None,
        weights=_t(data["weights"]),
        **extra,
    )
    expected = _quiet(
        oracle,
        data["labels"],
        (data["scores"] > 0.5).astype(np.int64),
        labels=list(range(data["L"])) if average == "none" else kept,
        average=None if average == "none" else average,
        sample_weight=data["weights"],
        **extra,
    )
    _assert_close(got, expected)


# --------------------------------------------------------------------- per-class means


@SETTINGS
@given(data=multiclass())
def test_mean_per_class_accuracy_is_the_mean_recall_of_every_class(data) -> None:
    got = mean_per_class_accuracy(
        _t(data["labels"]), _t(data["predictions"]), data["C"], weights=_t(data["weights"])
    )
    # cstorch (and TF): every class counts, one absent from the labels as 0
    expected = _quiet(
        sk.recall_score,
        data["labels"],
        data["predictions"],
        labels=list(range(data["C"])),
        average="macro",
        zero_division=0,
        sample_weight=data["weights"],
    )
    _assert_close(got, expected)


@pytest.mark.parametrize(
    ("ours", "oracle"), [(mean_iou, sk.jaccard_score), (dice_coefficient, sk.f1_score)]
)
@SETTINGS
@given(data=multiclass())
def test_mean_iou_and_dice_average_the_present_classes(ours, oracle, data) -> None:
    labels = _sk_labels(data, "macro")
    got = ours(
        _t(data["labels"]),
        _t(data["predictions"]),
        data["C"],
        ignore_classes=data["ignore"] or None,
        weights=_t(data["weights"]),
    )
    if not labels:  # no present class left: 0, as cstorch
        assert float(got) == 0.0
        return
    expected = _quiet(
        oracle,
        data["labels"],
        data["predictions"],
        labels=labels,
        average="macro",
        sample_weight=data["weights"],
    )
    _assert_close(got, expected)


@SETTINGS
@given(data=multiclass(), height=st.integers(1, 4))
def test_segmentation_shapes_count_every_pixel(data, height) -> None:
    n = len(data["labels"]) // height * height
    assume(n > 0)
    labels, predictions = data["labels"][:n], data["predictions"][:n]
    shaped = (n // height, height)
    got = mean_iou(_t(labels.reshape(shaped)), _t(predictions.reshape(shaped)), data["C"])
    expected = _quiet(sk.jaccard_score, labels, predictions, average="macro")
    _assert_close(got, expected)


# ------------------------------------------------------------------- confusion matrix


@pytest.mark.parametrize("normalize", [None, "true", "pred", "all"])
@SETTINGS
@given(data=multiclass())
def test_confusion_matrix_matches_sklearn(normalize, data) -> None:
    got = confusion_matrix(
        _t(data["labels"]),
        _t(data["scores"]),
        data["C"],
        normalize=normalize,
        weights=_t(data["weights"]),
    )
    expected = sk.confusion_matrix(
        data["labels"],
        data["scores"].argmax(1),
        labels=list(range(data["C"])),
        sample_weight=data["weights"],
        normalize=normalize,
    )
    _assert_close(got, expected)


# ---------------------------------------------------------------------- top-k accuracy


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@SETTINGS
@given(data=multiclass(min_classes=3), k=st.integers(1, 7), ties=st.booleans())
def test_top_k_accuracy_matches_sklearn_ties_included(dtype, data, k, ties) -> None:
    scores = data["scores"].astype(dtype)
    if ties:  # a few distinct values: ties everywhere, broken as scikit-learn breaks them
        scores = np.round(scores).astype(dtype)
    got = top_k_accuracy(_t(data["labels"]), _t(scores), k=k, weights=_t(data["weights"]))
    expected = _quiet(
        sk.top_k_accuracy_score,
        data["labels"],
        scores,
        k=k,
        labels=list(range(data["C"])),
        sample_weight=data["weights"],
    )
    _assert_close(got, expected, rtol=1e-9 if dtype == np.float64 else 1e-5)


# ------------------------------------------------------------------ the shared counts


@SETTINGS
@given(data=multiclass())
def test_class_counts_are_the_multilabel_confusion_matrix(data) -> None:
    got = class_counts(_t(data["labels"]), _t(data["predictions"]), data["C"])
    mcm = sk.multilabel_confusion_matrix(
        data["labels"], data["predictions"], labels=list(range(data["C"]))
    )
    tp = mcm[:, 1, 1]
    _assert_close(got, np.stack([tp, tp + mcm[:, 0, 1], tp + mcm[:, 1, 0]]))


def test_invalid_inputs_are_left_out_of_every_count() -> None:
    labels = torch.tensor([0, 1, 3, -1, 2, 1])
    predictions = torch.tensor([0, 5, 1, 0, 2, 1])
    got = class_counts(labels, predictions, 3)
    # only (0, 0), (2, 2) and (1, 1) are valid pairs
    expected = [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    torch.testing.assert_close(got, torch.tensor(expected, dtype=torch.float64))
    binary = class_counts(torch.tensor([1, 2, 1, 0]), torch.tensor([1, 1, 7, 1]))
    torch.testing.assert_close(binary, torch.tensor([[1.0], [2.0], [1.0]], dtype=torch.float64))


def test_argument_errors_name_the_argument() -> None:
    labels, predictions = torch.tensor([0, 1]), torch.tensor([0, 1])
    with pytest.raises(ValueError, match=r"`num_classes` must be an integer >= 2 or None"):
        precision(labels, predictions, 1)
    with pytest.raises(ValueError, match=r"`average_type` must be one of"):
        precision(labels, predictions, 3, average_type="samples")
    with pytest.raises(
        ValueError, match=r"`ignore_labels` must hold integers in \[0, num_classes\) = \[0, 3\)"
    ):
        recall(labels, predictions, 3, ignore_labels=[3])
    with pytest.raises(ValueError, match=r"`ignore_labels` must be None for binary"):
        recall(labels, predictions, ignore_labels=[0])
    with pytest.raises(ValueError, match=r"`beta` must be a finite number >= 0"):
        fbeta_score(labels, predictions, 3, beta=float("inf"))
    with pytest.raises(TypeError, match=r"`labels` must hold integer class indices"):
        precision(labels.float(), predictions, 3)
    with pytest.raises(ValueError, match=r"last dimension of size num_classes"):
        precision(labels, torch.zeros(2, 4), 3)
    with pytest.raises(ValueError, match=r"labels.shape=\(2,\), num_classes=3"):
        precision(labels, predictions.float(), 3, multilabel=True)
    with pytest.raises(ValueError, match=r"`k` must be an integer >= 1"):
        top_k_accuracy(labels, torch.zeros(2, 3), k=0)
    with pytest.raises(ValueError, match=r"`normalize` must be one of"):
        confusion_matrix(labels, predictions, 3, normalize="rows")
    with pytest.raises(ValueError, match=r"`labels` and `weights` must have the same shape"):
        precision(labels, predictions, 3, weights=torch.ones(3))
