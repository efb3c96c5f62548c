"""Classification metrics: accumulated over random batch splits they equal scikit-learn on the
concatenation; the class-count family shares one statistic; arguments and bad data are
reported by name."""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import metrics as sk

from torchtally.metrics import (
    ConfusionMatrixMetric,
    DiceCoefficientMetric,
    F1ScoreMetric,
    FBetaScoreMetric,
    MeanIOUMetric,
    MeanPerClassAccuracyMetric,
    Metric,
    MetricCollection,
    MetricValueError,
    PrecisionMetric,
    RecallMetric,
    TopKAccuracyMetric,
)
from torchtally.metrics.classification._class_counts import ClassStatistic

C = 5  # classes in the multiclass cases


def _quiet(oracle: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return oracle(*args, **kwargs)


@st.composite
def stream(draw: st.DrawFn) -> dict[str, Any]:
    """A multiclass stream (labels from a subset of the classes, float scores right about half
    the time) with the cut points of its batches."""
    n = draw(st.integers(2, 80))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    labels = rng.integers(0, draw(st.integers(1, C)), n)
    scores = rng.normal(size=(n, C))
    scores[np.arange(n), labels] += rng.choice([0.0, 2.0], n)
    cuts = sorted(set(draw(st.lists(st.integers(1, n - 1), max_size=5))))
    weights = rng.uniform(0.1, 2.0, n) if draw(st.booleans()) else None
    return {"labels": labels, "scores": scores, "cuts": cuts, "weights": weights}


def _accumulate(metric: Metric, data: dict[str, Any], dtype: torch.dtype, **inputs: Any) -> Any:
    bounds = [0, *data["cuts"], len(data["labels"])]
    for a, b in itertools.pairwise(bounds):
        batch = {k: None if v is None else torch.from_numpy(v[a:b]) for k, v in inputs.items()}
        if batch.get("predictions") is not None and batch["predictions"].is_floating_point():
            batch["predictions"] = batch["predictions"].to(dtype)
        metric.update(**batch)
    return metric.compute()


def _kept(ignore: tuple[int, ...] = ()) -> list[int]:
    """Every class not ignored: cstorch's macro average counts absent classes as 0."""
    return sorted(set(range(C)) - set(ignore))


# (id, metric factory, oracle(y, y_pred, scores, weights)) for multiclass streams
MULTICLASS = [
    (
        "precision-macro",
        lambda: PrecisionMetric(C, "macro"),
        lambda y, p, s, w: sk.precision_score(
            y, p, average="macro", labels=_kept(), sample_weight=w
        ),
    ),
    (
        "recall-weighted-ignore",
        lambda: RecallMetric(C, "weighted", ignore_labels=[0]),
        lambda y, p, s, w: sk.recall_score(
            y, p, average="weighted", labels=_kept(ignore=(0,)), sample_weight=w
        ),
    ),
    (
        "fbeta-none",
        lambda: FBetaScoreMetric(C, beta=2.0, average_type="none"),
        lambda y, p, s, w: sk.fbeta_score(
            y, p, beta=2.0, average=None, labels=list(range(C)), sample_weight=w
        ),
    ),
    (
        "f1-micro-ignore",
        lambda: F1ScoreMetric(C, ignore_labels=[1, 2]),
        lambda y, p, s, w: sk.f1_score(y, p, average="micro", labels=[0, 3, 4], sample_weight=w),
    ),
    (
        "mean-per-class-accuracy",
        lambda: MeanPerClassAccuracyMetric(C),
        # the mean of every class's recall, an absent class counting 0 (as cstorch)
        lambda y, p, s, w: sk.recall_score(
            y, p, average="macro", labels=_kept(), sample_weight=w, zero_division=0
        ),
    ),
    (
        "mean-iou",
        lambda: MeanIOUMetric(C),
        lambda y, p, s, w: sk.jaccard_score(y, p, average="macro", sample_weight=w),
    ),
    (
        "dice",
        lambda: DiceCoefficientMetric(C),
        lambda y, p, s, w: sk.f1_score(y, p, average="macro", sample_weight=w),
    ),
    (
        "confusion-matrix-pred",
        lambda: ConfusionMatrixMetric(C, normalize="pred"),
        lambda y, p, s, w: sk.confusion_matrix(
            y, p, labels=list(range(C)), sample_weight=w, normalize="pred"
        ),
    ),
    (
        "top-2-accuracy",
        lambda: TopKAccuracyMetric(2),
        lambda y, p, s, w: sk.top_k_accuracy_score(
            y, s, k=2, labels=list(range(C)), sample_weight=w
        ),
    ),
]


@pytest.mark.parametrize(
    ("make", "oracle"), [m[1:] for m in MULTICLASS], ids=[m[0] for m in MULTICLASS]
)
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["f64", "f32"])
@settings(max_examples=20, deadline=None)
@given(data=stream())
def test_batches_accumulate_to_sklearn_on_the_whole(make, oracle, dtype, data) -> None:
    scores = data["scores"].astype(np.float32 if dtype == torch.float32 else np.float64)
    got = _accumulate(
        make(), data, dtype, labels=data["labels"], predictions=scores, weights=data["weights"]
    )
    expected = _quiet(oracle, data["labels"], scores.argmax(1), scores, data["weights"])
    want = torch.as_tensor(np.asarray(expected, dtype=np.float64)).reshape(got.shape)
    want = want.to(got.dtype)  # cstorch's metrics return float32
    rtol = 1e-5 if dtype == torch.float32 else 1e-9 if got.dtype == torch.float64 else 1e-6
    torch.testing.assert_close(got, want, rtol=rtol, atol=1e-12, equal_nan=True)


