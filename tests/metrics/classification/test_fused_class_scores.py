"""The fused class-score updates (issue 26), which run off the CPU, run here on the CPU by
forcing them: they give the CPU paths' numbers and error counts exactly (the same messages),
scikit-learn's numbers on valid rows (ties included), the same under torch.compile, and the
same through merges, collections and large confusion matrices."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
import torch
from sklearn import metrics as skm
from torch import Tensor

from torchtally.metrics import (
    AccuracyMetric,
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
from torchtally.metrics.classification import _accuracy, _pair_counts, _top_k_accuracy

C = 6
INF, NAN = float("inf"), float("nan")
I64 = torch.iinfo(torch.int64)


@pytest.fixture
def fused(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every class-score update takes the fused formulation, as off the CPU."""
    for module in (_accuracy, _pair_counts, _top_k_accuracy):
        monkeypatch.setattr(module, "fuses", lambda predictions: True)


def _batch(
    seed: int, n: int, dtype: torch.dtype, bad: bool, classes: int = C
) -> tuple[Tensor, Tensor]:
    g = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, classes, (n,), generator=g)
    # few distinct values: many ties, for the argmax and the top-k ranks
    scores = torch.randint(-2, 3, (n, classes), generator=g).to(dtype) / 2
    if bad:
        labels[1], labels[2], labels[3] = -1, classes, I64.min
        labels[4] = I64.max
        scores[5, 2] = NAN
        scores[6, 1] = INF
        scores[7, :] = -INF  # every class masked: the row maximum is -inf
        scores[8, 0] = -INF  # one masked class: a legitimate score for the argmax
        labels[5] = -7  # a bad label in a row with a NaN score: counted as both
    return labels, scores


def _outcome(metric: Metric) -> tuple[str, Any]:
    try:
        value = metric.compute()
    except MetricValueError as error:
        return "error", str(error)
    return "value", value


def _assert_same(a: Metric, b: Metric) -> None:
    torch.testing.assert_close(a._errors, b._errors, rtol=0, atol=0)
    kind_a, got = _outcome(a)
    kind_b, want = _outcome(b)
    assert kind_a == kind_b, (got, want)
    if kind_a == "error":
        assert got == want
    else:
        torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True)


