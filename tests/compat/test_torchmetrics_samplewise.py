"""The stat-score classes with `multidim_average="samplewise"` (and multiclass
`num_classes=None`) against TorchMetrics 1.9 on random multi-dimensional inputs: every
`forward` value, `compute` over several updates, after `reset`, on a clone, merged and synced.

The oracle is TorchMetrics itself (its class, fed the same calls); for `num_classes=None` it is
TorchMetrics with the class count given (a micro average does not depend on it, and
TorchMetrics' own `num_classes=None` class counts the true negatives with one class).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
import torch
import torchmetrics as tm
from _tm_samplewise_workers import samplewise_synced
from hypothesis import given, settings
from hypothesis import strategies as st

from torchtally._errors import MetricValueError
from torchtally.compat import torchmetrics as ttm
from torchtally.distributed import run_local_ranks

#: Classes of each task whose constructor takes `multidim_average`, with their statistic.
_FAMILY = {
    "binary": (
        "Accuracy",
        "Precision",
        "Recall",
        "F1Score",
        "FBetaScore",
        "Specificity",
        "NegativePredictiveValue",
        "HammingDistance",
        "StatScores",
    ),
    "multiclass": (
        "Accuracy",
        "Precision",
        "Recall",
        "F1Score",
        "FBetaScore",
        "Specificity",
        "NegativePredictiveValue",
        "HammingDistance",
        "StatScores",
        "ExactMatch",
    ),
    "multilabel": (
        "Accuracy",
        "Precision",
        "Recall",
        "F1Score",
        "FBetaScore",
        "Specificity",
        "NegativePredictiveValue",
        "HammingDistance",
        "StatScores",
        "ExactMatch",
    ),
}
#: The classes whose `compute` honours `zero_division` in TorchMetrics 1.9 (its
#: NegativePredictiveValue classes drop it: see the test at the end).
_ZERO_DIVISION = ("Precision", "Recall", "F1Score", "FBetaScore")
_AVERAGES = ("micro", "macro", "weighted", "none", None)


@dataclass(frozen=True)
class Case:
    task: str
    name: str
    classes: int
    extra: tuple[int, ...]
    batches: tuple[int, ...]
    form: str  # labels, probs, logits
    average: Any
    top_k: int
    ignore_index: int | None
    zero_division: int
    seed: int

    def arguments(self) -> dict[str, Any]:
        args: dict[str, Any] = {"multidim_average": "samplewise"}
        if self.task == "multiclass":
            args["num_classes"] = self.classes
        elif self.task == "multilabel":
            args["num_labels"] = self.classes
        if self.ignore_index is not None:
            args["ignore_index"] = self.ignore_index
        if self.name == "ExactMatch":
            return args
        if self.task != "binary":
            args["average"] = self.average
        if self.task == "multiclass" and self.top_k > 1:
            args["top_k"] = self.top_k
        if self.name == "FBetaScore":
            args["beta"] = 2.0
        if self.name in _ZERO_DIVISION:
            args["zero_division"] = self.zero_division
        return args

    def batch(self, generator: torch.Generator, size: int) -> tuple[torch.Tensor, torch.Tensor]:
        classes = 2 if self.task == "binary" else self.classes
        if self.task == "multilabel":
            target = torch.randint(0, 2, (size, classes, *self.extra), generator=generator)
            preds_shape: tuple[int, ...] = tuple(target.shape)
        else:
            target = torch.randint(0, classes, (size, *self.extra), generator=generator)
            preds_shape = tuple(target.shape)
            if self.task == "multiclass" and self.form != "labels":
                preds_shape = (size, classes, *self.extra)
        if self.form == "labels":
            high = 2 if self.task != "multiclass" else classes
            preds = torch.randint(0, high, preds_shape, generator=generator)
        else:
            preds = torch.randn(preds_shape, generator=generator, dtype=torch.float32) * 3
            if self.form == "probs":
                preds = preds.softmax(1) if self.task == "multiclass" else preds.sigmoid()
        if self.ignore_index is not None:
            hide = torch.rand(target.shape, generator=generator) < 0.2
            target = torch.where(hide, self.ignore_index, target)
        return preds, target


@st.composite
def cases(draw: st.DrawFn) -> Case:
    task = draw(st.sampled_from(sorted(_FAMILY)))
    name = draw(st.sampled_from(_FAMILY[task]))
    classes = draw(st.integers(2, 4))
    extra = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=2)))
    # from 2 samples: TorchMetrics squeezes a batch of one sample (see the test below)
    batches = tuple(draw(st.lists(st.integers(2, 4), min_size=1, max_size=3)))
    form = draw(st.sampled_from(("labels", "probs", "logits")))
    average = draw(st.sampled_from(_AVERAGES))
    top_k = 1
    if task == "multiclass" and form != "labels" and name != "ExactMatch":
        top_k = draw(st.integers(1, classes))
    ignore_choices: list[int | None] = [None, -1]
    if task == "multiclass" and name != "ExactMatch":
        ignore_choices.append(0)  # a class: TorchMetrics still drops those positions
    ignore_index = draw(st.sampled_from(ignore_choices))
    return Case(
        task,
        name,
        classes,
        extra,
        batches,
        form,
        average,
        top_k,
        ignore_index,
        draw(st.sampled_from((0, 1))),
        draw(st.integers(0, 2**31 - 1)),
    )


def _build(library: Any, case: Case, **extra: Any) -> Any:
    cls = getattr(library.classification, case.task.capitalize() + case.name)
    return cls(**case.arguments(), **extra)


def _close(ours: torch.Tensor, theirs: torch.Tensor, what: str) -> None:
    assert ours.shape == theirs.shape, what
    torch.testing.assert_close(
        ours.double(), theirs.double(), rtol=1e-5, atol=1e-6, equal_nan=True, msg=what
    )


@settings(max_examples=200, deadline=None)
@given(cases())
def test_samplewise_classes_match_torchmetrics(case: Case) -> None:
    generator = torch.Generator().manual_seed(case.seed)
    data = [case.batch(generator, size) for size in case.batches]
    ours, theirs = _build(ttm, case), _build(tm, case)
    for step, (preds, target) in enumerate(data):
        _close(ours(preds, target), theirs(preds, target), f"forward {step}: {case}")
    _close(ours.compute(), theirs.compute(), f"compute: {case}")
    _close(ours.clone().compute(), theirs.compute(), f"clone: {case}")
    # merged: two metrics, each fed part of the batches, give the value over all of them
    first, second = _build(ttm, case), _build(ttm, case)
    for index, (preds, target) in enumerate(data):
        (first if index % 2 == 0 else second).update(preds, target)
    if len(data) > 1:
        ordered = _build(tm, case)
        for preds, target in data[0::2] + data[1::2]:
            ordered.update(preds, target)
        _close(first.merge_state(second).compute(), ordered.compute(), f"merge: {case}")
    ours.reset()
    theirs.reset()
    preds, target = data[-1]
    ours.update(preds, target)
    theirs.update(preds, target)
    _close(ours.compute(), theirs.compute(), f"after reset: {case}")


@settings(max_examples=100, deadline=None)
@given(
    name=st.sampled_from(("Accuracy", "Precision", "Recall", "F1Score", "HammingDistance")),
    classes=st.integers(2, 5),
    extra=st.lists(st.integers(1, 3), min_size=0, max_size=2),
    batches=st.lists(st.integers(2, 5), min_size=1, max_size=3),
    scores=st.booleans(),
    ignore_index=st.sampled_from((None, -1, 0)),
    samplewise=st.booleans(),
    seed=st.integers(0, 2**31 - 1),
)
def test_num_classes_none_gives_the_micro_value_of_the_class_count(
    name: str,
    classes: int,
    extra: list[int],
    batches: list[int],
    scores: bool,
    ignore_index: int | None,
    samplewise: bool,
    seed: int,
) -> None:
    if samplewise and not extra:
        extra = [2]
    generator = torch.Generator().manual_seed(seed)
    args: dict[str, Any] = {
        "average": "micro",
        "ignore_index": ignore_index,
        "multidim_average": "samplewise" if samplewise else "global",
    }
    cls = "Multiclass" + name
    ours = getattr(ttm.classification, cls)(num_classes=None, **args)
    theirs = getattr(tm.classification, cls)(num_classes=classes, **args)
    for size in batches:
        target = torch.randint(0, classes, (size, *extra), generator=generator)
        if scores:
            preds = torch.randn(size, classes, *extra, generator=generator)
        else:
            preds = torch.randint(0, classes, (size, *extra), generator=generator)
        if ignore_index is not None:
            target = torch.where(
                torch.rand(target.shape, generator=generator) < 0.3, ignore_index, target
            )
        _close(ours(preds, target), theirs(preds, target), f"forward {cls} {args}")
    _close(ours.compute(), theirs.compute(), f"compute {cls} {args}")


def test_torchmetrics_corner_case_of_issue_1691() -> None:
    target = torch.tensor([0, 1, 2, 0, 1, 2])
    micro = ttm.MulticlassAccuracy(num_classes=None, average="micro", ignore_index=0)
    reference = tm.classification.MulticlassAccuracy(num_classes=3, average="micro", ignore_index=0)
    assert micro(target, target) == reference(target, target) == 1.0


@pytest.mark.parametrize(
    ("name", "args", "shape"),
    [
        ("BinaryAccuracy", {}, (1, 3)),
        ("MultilabelAccuracy", {"num_labels": 2, "average": None}, (1, 2, 3)),
        ("MultilabelStatScores", {"num_labels": 2, "average": None}, (1, 2, 3)),
    ],
)
def test_one_sample_keeps_its_sample_dimension(
    name: str, args: dict[str, Any], shape: tuple[int, ...]
) -> None:
    # TorchMetrics squeezes the per-sample statistics, so one sample loses its dimension
    # (and a later batch of several then fails to concatenate for the multiclass/multilabel
    # ones); the drop-in keeps `(N, ...)` for every N: the same numbers.
    preds, target = torch.randint(0, 2, shape), torch.randint(0, 2, shape)
    ours = getattr(ttm.classification, name)(multidim_average="samplewise", **args)
    theirs = getattr(tm.classification, name)(multidim_average="samplewise", **args)
    value, reference = ours(preds, target), theirs(preds, target)
    assert value.shape[0] == 1
    _close(value.squeeze(0), reference, name)


def test_samplewise_rows_beyond_the_capacity_raise_at_compute() -> None:
    metric = ttm.MulticlassF1Score(3, multidim_average="samplewise", capacity=4)
    preds, target = torch.randint(0, 3, (3, 5)), torch.randint(0, 3, (3, 5))
    metric.update(preds, target)
    assert metric.compute().shape == (3,)
    metric.update(preds, target)
    with pytest.raises(
        MetricValueError, match="received 6 samples but its buffer holds capacity=4"
    ):
        metric.compute()
    metric.reset()
    metric.update(preds, target)
    assert metric.compute().shape == (3,)


@pytest.mark.parametrize(
    ("metric", "preds", "target"),
    [
        (ttm.BinaryAccuracy, torch.rand(4), torch.randint(0, 2, (4,))),
        (
            lambda **kw: ttm.MulticlassRecall(3, **kw),
            torch.rand(4, 3),
            torch.randint(0, 3, (4,)),
        ),
        (
            lambda **kw: ttm.MultilabelPrecision(3, **kw),
            torch.rand(4, 3),
            torch.randint(0, 2, (4, 3)),
        ),
        (
            lambda **kw: ttm.MultilabelExactMatch(3, **kw),
            torch.rand(4, 3),
            torch.randint(0, 2, (4, 3)),
        ),
    ],
)
def test_samplewise_needs_dimensions_to_reduce_over(
    metric: Any, preds: torch.Tensor, target: torch.Tensor
) -> None:
    with pytest.raises(ValueError, match="multidim_average='samplewise'"):
        metric(multidim_average="samplewise").update(preds, target)


def test_samplewise_members_of_a_collection_share_one_buffer_and_match_torchmetrics() -> None:
    def build(library: Any) -> Any:
        return library.MetricCollection(
            {
                "acc": library.classification.MulticlassAccuracy(4, multidim_average="samplewise"),
                "f1": library.classification.MulticlassF1Score(
                    4, average="weighted", multidim_average="samplewise"
                ),
                "stats": library.classification.MulticlassStatScores(
                    4, average=None, multidim_average="samplewise"
                ),
            }
        )

    ours, theirs = build(ttm), build(tm)
    generator = torch.Generator().manual_seed(3)
    for size in (3, 5):
        preds = torch.randn(size, 4, 6, generator=generator)
        target = torch.randint(0, 4, (size, 6), generator=generator)
        batch_ours, batch_theirs = ours(preds, target), theirs(preds, target)
        for key in batch_theirs:
            _close(batch_ours[key], batch_theirs[key], key)
        # as TorchMetrics, the groups are reported from the first update on
        assert ours.compute_groups_list == [["acc", "f1", "stats"]]
    total_ours, total_theirs = ours.compute(), theirs.compute()
    for key in total_theirs:
        _close(total_ours[key], total_theirs[key], key)


@pytest.fixture(scope="module")
def ranks() -> list[dict[str, Any]]:
    return run_local_ranks(samplewise_synced, 2, timeout=300)


@pytest.mark.slow
def test_samplewise_compute_over_two_ranks_matches_torchmetrics(
    ranks: list[dict[str, Any]],
) -> None:
    for rank in ranks:
        for key in rank:
            if key.startswith("ours/"):
                theirs = rank["theirs/" + key[5:]]
                torch.testing.assert_close(rank[key], theirs, msg=key)
    # every rank holds every sample of both ranks, in rank order
    assert ranks[0]["ours/f1/compute"] == ranks[1]["ours/f1/compute"]
    assert len(ranks[0]["ours/f1/compute"]) == 7 + 9


@pytest.mark.parametrize("task", ["binary", "multiclass", "multilabel"])
@pytest.mark.parametrize("multidim_average", ["global", "samplewise"])
def test_negative_predictive_value_honours_zero_division(task: str, multidim_average: str) -> None:
    # TorchMetrics 1.9's NegativePredictiveValue classes accept `zero_division` but their
    # `compute` never passes it on (0 always); its functions honour it. The drop-in's classes
    # give the functions' value.
    generator = torch.Generator().manual_seed(5)
    args: dict[str, Any] = {"multidim_average": multidim_average, "zero_division": 1}
    if task == "multiclass":
        args["num_classes"] = 3
        preds = torch.randint(0, 3, (4, 5), generator=generator)
        target = torch.randint(0, 3, (4, 5), generator=generator)
    else:
        shape = (4, 5) if task == "binary" else (4, 3, 5)
        preds, target = torch.ones(shape, dtype=torch.long), torch.zeros(shape, dtype=torch.long)
        if task == "multilabel":
            args["num_labels"] = 3
    name = f"{task}_negative_predictive_value"
    expected = getattr(tm.functional.classification, name)(preds, target, **args)
    metric = getattr(ttm.classification, f"{task.capitalize()}NegativePredictiveValue")(**args)
    _close(metric(preds, target), expected, name)
    _close(metric.compute(), expected, name)