@settings(max_examples=30, deadline=None)
@given(data=stream(), threshold=st.sampled_from([0.5, 0.2]))
def test_binary_and_multilabel_batches_accumulate_to_sklearn(data, threshold) -> None:
    probabilities = 1.0 / (1.0 + np.exp(-data["scores"]))  # (n, C) as C independent labels
    indicators = (data["scores"] > 0.5).astype(np.int64)
    multilabel = FBetaScoreMetric(C, 0.5, "weighted", multilabel=True, threshold=threshold)
    got = _accumulate(multilabel, data, torch.float64, labels=indicators, predictions=probabilities)
    expected = _quiet(
        sk.fbeta_score,
        indicators,
        (probabilities > threshold).astype(int),
        beta=0.5,
        average="weighted",
    )
    assert float(got) == pytest.approx(expected, rel=1e-7, abs=1e-12)  # float32, as cstorch
    binary = RecallMetric(threshold=threshold)
    positive = indicators[:, 0]
    got = _accumulate(
        binary,
        data,
        torch.float64,
        labels=positive,
        predictions=probabilities[:, 1],
        weights=data["weights"],
    )
    expected = _quiet(
        sk.recall_score,
        positive,
        (probabilities[:, 1] > threshold).astype(int),
        sample_weight=data["weights"],
    )
    assert float(got) == pytest.approx(expected, rel=1e-9, abs=1e-12)


# ------------------------------------------------------------------ shared statistic


def _family(num_classes: int, **options: Any) -> list[Metric]:
    return [
        PrecisionMetric(num_classes, "macro", **options),
        RecallMetric(num_classes, "weighted", **options),
        FBetaScoreMetric(num_classes, 2.0, "none", **options),
        F1ScoreMetric(num_classes, ignore_labels=[0], **options),
        MeanPerClassAccuracyMetric(num_classes, **options),
        MeanIOUMetric(num_classes, ignore_classes=[1], **options),
        DiceCoefficientMetric(num_classes, **options),
    ]


