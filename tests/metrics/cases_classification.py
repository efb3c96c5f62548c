"""Registry cases for the classification family (owned by the classification engineer).

Every metric, in each task (binary, multiclass, multilabel, segmentation-shaped) and input form
(indices, scores, weights), with bad inputs covering each of its error kinds.
"""

from __future__ import annotations

from typing import Any

import torch
from cases import Args, Case, labels_and_scores

from torchtally.metrics import (
    AccuracyMetric,
    ConfusionMatrixMetric,
    DiceCoefficientMetric,
    F1ScoreMetric,
    FBetaScoreMetric,
    MeanIOUMetric,
    MeanPerClassAccuracyMetric,
    PrecisionMetric,
    RecallMetric,
    TopKAccuracyMetric,
)

NAN = float("nan")
# test_common escapes only parentheses in a fragment, so fragments here avoid "[" (the kinds
# are "labels outside [0, num_classes)" and "predictions outside [0, num_classes)").
Bad = list[tuple[tuple[Any, ...], dict[str, Any], str]]


def _binary_scores(g: torch.Generator, n: int) -> Args:
    return (torch.randint(0, 2, (n,), generator=g), torch.rand(n, generator=g)), {}


def _binary_indices(g: torch.Generator, n: int) -> Args:
    labels = torch.randint(0, 2, (n,), generator=g)
    predictions = torch.randint(0, 2, (n,), generator=g, dtype=torch.int32)
    return (labels, predictions), {"weights": torch.rand(n, generator=g)}


def _multiclass_scores(num_classes: int) -> Any:
    return lambda g, n: (labels_and_scores(g, n, num_classes), {})


def _multiclass_indices(num_classes: int) -> Any:
    def batch(g: torch.Generator, n: int) -> Args:
        labels = torch.randint(0, num_classes, (n,), generator=g)
        predictions = torch.randint(0, num_classes, (n,), generator=g)
        return (labels, predictions), {"weights": torch.rand(n, generator=g) * 2}

    return batch


def _multilabel(num_labels: int, scores: bool) -> Any:
    def batch(g: torch.Generator, n: int) -> Args:
        labels = torch.randint(0, 2, (n, num_labels), generator=g)
        predictions = (
            torch.rand(n, num_labels, generator=g)
            if scores
            else torch.randint(0, 2, (n, num_labels), generator=g)
        )
        return (labels, predictions), {"weights": torch.rand(n, generator=g)}

    return batch


def _segmentation(num_classes: int, scores: bool) -> Any:
    def batch(g: torch.Generator, n: int) -> Args:
        labels = torch.randint(0, num_classes, (n, 4, 4), generator=g)
        if scores:
            logits = torch.randn(n, 4, 4, num_classes, generator=g)
            return (labels, logits + 2.0 * torch.nn.functional.one_hot(labels, num_classes)), {}
        predictions = torch.where(
            torch.rand(n, 4, 4, generator=g) < 0.7,
            labels,
            torch.randint(0, num_classes, (n, 4, 4), generator=g),
        )
        mask = (torch.rand(n, 4, 4, generator=g) < 0.9).float()
        return (labels, predictions), {"weights": mask}

    return batch


def _top_k(num_classes: int, ties: bool) -> Any:
    def batch(g: torch.Generator, n: int) -> Args:
        labels, scores = labels_and_scores(g, n, num_classes)
        if ties:  # coarse scores: many ties, broken as scikit-learn breaks them
            return (labels, scores.round()), {"weights": torch.rand(n, generator=g)}
        return (labels, scores), {}

    return batch


def _binary_logits_padded(g: torch.Generator, n: int) -> Args:
    """0/1 labels with -100 padding, and logits (declared: a split batch could fall in [0, 1])."""
    labels = torch.randint(0, 2, (n,), generator=g)
    labels = torch.where(torch.rand(n, generator=g) < 0.2, -100, labels)
    return (labels, torch.randn(n, generator=g) * 3), {}


def _binary_logits(g: torch.Generator, n: int) -> Args:
    return (torch.randint(0, 2, (n,), generator=g), torch.randn(n, generator=g) * 3), {}