MAKERS: dict[str, Callable[..., Metric]] = {
    "accuracy": lambda **kw: AccuracyMetric(**kw),
    "accuracy-classes": lambda **kw: AccuracyMetric(num_classes=C, **kw),
    "confusion-matrix": lambda **kw: ConfusionMatrixMetric(C, **kw),
    "f1-macro": lambda **kw: F1ScoreMetric(C, average_type="macro", **kw),
    "precision-weighted": lambda **kw: PrecisionMetric(C, average_type="weighted", **kw),
    "recall-none-ignored": lambda **kw: RecallMetric(
        C, average_type="none", ignore_labels=[1], **kw
    ),
    "fbeta-micro": lambda **kw: FBetaScoreMetric(C, beta=2.0, average_type="micro", **kw),
    "mean-per-class-accuracy": lambda **kw: MeanPerClassAccuracyMetric(C, **kw),
    "mean-iou": lambda **kw: MeanIOUMetric(C, **kw),
    "dice-ignored": lambda **kw: DiceCoefficientMetric(C, ignore_classes=[0], **kw),
    "top-1": lambda **kw: TopKAccuracyMetric(1, **kw),
    "top-3": lambda **kw: TopKAccuracyMetric(3, **kw),
    "top-all": lambda **kw: TopKAccuracyMetric(C + 1, **kw),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("check_values", [True, False])
@pytest.mark.parametrize("name", list(MAKERS))
def test_the_fused_update_gives_the_cpu_paths_numbers_and_errors(
    name: str, check_values: bool, dtype: torch.dtype, monkeypatch: pytest.MonkeyPatch
) -> None:
    make = MAKERS[name]
    # Unchecked top-k is compared on NaN only: where the label's score and another are the
    # same infinity the fused ranks see no tie (a value error the checks would report).
    bad = check_values or not name.startswith("top")
    batches = [_batch(seed, 40, dtype, bad) for seed in range(3)]
    if not check_values and name.startswith("top"):
        batches = [(y, p.nan_to_num(posinf=0.0, neginf=0.0)) for y, p in batches]
        batches[0][1][5, 2] = NAN
    plain = make(check_values=check_values).coalesce_updates(False)
    for labels, scores in batches:
        plain.update(labels, scores)
    for module in (_accuracy, _pair_counts, _top_k_accuracy):
        monkeypatch.setattr(module, "fuses", lambda predictions: True)
    fused_metric = make(check_values=check_values).coalesce_updates(False)
    for labels, scores in batches:
        fused_metric.update(labels, scores)
    _assert_same(fused_metric, plain)


@pytest.mark.parametrize("name", ["accuracy", "confusion-matrix", "mean-iou", "top-3"])
def test_segmentation_shaped_batches_fuse_as_their_flattened_rows(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    labels, scores = _batch(9, 40, torch.float32, bad=True)
    # (2, 5, 4) labels with channel-last scores, and a channel-first layout moved last (a
    # non-contiguous view, flattened by a copy)
    images = labels.reshape(2, 5, 4)
    channel_first = scores.reshape(2, 5, 4, C).movedim(-1, 1).contiguous()
    plain = MAKERS[name]().coalesce_updates(False)
    plain.update(labels, scores)
    plain.update(labels, scores)
    for module in (_accuracy, _pair_counts, _top_k_accuracy):
        monkeypatch.setattr(module, "fuses", lambda predictions: True)
    fused_metric = MAKERS[name]().coalesce_updates(False)
    fused_metric.update(images, scores.reshape(2, 5, 4, C))
    fused_metric.update(images, channel_first.movedim(1, -1))
    _assert_same(fused_metric, plain)


def test_fused_error_counts_are_the_hand_counts(fused: None) -> None:
    labels, scores = _batch(1, 30, torch.float32, bad=True)
    invalid = int(((labels < 0) | (labels >= C)).sum())
    rows = torch.isfinite(scores.max(-1).values)
    nonfinite_rows = int((~rows).sum())
    for metric in (ConfusionMatrixMetric(C), F1ScoreMetric(C), AccuracyMetric(num_classes=C)):
        metric.update(labels, scores)
        assert metric._errors.tolist() == [invalid, 0, nonfinite_rows, 0, 0]
        with pytest.raises(MetricValueError, match=re.escape(f"({invalid} values)")):
            metric.compute()
    top = TopKAccuracyMetric(2)
    top.update(labels, scores)
    # top-k counts the samples with any non-finite score (a -inf class too: it ranks)
    samples = int((~torch.isfinite(scores)).any(-1).sum())
    assert samples > nonfinite_rows
    assert top._errors.tolist() == [invalid, samples, 0, 0]


def test_fused_numbers_are_scikit_learns_on_valid_rows(fused: None) -> None:
    batches = [_batch(seed, 50, torch.float32, bad=False) for seed in range(4)]
    labels = torch.cat([b[0] for b in batches]).numpy()
    scores = torch.cat([b[1] for b in batches])
    predicted = scores.argmax(-1).numpy()
    metrics = {
        "accuracy": AccuracyMetric(),
        "matrix": ConfusionMatrixMetric(C),
        "f1": F1ScoreMetric(C, average_type="macro"),
        "top-2": TopKAccuracyMetric(2),
        "top-4": TopKAccuracyMetric(4),
    }
    for y, p in batches:
        for metric in metrics.values():
            metric.update(y, p)
    everything = list(range(C))
    assert float(metrics["accuracy"].compute()) == pytest.approx(
        skm.accuracy_score(labels, predicted), abs=1e-7
    )
    assert (
        metrics["matrix"].compute().tolist()
        == skm.confusion_matrix(labels, predicted, labels=everything).tolist()
    )
    assert float(metrics["f1"].compute()) == pytest.approx(
        skm.f1_score(labels, predicted, average="macro", labels=everything, zero_division=0),
        abs=1e-12,
    )
    for k in (2, 4):
        # scikit-learn's tie order: among equal scores the higher class ranks first
        assert float(metrics[f"top-{k}"].compute()) == pytest.approx(
            skm.top_k_accuracy_score(labels, scores.double().numpy(), k=k, labels=everything),
            abs=1e-12,
        )


@pytest.mark.parametrize("name", ["accuracy", "confusion-matrix", "f1-macro", "top-3"])
def test_the_fused_update_compiles_to_one_graph_with_the_same_counts(
    name: str, fused: None
) -> None:
    eager, compiled = MAKERS[name](), MAKERS[name]()
    step = torch.compile(compiled.update, backend="aot_eager", fullgraph=True)
    for seed in range(3):
        labels, scores = _batch(seed, 24, torch.float32, bad=True)
        eager.update(labels, scores)
        step(labels, scores)
    _assert_same(compiled, eager)


def test_merges_and_resets_of_fused_states(fused: None) -> None:
    batches = [_batch(seed, 20, torch.float32, bad=seed == 1) for seed in range(3)]
    for make in (
        MAKERS["accuracy"],
        MAKERS["confusion-matrix"],
        MAKERS["f1-macro"],
        MAKERS["top-3"],
    ):
        whole, parts = make(), [make() for _ in batches]
        for batch, part in zip(batches, parts, strict=True):
            whole.update(*batch)
            part.update(*batch)
        _assert_same(parts[0].merge_state(parts[1:]), whole)
        whole.reset()
        assert not whole._errors.any()


def test_a_large_confusion_matrix_gathers_its_error_rows_to_check(fused: None) -> None:
    classes = 200  # a state of more than 2**16 elements: read through one cat
    labels, scores = _batch(3, 64, torch.float32, bad=True, classes=classes)
    metric, plain = ConfusionMatrixMetric(classes), ConfusionMatrixMetric(classes)
    metric.update(labels, scores)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_pair_counts, "fuses", lambda predictions: False)
        plain.update(labels, scores)
    _assert_same(metric, plain)


def test_collection_members_derived_from_fused_counts_raise_their_errors(fused: None) -> None:
    labels, scores = _batch(4, 30, torch.float32, bad=True)
    members = {
        "accuracy": AccuracyMetric(num_classes=C),
        "precision": PrecisionMetric(C, average_type="macro"),
        "confusion": ConfusionMatrixMetric(C),
    }
    alone = {name: type(m)(**_arguments(name)) for name, m in members.items()}
    collection = MetricCollection(members, share_statistics=True)
    assert collection.derived
    collection.update(labels, scores)
    for name, metric in alone.items():
        metric.update(labels, scores)
        _assert_same(collection[name], metric)
    good = _batch(5, 30, torch.float32, bad=False)
    fresh = MetricCollection(
        {name: type(m)(**_arguments(name)) for name, m in members.items()}, share_statistics=True
    )
    fresh.update(*good)
    for name in members:
        single = type(members[name])(**_arguments(name))
        single.update(*good)
        _assert_same(fresh[name], single)


def _arguments(name: str) -> dict[str, Any]:
    if name == "accuracy":
        return {"num_classes": C}
    if name == "precision":
        return {"num_classes": C, "average_type": "macro"}
    return {"num_classes": C}