def test_the_family_shares_one_statistic_and_computes_from_it_alone() -> None:
    family = _family(4)
    keys = {metric.shared_statistic() for metric in family}
    assert keys == {ClassStatistic("class_counts", "multiclass", 4, 0.5, True, "auto")}
    g = torch.Generator().manual_seed(0)
    labels, scores = torch.randint(0, 4, (50,), generator=g), torch.randn(50, 4, generator=g)
    owner = PrecisionMetric(4)
    owner.update(labels, scores)
    for own, shared in zip(_family(4), family):
        own.update(labels, scores)
        # only the shared state is copied: compute must depend on nothing else
        assert shared.state_names() == owner.state_names()
        for name in owner.state_names():
            getattr(shared, name).copy_(getattr(owner, name))
        torch.testing.assert_close(shared.compute(), own.compute(), equal_nan=True)


def test_statistic_keys_differ_when_the_update_differs() -> None:
    keys = [
        PrecisionMetric(4).shared_statistic(),
        PrecisionMetric(5).shared_statistic(),
        PrecisionMetric(4, threshold=0.3).shared_statistic(),
        PrecisionMetric(4, multilabel=True).shared_statistic(),
        PrecisionMetric().shared_statistic(),
        PrecisionMetric(4, check_values=False).shared_statistic(),
        ConfusionMatrixMetric(4).shared_statistic(),
        TopKAccuracyMetric(2).shared_statistic(),
    ]
    assert len(set(keys)) == len(keys)
    assert PrecisionMetric().shared_statistic() == RecallMetric().shared_statistic()
    assert hash(F1ScoreMetric(3, multilabel=True).shared_statistic()) == hash(
        PrecisionMetric(3, multilabel=True).shared_statistic()
    )


def test_multiclass_counts_derive_from_a_confusion_matrix() -> None:
    g = torch.Generator().manual_seed(1)
    labels, predictions = (
        torch.randint(0, 4, (60,), generator=g),
        torch.randint(0, 4, (60,), generator=g),
    )
    matrix = ConfusionMatrixMetric(4)
    matrix.update(labels, predictions)
    for derived, direct in zip(_family(4), _family(4)):
        assert derived.derives_from(matrix.shared_statistic())
        direct.update(labels, predictions)
        derived.load_derived(matrix)
        torch.testing.assert_close(derived.class_counts, direct.class_counts)
    assert not PrecisionMetric(4, threshold=0.3).derives_from(matrix.shared_statistic())
    assert not PrecisionMetric(3, multilabel=True).derives_from(
        ConfusionMatrixMetric(3).shared_statistic()
    )


# ----------------------------------------------------------------------- arguments


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda: PrecisionMetric(1),
            r"`num_classes` must be an integer >= 2 or None\. Received: num_classes=1",
        ),
        (
            lambda: RecallMetric(3, "samples"),
            r"`average_type` must be one of .*Received: average_type='samples'",
        ),
        (lambda: F1ScoreMetric(ignore_labels=[0]), r"`ignore_labels` must be None for binary"),
        (
            lambda: FBetaScoreMetric(3, beta=-1.0),
            r"`beta` must be a finite number >= 0\. Received: beta=-1\.0",
        ),
        (
            lambda: MeanIOUMetric(3, ignore_classes=[3]),
            r"`ignore_classes` must hold integers in \[0, num_classes\)",
        ),
        (
            lambda: DiceCoefficientMetric(None),
            r"`num_classes` must be an integer >= 2\. Received: num_classes=None",
        ),
        (lambda: MeanPerClassAccuracyMetric(0), r"`num_classes` must be an integer >= 2"),
        (lambda: ConfusionMatrixMetric(3, normalize="rows"), r"`normalize` must be one of"),
        (lambda: TopKAccuracyMetric(0), r"`k` must be an integer >= 1\. Received: k=0"),
        (lambda: PrecisionMetric(0, multilabel=True), r"`num_classes` must be an integer >= 1"),
    ],
)
def test_bad_arguments_name_the_argument(make, message) -> None:
    with pytest.raises(ValueError, match=message):
        make()


def test_default_names_come_from_the_class() -> None:
    names = [
        PrecisionMetric().name,
        RecallMetric().name,
        FBetaScoreMetric().name,
        F1ScoreMetric().name,
        MeanPerClassAccuracyMetric(2).name,
        MeanIOUMetric(2).name,
        DiceCoefficientMetric(2).name,
        ConfusionMatrixMetric(2).name,
        TopKAccuracyMetric(1).name,
    ]
    assert names == [
        "precision",
        "recall",
        "f_beta_score",
        "f1_score",
        "mean_per_class_accuracy",
        "mean_iou",
        "dice_coefficient",
        "confusion_matrix",
        "top_k_accuracy",
    ]