def _multilabel_logits(num_labels: int) -> Any:
    def batch(g: torch.Generator, n: int) -> Args:
        labels = torch.randint(0, 2, (n, num_labels), generator=g)
        return (labels, torch.randn(n, num_labels, generator=g) * 2), {}

    return batch


_I = torch.tensor  # short for the literal bad inputs below


def _accuracy_bad(num_classes: int | None) -> Bad:
    bad: Bad = [
        ((_I([-1, 0]), torch.zeros(2, 3)), {}, "labels outside"),
        ((_I([0, 3]), torch.zeros(2, 3)), {}, "labels outside"),
        ((_I([0, 1]), _I([0, 1])), {"weights": _I([1.0, -1.0])}, "negative weights (1 value)"),
        ((_I([0, 1]), _I([0, 1])), {"weights": _I([1.0, NAN])}, "NaN or infinite weights"),
    ]
    if num_classes is None or num_classes == 2:
        # Binary scores; with more than two classes they are refused at the call instead
        # (tests/metrics/classification/test_macro_classes.py).
        bad += [
            ((_I([0, 2]), _I([0.1, 0.9])), {}, "labels outside"),  # binary scores: 0/1 labels
            ((_I([0, 1, 2]), _I([0.0, 2.0, 1.0])), {}, "labels outside"),  # float indices
            ((_I([0, 1]), _I([NAN, 0.9])), {}, "non-finite predictions (1 value)"),
        ]
    if num_classes is not None:
        bad += [
            ((_I([0, num_classes]), _I([0, 1])), {}, "labels outside"),
            ((_I([0, 1]), _I([0, num_classes])), {}, "predictions outside"),
        ]
    return bad


def _binary_bad() -> Bad:
    return [
        ((_I([0, 2]), _I([0.1, 0.9])), {}, "labels other than 0 and 1 (1 value)"),
        ((_I([0, 1]), _I([NAN, 0.9])), {}, "non-finite predictions (1 value)"),
        ((_I([0, 1]), _I([3, 1])), {}, "predictions other than 0 and 1 (1 value)"),
        ((_I([0, 1]), _I([0, 1])), {"weights": _I([1.0, -1.0])}, "negative weights (1 value)"),
        (
            (_I([0, 1]), _I([0, 1])),
            {"weights": _I([NAN, 1.0])},
            "NaN or infinite weights (1 value)",
        ),
    ]


def _multiclass_bad(num_classes: int) -> Bad:
    scores = torch.zeros(2, num_classes)
    nan_scores = scores.clone()
    nan_scores[1, 0] = NAN
    return [
        ((_I([0, num_classes]), scores), {}, "labels outside"),
        ((_I([-1, 0]), _I([0, 0])), {}, "labels outside"),
        ((_I([0, 1]), _I([0, num_classes])), {}, "predictions outside"),
        ((_I([0, 1]), nan_scores), {}, "non-finite predictions (1 value)"),
        ((_I([0, 1]), _I([0, 1])), {"weights": _I([-2.0, 1.0])}, "negative weights (1 value)"),
        (
            (_I([0, 1]), _I([0, 1])),
            {"weights": _I([NAN, 1.0])},
            "NaN or infinite weights (1 value)",
        ),
    ]


def _multilabel_bad() -> Bad:
    return [
        ((_I([[0, 2, 1]]), _I([[0.1, 0.2, 0.3]])), {}, "labels other than 0 and 1 (1 value)"),
        ((_I([[0, 1, 1]]), _I([[0, 1, -1]])), {}, "predictions other than 0 and 1 (1 value)"),
        ((_I([[0, 1, 1]]), _I([[NAN, 0.2, 0.3]])), {}, "non-finite predictions (1 value)"),
        ((_I([[0, 1, 1]]), _I([[0, 1, 1]])), {"weights": _I([-1.0])}, "negative weights"),
        ((_I([[0, 1, 1]]), _I([[0, 1, 1]])), {"weights": _I([NAN])}, "NaN or infinite weights"),
    ]


def _top_k_bad() -> Bad:
    return [
        ((_I([0, 6]), torch.zeros(2, 6)), {}, "labels outside"),
        ((_I([0, 1]), _I([[0.0] * 5 + [NAN]] * 2)), {}, "non-finite predictions (2 values)"),
        (
            (_I([0, 1]), torch.zeros(2, 6)),
            {"weights": _I([-1.0, 1.0])},
            "negative weights (1 value)",
        ),
        (
            (_I([0, 1]), torch.zeros(2, 6)),
            {"weights": _I([float("inf"), 1.0])},
            "NaN or infinite weights (1 value)",
        ),
    ]


CASES: list[Case] = [
    # binary: num_classes=None
    Case("precision-binary-scores", lambda: PrecisionMetric(), _binary_scores, _binary_bad()),
    Case("recall-binary-indices", lambda: RecallMetric(threshold=0.3), _binary_indices),
    Case("f1-binary-scores", lambda: F1ScoreMetric(average_type="none"), _binary_scores),
    # multiclass
    Case(
        "precision-multiclass-macro-scores",
        lambda: PrecisionMetric(5, "macro"),
        _multiclass_scores(5),
        _multiclass_bad(5),
    ),
    Case(
        "recall-multiclass-weighted-indices",
        lambda: RecallMetric(4, "weighted", ignore_labels=[3]),
        _multiclass_indices(4),
        _multiclass_bad(4),
    ),
    Case(
        "fbeta-multiclass-none-scores",
        lambda: FBetaScoreMetric(4, beta=0.5, average_type="none"),
        _multiclass_scores(4),
        _multiclass_bad(4),
    ),
    Case(
        "fbeta-multiclass-micro-ignore",
        lambda: FBetaScoreMetric(5, 2.0, "micro", ignore_labels=[0], name="f2"),
        _multiclass_indices(5),
    ),
    Case("f1-multiclass-macro", lambda: F1ScoreMetric(3, "macro"), _multiclass_scores(3)),
    # multilabel
    Case(
        "f1-multilabel-macro-scores",
        lambda: F1ScoreMetric(3, "macro", multilabel=True),
        _multilabel(3, scores=True),
        _multilabel_bad(),
    ),
    Case(
        "precision-multilabel-weighted-indices",
        lambda: PrecisionMetric(3, "weighted", multilabel=True),
        _multilabel(3, scores=False),
        _multilabel_bad(),
    ),
    Case(
        "recall-multilabel-micro-ignore",
        lambda: RecallMetric(3, "micro", ignore_labels=[1], multilabel=True, threshold=0.7),
        _multilabel(3, scores=True),
    ),
    # per-class means, segmentation-shaped
    Case(
        "mean-per-class-accuracy",
        lambda: MeanPerClassAccuracyMetric(4),
        _multiclass_indices(4),
        _multiclass_bad(4),
    ),
    Case(
        "mean-iou-segmentation-scores",
        lambda: MeanIOUMetric(3, ignore_classes=[0]),
        _segmentation(3, scores=True),
        _multiclass_bad(3),
    ),
    Case(
        "dice-segmentation-masked",
        lambda: DiceCoefficientMetric(4),
        _segmentation(4, scores=False),
        _multiclass_bad(4),
    ),
    # confusion matrix
    Case(
        "confusion-matrix-scores",
        lambda: ConfusionMatrixMetric(4),
        _multiclass_scores(4),
        _multiclass_bad(4),
    ),
    Case(
        "confusion-matrix-normalized-weighted",
        lambda: ConfusionMatrixMetric(3, normalize="true"),
        _multiclass_indices(3),
    ),
    # accuracy: label checks, ignore_index, logits
    Case(
        "accuracy-binary-logits-ignore-index",
        lambda: AccuracyMetric(ignore_index=-100, score_kind="logits"),
        _binary_logits_padded,
        _accuracy_bad(None),
    ),
    Case(
        "accuracy-multiclass-num-classes",
        lambda: AccuracyMetric(num_classes=3),
        _multiclass_indices(3),
        _accuracy_bad(3),
    ),
    Case("f1-binary-logits", lambda: F1ScoreMetric(score_kind="logits"), _binary_logits),
    Case(
        "f1-multilabel-logits",
        lambda: F1ScoreMetric(3, "macro", multilabel=True, score_kind="logits"),
        _multilabel_logits(3),
    ),
    # top-k
    Case("top-2-accuracy", lambda: TopKAccuracyMetric(2), _top_k(6, ties=False), _top_k_bad()),
    Case("top-3-accuracy-ties-weighted", lambda: TopKAccuracyMetric(3), _top_k(6, ties=True)),
]