# ------------------------------------------------------------------------ bad data


def test_invalid_data_is_never_counted_even_unchecked() -> None:
    labels, predictions = torch.tensor([0, 1, 7, 2]), torch.tensor([0, 1, 1, -3])
    checked, unchecked = PrecisionMetric(3, "none"), PrecisionMetric(3, "none", check_values=False)
    for metric in (checked, unchecked):
        metric.update(labels, predictions)
        torch.testing.assert_close(
            metric.class_counts,
            torch.tensor([[1.0, 1.0, 0.0]] * 3, dtype=torch.float64),
        )
    with pytest.raises(
        MetricValueError,
        match=r"labels outside \[0, num_classes\) \(1 value\); predictions outside \[0, num_classes\) \(1 value\)",
    ):
        checked.compute()
    torch.testing.assert_close(
        unchecked.compute(), torch.tensor([1.0, 1.0, 0.0], dtype=torch.float64)
    )


def test_binary_and_multilabel_name_their_own_rule() -> None:
    binary = RecallMetric()
    binary.update(torch.tensor([0, 1, 2]), torch.tensor([0.2, 0.9, 0.9]))
    with pytest.raises(MetricValueError, match=r"labels other than 0 and 1 \(1 value\)"):
        binary.compute()
    multilabel = F1ScoreMetric(2, multilabel=True)
    multilabel.update(torch.tensor([[0, 1]]), torch.tensor([[2, 1]]), weights=torch.tensor([-1.0]))
    with pytest.raises(
        MetricValueError,
        match=r"predictions other than 0 and 1 \(1 value\); negative weights \(1 value\)",
    ):
        multilabel.compute()


def test_no_data_gives_zero_or_nan_as_documented() -> None:
    # ratios of empty counts are 0 (scikit-learn's zero division); cstorch's metrics give 0
    # with no data (macro averages count absent classes as 0; no valid class for IoU/Dice is 0)
    assert float(PrecisionMetric(3).compute()) == 0.0
    assert float(F1ScoreMetric()) == 0.0
    for metric in (
        PrecisionMetric(3, "macro"),
        FBetaScoreMetric(3, average_type="macro"),
        MeanIOUMetric(3),
        DiceCoefficientMetric(3),
        MeanPerClassAccuracyMetric(3),
    ):
        assert float(metric.compute()) == 0.0
    # a mean over no class at all is NaN (cstorch too: its 0/0 with every class ignored)
    assert torch.isnan(PrecisionMetric(3, "macro", ignore_labels=[0, 1, 2]).compute())
    assert torch.isnan(TopKAccuracyMetric(1).compute())


def test_a_collection_runs_one_update_for_the_whole_family() -> None:
    g = torch.Generator().manual_seed(2)
    labels, scores = torch.randint(0, 4, (64,), generator=g), torch.randn(64, 4, generator=g)
    makers: dict[str, Callable[[], Metric]] = {
        "p": lambda: PrecisionMetric(4, "macro"),
        "r": lambda: RecallMetric(4, "weighted"),
        "iou": lambda: MeanIOUMetric(4, ignore_classes=[0]),
    }
    shared = MetricCollection({k: make() for k, make in makers.items()})
    assert shared.groups == [["p", "r", "iou"]]
    derived = MetricCollection(
        {**{k: make() for k, make in makers.items()}, "cm": ConfusionMatrixMetric(4)}
    )
    # the class counts follow from the confusion matrix: only its update runs
    assert derived.groups == [["cm"]] and derived.derived == {"p": "cm"}
    for collection in (shared, derived):
        collection.update(labels, scores)
        values = collection.compute()
        for name, make in makers.items():
            alone = make()
            alone.update(labels, scores)
            torch.testing.assert_close(values[name], alone.compute())
