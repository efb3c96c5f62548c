"""The registry of compat-vs-TorchMetrics cases: every class × configuration × input kind.

Each case builds our metric and TorchMetrics 1.9's with the same constructor arguments and
yields the same randomized batches (logits, probabilities, labels, NCHW, ignore_index padding),
so the oracle test can demand equal forward and compute values.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
import torchmetrics.classification as tmc
from torch import Tensor

from torchtally.compat.torchmetrics import classification as ours

Batch = tuple[Tensor, ...]
N, C, L = 24, 5, 4


@dataclass
class Case:
    id: str
    name: str
    kwargs: dict[str, Any]
    batches: Callable[[torch.Generator], list[Batch]]
    ours_module: Any = ours
    theirs_module: Any = tmc
    tolerance: dict[str, float] = field(default_factory=lambda: {"rtol": 1e-5, "atol": 1e-6})

    def ours(self) -> Any:
        return getattr(self.ours_module, self.name)(**self.kwargs)

    def theirs(self) -> Any:
        return getattr(self.theirs_module, self.name)(**self.kwargs)


def _pad(target: Tensor, ignore: int | None, g: torch.Generator) -> Tensor:
    if ignore is None:
        return target
    mask = torch.rand(target.shape, generator=g) < 0.15
    return torch.where(mask, torch.full_like(target, ignore), target)


def _binary_batch(kind: str, ignore: int | None, g: torch.Generator) -> Batch:
    shape = (N, 3, 2) if kind == "multidim" else (N,)
    target = torch.randint(0, 2, shape, generator=g)
    if kind == "labels":
        preds: Tensor = torch.randint(0, 2, shape, generator=g)
    elif kind == "logits":
        preds = torch.randn(shape, generator=g) * 2
    else:
        preds = torch.rand(shape, generator=g)
    return preds, _pad(target, ignore, g)


def _multiclass_batch(kind: str, ignore: int | None, g: torch.Generator) -> Batch:
    if kind == "nchw":
        target = torch.randint(0, C, (4, 3, 2), generator=g)
        preds: Tensor = torch.randn(4, C, 3, 2, generator=g)
    elif kind == "labels":
        target = torch.randint(0, C, (N,), generator=g)
        preds = torch.randint(0, C, (N,), generator=g)
    elif kind == "sparse":  # class C-1 never occurs; class C-2 is only ever predicted
        target = torch.randint(0, C - 2, (N,), generator=g)
        preds = torch.randint(0, C - 1, (N,), generator=g)
    else:
        target = torch.randint(0, C, (N,), generator=g)
        preds = torch.randn(N, C, generator=g) * 2
        if kind == "probs":
            preds = preds.softmax(-1)
    return preds, _pad(target, ignore, g)


def _multilabel_batch(kind: str, ignore: int | None, g: torch.Generator) -> Batch:
    shape = (N // 2, L, 3) if kind == "multidim" else (N, L)
    target = torch.randint(0, 2, shape, generator=g)
    if kind == "labels":
        preds: Tensor = torch.randint(0, 2, shape, generator=g)
    elif kind == "logits":
        preds = torch.randn(shape, generator=g) * 2
    else:
        preds = torch.rand(shape, generator=g)
    return preds, _pad(target, ignore, g)


_MAKERS = {
    "binary": _binary_batch,
    "multiclass": _multiclass_batch,
    "multilabel": _multilabel_batch,
}
KINDS = {
    "binary": ("probs", "logits", "labels", "multidim"),
    "multiclass": ("probs", "logits", "labels", "nchw", "sparse"),
    "multilabel": ("probs", "logits", "labels", "multidim"),
}
IGNORES = {"binary": (None, -1), "multiclass": (None, 0, -100), "multilabel": (None, -1)}
FLOAT_KINDS = ("probs", "logits", "nchw")


def _batches(task: str, kind: str, ignore: int | None) -> Callable[[torch.Generator], list[Batch]]:
    def make(g: torch.Generator) -> list[Batch]:
        return [_MAKERS[task](kind, ignore, g) for _ in range(3)]

    return make


STAT_METRICS = (
    "Accuracy",
    "Precision",
    "Recall",
    "F1Score",
    "FBetaScore",
    "Specificity",
    "HammingDistance",
    "StatScores",
    "NegativePredictiveValue",
)
ZERO_DIVISION = ("Precision", "Recall", "F1Score", "FBetaScore")


def _case(name: str, task: str, kind: str, **kwargs: Any) -> Case:
    ignore = kwargs.get("ignore_index")
    config = ",".join(
        f"{k}={v}" for k, v in kwargs.items() if k not in ("num_classes", "num_labels")
    )
    return Case(
        f"{task.capitalize()}{name}[{kind}|{config}]",
        task.capitalize() + name,
        kwargs,
        _batches(task, kind, ignore),
    )


def classification_cases() -> list[Case]:
    cases: list[Case] = []
    for metric in STAT_METRICS:
        extra: dict[str, Any] = {"beta": 0.5} if metric == "FBetaScore" else {}
        for kind, ignore in itertools.product(KINDS["binary"], IGNORES["binary"]):
            cases.append(_case(metric, "binary", kind, **extra, ignore_index=ignore))
        if metric in ZERO_DIVISION:
            cases.append(_case(metric, "binary", "labels", **extra, zero_division=1))
        for kind, ignore, average in itertools.product(
            KINDS["multiclass"], IGNORES["multiclass"], ("micro", "macro", "weighted", "none")
        ):
            for top_k in (1, 2) if kind in FLOAT_KINDS else (1,):
                cases.append(
                    _case(
                        metric,
                        "multiclass",
                        kind,
                        **extra,
                        num_classes=C,
                        average=average,
                        top_k=top_k,
                        ignore_index=ignore,
                    )
                )
            if metric in ZERO_DIVISION and ignore is None:
                cases.append(
                    _case(
                        metric,
                        "multiclass",
                        kind,
                        **extra,
                        num_classes=C,
                        average=average,
                        zero_division=1,
                    )
                )
        for kind, ignore, average in itertools.product(
            KINDS["multilabel"], IGNORES["multilabel"], ("micro", "macro", "weighted", "none")
        ):
            cases.append(
                _case(
                    metric,
                    "multilabel",
                    kind,
                    **extra,
                    num_labels=L,
                    average=average,
                    ignore_index=ignore,
                )
            )
    for task in ("binary", "multiclass", "multilabel"):
        size = {"binary": {}, "multiclass": {"num_classes": C}, "multilabel": {"num_labels": L}}[
            task
        ]
        for kind, ignore in itertools.product(KINDS[task], IGNORES[task]):
            for normalize in (None, "true", "pred", "all"):
                cases.append(
                    _case(
                        "ConfusionMatrix",
                        task,
                        kind,
                        **size,
                        ignore_index=ignore,
                        normalize=normalize,
                    )
                )
            cases.append(_case("MatthewsCorrCoef", task, kind, **size, ignore_index=ignore))
            averages = (None,) if task == "binary" else ("micro", "macro", "weighted", "none")
            for average in averages:
                extra = {} if average is None else {"average": average}
                cases.append(
                    _case("JaccardIndex", task, kind, **size, **extra, ignore_index=ignore)
                )
            if task != "binary":
                cases.append(_case("ExactMatch", task, kind, **size, ignore_index=ignore))
            if task != "multilabel":
                for weights in (None, "linear", "quadratic"):
                    cases.append(
                        _case(
                            "CohenKappa", task, kind, **size, ignore_index=ignore, weights=weights
                        )
                    )
    return cases


#: Degenerate binary inputs (all one class, all right, all wrong) that hit TorchMetrics'
#: special cases (Matthews' zero denominators, zero_division).
def degenerate_cases() -> list[Case]:
    patterns = {
        "all_right_pos": ([1, 1, 1, 1], [1, 1, 1, 1]),
        "all_right_neg": ([0, 0, 0, 0], [0, 0, 0, 0]),
        "all_wrong": ([1, 0, 1, 0], [0, 1, 0, 1]),
        "no_pos_pred": ([0, 0, 0, 0], [1, 0, 1, 0]),
        "no_neg_pred": ([1, 1, 1, 1], [1, 0, 0, 0]),
        "no_pos_target": ([1, 0, 1, 0], [0, 0, 0, 0]),
        "one_tp": ([1, 0, 0, 0], [1, 1, 0, 0]),
    }
    cases = []
    for label, (preds, target) in patterns.items():
        batch = (torch.tensor(preds), torch.tensor(target))
        for name in (
            "MatthewsCorrCoef",
            "Precision",
            "Recall",
            "F1Score",
            "JaccardIndex",
            "CohenKappa",
            "Specificity",
            "NegativePredictiveValue",
        ):
            kwargs: dict[str, Any] = {}
            for zero_division in (0, 1) if name in ("Precision", "Recall", "F1Score") else (None,):
                if zero_division is not None:
                    kwargs = {"zero_division": zero_division}
                cases.append(
                    Case(
                        f"Binary{name}[{label}|{kwargs}]",
                        f"Binary{name}",
                        dict(kwargs),
                        lambda g, b=batch: [b],
                    )
                )
    return cases


CASES = classification_cases() + degenerate_cases()


# ------------------------------------------------------------------ regression, aggregation


def _regression_batches(
    shape: tuple[int, ...], kind: str = "normal"
) -> Callable[[torch.Generator], list[Batch]]:
    def make(g: torch.Generator) -> list[Batch]:
        out = []
        for _ in range(3):
            target = torch.randn(shape, generator=g)
            preds = target + 0.5 * torch.randn(shape, generator=g)
            if kind == "positive":  # distributions for KL divergence
                preds, target = preds.exp(), target.exp()
            elif kind == "log":
                preds, target = preds.log_softmax(-1), target.log_softmax(-1)
            out.append((preds, target))
        return out

    return make


def _aggregation_batches(kind: str) -> Callable[[torch.Generator], list[Batch]]:
    def make(g: torch.Generator) -> list[Batch]:
        out: list[Batch] = []
        for step in range(7):
            value = torch.randn(6, generator=g)
            if kind == "nan" and step % 2:
                value[1] = float("nan")
            if kind == "weighted":
                out.append((value, torch.rand(6, generator=g)))
            else:
                out.append((value,))
        return out

    return make


def regression_cases() -> list[Case]:
    import torchmetrics.aggregation as tma
    import torchmetrics.regression as tmr

    from torchtally.compat.torchmetrics import aggregation as our_agg
    from torchtally.compat.torchmetrics import regression as our_reg

    cases: list[Case] = []

    def add(
        name: str,
        label: str,
        kwargs: dict[str, Any],
        batches: Any,
        ours_extra: dict[str, Any] | None = None,
    ) -> None:
        case = Case(f"{name}[{label}|{kwargs}]", name, kwargs, batches, our_reg, tmr)
        if ours_extra:
            extra = dict(ours_extra)
            case.ours = lambda: getattr(our_reg, name)(**kwargs, **extra)  # type: ignore[method-assign]
        cases.append(case)

    for squared in (True, False):
        add("MeanSquaredError", "1d", {"squared": squared}, _regression_batches((16,)))
        add(
            "MeanSquaredError",
            "2d",
            {"squared": squared, "num_outputs": 3},
            _regression_batches((16, 3)),
        )
        add("MeanSquaredError", "nd", {"squared": squared}, _regression_batches((4, 3, 2)))
    add("MeanAbsoluteError", "1d", {}, _regression_batches((16,)))
    add("MeanAbsoluteError", "2d", {"num_outputs": 3}, _regression_batches((16, 3)))
    for name in ("MeanAbsolutePercentageError", "SymmetricMeanAbsolutePercentageError"):
        add(name, "1d", {}, _regression_batches((16,)))
        add(name, "nd", {}, _regression_batches((4, 3, 2)))
    for multioutput in ("raw_values", "uniform_average", "variance_weighted"):
        add("R2Score", "1d", {"multioutput": multioutput}, _regression_batches((16,)))
        add(
            "R2Score",
            "2d",
            {"multioutput": multioutput},
            _regression_batches((16, 3)),
            {"num_outputs": 3},
        )
        add("ExplainedVariance", "1d", {"multioutput": multioutput}, _regression_batches((16,)))
        add(
            "ExplainedVariance",
            "2d",
            {"multioutput": multioutput},
            _regression_batches((16, 3)),
            {"num_outputs": 3},
        )
    add("R2Score", "adjusted", {"adjusted": 2}, _regression_batches((16,)))
    add("R2Score", "adjusted_fallback", {"adjusted": 20}, _regression_batches((16,)))
    add("PearsonCorrCoef", "1d", {}, _regression_batches((16,)))
    add("PearsonCorrCoef", "2d", {"num_outputs": 3}, _regression_batches((16, 3)))
    for reduction in ("sum", "mean"):
        add("CosineSimilarity", "2d", {"reduction": reduction}, _regression_batches((16, 5)))
        add(
            "KLDivergence",
            "probs",
            {"reduction": reduction},
            _regression_batches((16, 5), "positive"),
        )
        add(
            "KLDivergence",
            "log",
            {"reduction": reduction, "log_prob": True},
            _regression_batches((16, 5), "log"),
        )

    for name in ("MeanMetric", "SumMetric", "MaxMetric", "MinMetric", "RunningMean"):
        for kind in ("plain", "nan", "weighted"):
            if kind == "weighted" and name != "MeanMetric":
                continue
            strategies = ("ignore", "disable", 0.0) if kind == "nan" else ("warn",)
            for strategy in strategies:
                kwargs: dict[str, Any] = {"nan_strategy": strategy}
                if name == "RunningMean":
                    kwargs["window"] = 3
                cases.append(
                    Case(
                        f"{name}[{kind}|{kwargs}]",
                        name,
                        kwargs,
                        _aggregation_batches(kind),
                        our_agg,
                        tma,
                    )
                )
    return cases


CASES += regression_cases()


def _text_batches(ignore: int | None) -> Callable[[torch.Generator], list[Batch]]:
    def make(g: torch.Generator) -> list[Batch]:
        out = []
        for _ in range(3):
            preds = torch.randn(2, 8, 11, generator=g) * 2
            target = torch.randint(0, 11, (2, 8), generator=g)
            out.append((preds, _pad(target, ignore, g)))
        return out

    return make


def text_cases() -> list[Case]:
    import torchmetrics.text as tmt

    from torchtally.compat.torchmetrics import text as our_text

    return [
        Case(
            f"Perplexity[ignore_index={ignore}]",
            "Perplexity",
            {"ignore_index": ignore},
            _text_batches(ignore),
            our_text,
            tmt,
        )
        for ignore in (None, -100, 3)
    ]


CASES += text_cases()


def facade_cases() -> list[Case]:
    """`Accuracy(task=...)` and friends with their own defaults (e.g. average="micro")."""
    import torchmetrics as tm_top

    from torchtally.compat import torchmetrics as ours_top

    cases = []
    for metric in (
        *STAT_METRICS,
        "ConfusionMatrix",
        "JaccardIndex",
        "ExactMatch",
        "MatthewsCorrCoef",
        "CohenKappa",
    ):
        for task in ("binary", "multiclass", "multilabel"):
            if (metric == "ExactMatch" and task == "binary") or (
                metric == "CohenKappa" and task == "multilabel"
            ):
                continue
            kwargs: dict[str, Any] = {"task": task, "num_classes": C}
            if metric != "CohenKappa":  # its facade has no num_labels
                kwargs["num_labels"] = L
            if metric == "FBetaScore":
                kwargs["beta"] = 2.0
            kind = {"binary": "logits", "multiclass": "logits", "multilabel": "probs"}[task]
            cases.append(
                Case(
                    f"{metric}(task={task})",
                    metric,
                    kwargs,
                    _batches(task, kind, None),
                    ours_top,
                    tm_top,
                )
            )
    for task in ("binary", "multiclass", "multilabel"):
        kwargs = {"task": task, "num_classes": C, "num_labels": L, "thresholds": 50}
        cases.append(
            Case(
                f"AUROC(task={task})",
                "AUROC",
                kwargs,
                _batches(task, "logits", None),
                ours_top,
                tm_top,
            )
        )
    return cases


CASES += facade_cases()


def curve_cases() -> list[Case]:
    import torchmetrics as tm_top

    from torchtally.compat import torchmetrics as ours_top

    cases = []
    for name in (
        "BinaryAUROC",
        "BinaryAveragePrecision",
        "BinaryROC",
        "BinaryPrecisionRecallCurve",
    ):
        for kind, ignore in itertools.product(("probs", "logits", "multidim"), (None, -1)):
            for thresholds in (5, 101, [0.1, 0.5, 0.9], None):
                kwargs = {"thresholds": thresholds, "ignore_index": ignore}
                cases.append(
                    Case(f"{name}[{kind}|{kwargs}]", name, kwargs, _batches("binary", kind, ignore))
                )
    for kind, ignore, average in itertools.product(
        ("probs", "logits", "nchw"), (None, 0, -100), ("macro", "weighted", "none")
    ):
        for thresholds in (5, 101, None):
            kwargs = {
                "num_classes": C,
                "average": average,
                "thresholds": thresholds,
                "ignore_index": ignore,
            }
            for name in ("MulticlassAUROC", "MulticlassAveragePrecision"):
                cases.append(
                    Case(
                        f"{name}[{kind}|{kwargs}]",
                        name,
                        kwargs,
                        _batches("multiclass", kind, ignore),
                    )
                )
    for kind, ignore, average in itertools.product(
        ("probs", "logits", "multidim"), (None, -1), ("micro", "macro", "weighted", "none")
    ):
        for thresholds in (11, None):
            kwargs = {
                "num_labels": L,
                "average": average,
                "thresholds": thresholds,
                "ignore_index": ignore,
            }
            for name in ("MultilabelAUROC", "MultilabelAveragePrecision"):
                cases.append(
                    Case(
                        f"{name}[{kind}|{kwargs}]",
                        name,
                        kwargs,
                        _batches("multilabel", kind, ignore),
                    )
                )
    # Per-class curves: exact first, so the invariants (first case per class) cover the buffer.
    for thresholds, kind, ignore in itertools.product(
        (None, 5, [0.2, 0.4, 0.9]), ("probs", "logits", "nchw"), (None, -100)
    ):
        kwargs = {"num_classes": C, "thresholds": thresholds, "ignore_index": ignore}
        for name in ("MulticlassROC", "MulticlassPrecisionRecallCurve"):
            cases.append(
                Case(f"{name}[{kind}|{kwargs}]", name, kwargs, _batches("multiclass", kind, ignore))
            )
    for thresholds, kind, ignore in itertools.product(
        (None, 5), ("probs", "logits", "multidim"), (None, -1)
    ):
        kwargs = {"num_labels": L, "thresholds": thresholds, "ignore_index": ignore}
        for name in ("MultilabelROC", "MultilabelPrecisionRecallCurve"):
            cases.append(
                Case(f"{name}[{kind}|{kwargs}]", name, kwargs, _batches("multilabel", kind, ignore))
            )
    for facade, task, thresholds in itertools.product(
        ("AUROC", "AveragePrecision", "ROC", "PrecisionRecallCurve"),
        ("binary", "multiclass", "multilabel"),
        (None, 9),
    ):
        kwargs = {"task": task, "num_classes": C, "num_labels": L, "thresholds": thresholds}
        kind = "nchw" if task == "multiclass" else "logits"
        cases.append(
            Case(
                f"{facade}(task={task}, thresholds={thresholds})",
                facade,
                kwargs,
                _batches(task, kind, None),
                ours_top,
                tm_top,
            )
        )
    return cases


CASES += curve_cases()


def calibration_cases() -> list[Case]:
    import torchmetrics as tm_top

    from torchtally.compat import torchmetrics as ours_top

    cases = []
    for norm, n_bins in itertools.product(("l1", "l2", "max"), (5, 15)):
        for kind, ignore in itertools.product(("probs", "logits", "multidim"), (None, -1)):
            kwargs: dict[str, Any] = {"n_bins": n_bins, "norm": norm, "ignore_index": ignore}
            cases.append(
                Case(
                    f"BinaryCalibrationError[{kind}|{kwargs}]",
                    "BinaryCalibrationError",
                    kwargs,
                    _batches("binary", kind, ignore),
                )
            )
        for kind, ignore in itertools.product(("probs", "logits", "nchw"), (None, 0, -100)):
            kwargs = {"num_classes": C, "n_bins": n_bins, "norm": norm, "ignore_index": ignore}
            cases.append(
                Case(
                    f"MulticlassCalibrationError[{kind}|{kwargs}]",
                    "MulticlassCalibrationError",
                    kwargs,
                    _batches("multiclass", kind, ignore),
                )
            )
    for task in ("binary", "multiclass"):
        kwargs = {"task": task, "num_classes": C, "norm": "l2"}
        cases.append(
            Case(
                f"CalibrationError(task={task})",
                "CalibrationError",
                kwargs,
                _batches(task, "logits", None),
                ours_top,
                tm_top,
            )
        )
    return cases


CASES += calibration_cases()


def _segmentation_batches(fmt: str) -> Callable[[torch.Generator], list[Batch]]:
    def make(g: torch.Generator) -> list[Batch]:
        out = []
        for _ in range(3):
            target = torch.randint(0, C - 1, (3, 6, 5), generator=g)  # class C-1 never in target
            scores = torch.randn(3, C, 6, 5, generator=g)
            onehot_target = torch.nn.functional.one_hot(target, C).movedim(-1, 1)
            if fmt == "index":
                out.append((scores.argmax(1), target))
            elif fmt == "mixed":
                out.append((scores, target))
            elif fmt == "scores":
                out.append((scores, onehot_target))
            else:
                out.append(
                    (torch.nn.functional.one_hot(scores.argmax(1), C).movedim(-1, 1), onehot_target)
                )
        return out

    return make


def segmentation_cases() -> list[Case]:
    import torchmetrics.segmentation as tms

    from torchtally.compat.torchmetrics import segmentation as our_seg

    cases = []
    for fmt, background, per_class in itertools.product(
        ("one-hot", "scores", "index", "mixed"), (True, False), (False, True)
    ):
        input_format = "one-hot" if fmt == "scores" else fmt
        kwargs = {
            "num_classes": C,
            "include_background": background,
            "per_class": per_class,
            "input_format": input_format,
        }
        cases.append(
            Case(
                f"MeanIoU[{fmt}|{kwargs}]",
                "MeanIoU",
                kwargs,
                _segmentation_batches(fmt),
                our_seg,
                tms,
            )
        )
    for fmt, background, average, level in itertools.product(
        ("one-hot", "scores", "index"),
        (True, False),
        ("micro", "macro", "weighted", "none"),
        ("samplewise", "global"),
    ):
        input_format = "one-hot" if fmt == "scores" else fmt
        kwargs = {
            "num_classes": C,
            "include_background": background,
            "average": average,
            "aggregation_level": level,
            "input_format": input_format,
        }
        cases.append(
            Case(
                f"DiceScore[{fmt}|{kwargs}]",
                "DiceScore",
                kwargs,
                _segmentation_batches(fmt),
                our_seg,
                tms,
            )
        )
    return cases


CASES += segmentation_cases()


def _retrieval_batches(
    graded: bool, ignore: int | None
) -> Callable[[torch.Generator], list[Batch]]:
    def make(g: torch.Generator) -> list[Batch]:
        out = []
        for _ in range(3):
            # Distinct scores: TorchMetrics orders tied candidates by an unstable sort.
            preds = torch.rand(N * 2, generator=g)
            indexes = torch.randint(0, 7, (N * 2,), generator=g)
            target = torch.randint(0, 4 if graded else 2, (N * 2,), generator=g)
            out.append((preds, _pad(target, ignore, g), indexes))
        return out

    return make


def retrieval_cases() -> list[Case]:
    import torchmetrics.retrieval as tm_retrieval

    from torchtally.compat.torchmetrics import retrieval as our_retrieval

    cases = []
    for name in our_retrieval.__all__:
        top_ks: tuple[int | None, ...] = (None,) if name == "RetrievalRPrecision" else (None, 1, 4)
        if name in ("RetrievalPrecisionRecallCurve", "RetrievalRecallAtFixedPrecision"):
            # First (the one per-class checks take) an integer max_k, with which compute
            # traces; with None it reads the largest query's size (its output's shape).
            top_ks = (4, 1, None)
        for action, top_k, ignore, aggregation in itertools.product(
            ("neg", "pos", "skip"), top_ks, (None, -1), ("mean", "min", "max")
        ):
            kwargs: dict[str, Any] = {
                "empty_target_action": action,
                "ignore_index": ignore,
                "aggregation": aggregation,
            }
            if name in ("RetrievalPrecisionRecallCurve", "RetrievalRecallAtFixedPrecision"):
                kwargs["max_k"] = top_k  # the curve's cut-offs 1 .. max_k
            elif name != "RetrievalRPrecision":
                kwargs["top_k"] = top_k
            if name == "RetrievalPrecision" and top_k == 4:
                kwargs["adaptive_k"] = True
            graded = name == "RetrievalNormalizedDCG"
            cases.append(
                Case(
                    f"{name}[{kwargs}]",
                    name,
                    kwargs,
                    _retrieval_batches(graded, ignore),
                    our_retrieval,
                    tm_retrieval,
                )
            )
    return cases


CASES += retrieval_cases()


def _image_batches(scale: float, size: int) -> Callable[[torch.Generator], list[Batch]]:
    def make(g: torch.Generator) -> list[Batch]:
        out = []
        for _ in range(3):
            target = torch.rand(2, 3, size, size, generator=g)
            preds = target + scale * torch.randn(2, 3, size, size, generator=g)
            out.append((preds, target))
        return out

    return make


_WORDS = ("the", "cat", "sat", "on", "a", "mat", "dog", "ran")


def _text_batches(g: torch.Generator) -> list[tuple[list[str], list[str]]]:
    def sentence() -> str:
        length = int(torch.randint(1, 7, (1,), generator=g))
        picks = torch.randint(0, len(_WORDS), (length,), generator=g).tolist()
        return " ".join(_WORDS[i] for i in picks)

    return [([sentence() for _ in range(4)], [sentence() for _ in range(4)]) for _ in range(3)]


def image_text_cases() -> list[Case]:
    import torchmetrics.image as tm_image
    import torchmetrics.text as tm_text

    from torchtally.compat.torchmetrics import image as our_image
    from torchtally.compat.torchmetrics import text as our_text

    cases = []
    for data_range, base in itertools.product((1.0, 2.5, (0.0, 1.0)), (10.0, 2.0)):
        kwargs: dict[str, Any] = {"data_range": data_range, "base": base}
        cases.append(
            Case(
                f"PeakSignalNoiseRatio[{kwargs}]",
                "PeakSignalNoiseRatio",
                kwargs,
                _image_batches(0.2, 8),
                our_image,
                tm_image,
            )
        )
    for data_range, sigma, reduction in itertools.product(
        (None, 1.0, (0.0, 1.0)), (1.5, 0.8), ("elementwise_mean", "sum")
    ):
        kwargs = {"data_range": data_range, "sigma": sigma, "reduction": reduction}
        cases.append(
            Case(
                f"StructuralSimilarityIndexMeasure[{kwargs}]",
                "StructuralSimilarityIndexMeasure",
                kwargs,
                _image_batches(0.1, 16),
                our_image,
                tm_image,
            )
        )
    for name in ("WordErrorRate", "CharErrorRate"):
        cases.append(Case(name, name, {}, _text_batches, our_text, tm_text))  # type: ignore[arg-type]
    return cases


CASES += image_text_cases()


def _spearman_batches(
    shape: tuple[int, ...], ties: bool
) -> Callable[[torch.Generator], list[Batch]]:
    def make(g: torch.Generator) -> list[Batch]:
        out = []
        for _ in range(3):
            preds = torch.randn(shape, generator=g)
            if ties:  # tied ranks within and across batches
                preds = preds.mul(2).round()
            out.append((preds, preds * 0.4 + torch.randn(shape, generator=g)))
        return out

    return make


def spearman_cases() -> list[Case]:
    import torchmetrics.regression as tmr

    from torchtally.compat.torchmetrics import regression as our_reg

    cases = []
    for shape, ties in itertools.product(((20,), (20, 1), (20, 3)), (False, True)):
        kwargs = {"num_outputs": 3 if len(shape) == 2 and shape[1] == 3 else 1}
        cases.append(
            Case(
                f"SpearmanCorrCoef[{shape}|ties={ties}|{kwargs}]",
                "SpearmanCorrCoef",
                kwargs,
                _spearman_batches(shape, ties),
                our_reg,
                tmr,
            )
        )
    return cases


CASES += spearman_cases()


def more_regression_cases() -> list[Case]:
    """TorchMetrics' other regression metrics (adapter maths in compat) and RunningSum."""
    import torchmetrics.aggregation as tma
    import torchmetrics.regression as tmr

    from torchtally.compat.torchmetrics import aggregation as our_agg
    from torchtally.compat.torchmetrics import regression as our_reg

    cases: list[Case] = []

    def add(
        name: str, label: str, kwargs: dict[str, Any], batches: Any, **tolerance: float
    ) -> None:
        case = Case(f"{name}[{label}|{kwargs}]", name, kwargs, batches, our_reg, tmr)
        if tolerance:
            case.tolerance = tolerance
        cases.append(case)

    flat, wide, nd = (16,), (16, 3), (4, 3, 2)
    add("MeanSquaredLogError", "positive", {}, _regression_batches(flat, "positive"))
    add("MeanSquaredLogError", "nd", {}, _regression_batches(nd, "positive"))
    add("LogCoshError", "1d", {}, _regression_batches(flat))
    add("LogCoshError", "2d", {"num_outputs": 3}, _regression_batches(wide))
    add("WeightedMeanAbsolutePercentageError", "1d", {}, _regression_batches(flat))
    add("WeightedMeanAbsolutePercentageError", "nd", {}, _regression_batches(nd))
    for squared in (True, False):
        add("RelativeSquaredError", "1d", {"squared": squared}, _regression_batches(flat))
        add(
            "RelativeSquaredError",
            "2d",
            {"squared": squared, "num_outputs": 3},
            _regression_batches(wide),
        )
    for p in (1, 2, 3.5):
        add("MinkowskiDistance", "1d", {"p": p}, _regression_batches(flat))
        add("MinkowskiDistance", "nd", {"p": p}, _regression_batches(nd))
    for power in (0.0, 1.0, 1.5, 2.0, 3.0, -1.0):
        # TorchMetrics' float32 deviance for a negative power loses up to 7.9e-5 of its value
        # to cancellation (against scikit-learn's float64 `mean_tweedie_deviance`, 800 seeds
        # of these batches); ours stays within 6e-8 of it, as
        # test_tweedie_deviance_matches_sklearn_in_float64 checks for every power.
        loose = {"rtol": 2.5e-4, "atol": 1e-6} if power < 0 else {}
        add(
            "TweedieDevianceScore",
            "positive",
            {"power": power},
            _regression_batches(flat, "positive"),
            **loose,
        )
    add("TweedieDevianceScore", "normal", {"power": 0.0}, _regression_batches(nd))
    add("ConcordanceCorrCoef", "1d", {}, _regression_batches(flat))
    add("ConcordanceCorrCoef", "2d", {"num_outputs": 3}, _regression_batches(wide))
    for threshold in (0.0, 0.5, 10.0):  # 10: no hits, misses or false alarms at all
        add("CriticalSuccessIndex", "1d", {"threshold": threshold}, _regression_batches(flat))
        add("CriticalSuccessIndex", "nd", {"threshold": threshold}, _regression_batches(nd))
    for normalization in ("mean", "range", "std", "l2"):
        add(
            "NormalizedRootMeanSquaredError",
            "1d",
            {"normalization": normalization},
            _regression_batches(flat, "positive"),
        )
        add(
            "NormalizedRootMeanSquaredError",
            "2d",
            {"normalization": normalization, "num_outputs": 3},
            _regression_batches(wide, "positive"),
        )
    for kind in ("plain", "nan"):
        strategies = ("ignore", "disable", 0.0) if kind == "nan" else ("warn",)
        for strategy in strategies:
            kwargs: dict[str, Any] = {"nan_strategy": strategy, "window": 3}
            cases.append(
                Case(
                    f"RunningSum[{kind}|{kwargs}]",
                    "RunningSum",
                    kwargs,
                    _aggregation_batches(kind),
                    our_agg,
                    tma,
                )
            )
    return cases


CASES += more_regression_cases()


def _ranking_batches(kind: str, ignore: int | None) -> Callable[[torch.Generator], list[Batch]]:
    def make(g: torch.Generator) -> list[Batch]:
        out = []
        for step in range(3):
            shape = (N, L, 3) if kind == "nchw" else (N, L)
            target = torch.randint(0, 2, shape, generator=g)
            if kind == "edge" and step == 0:  # rows with no and with every label relevant
                target[: N // 2] = 0
                target[N // 2 :] = 1
            scores = torch.randn(shape, generator=g)
            preds = scores * 2 if kind == "logits" else scores.sigmoid()
            out.append((preds, _pad(target, ignore, g)))
        return out

    return make


def ranking_cases() -> list[Case]:
    cases = []
    for name in (
        "MultilabelCoverageError",
        "MultilabelRankingAveragePrecision",
        "MultilabelRankingLoss",
    ):
        for kind, ignore in itertools.product(("probs", "logits", "nchw", "edge"), (None, -1)):
            kwargs: dict[str, Any] = {"num_labels": L, "ignore_index": ignore}
            cases.append(
                Case(
                    f"{name}[{kind}|ignore_index={ignore}]",
                    name,
                    kwargs,
                    _ranking_batches(kind, ignore),
                )
            )
    return cases


CASES += ranking_cases()


def hinge_cases() -> list[Case]:
    import torchmetrics as tm_top

    from torchtally.compat import torchmetrics as ours_top

    cases = []
    for squared in (False, True):
        for kind, ignore in itertools.product(("probs", "logits", "multidim"), IGNORES["binary"]):
            kwargs: dict[str, Any] = {"squared": squared, "ignore_index": ignore}
            cases.append(_case("HingeLoss", "binary", kind, **kwargs))
        for mode in ("crammer-singer", "one-vs-all"):
            for kind, ignore in itertools.product(FLOAT_KINDS, IGNORES["multiclass"]):
                kwargs = {"squared": squared, "multiclass_mode": mode, "ignore_index": ignore}
                cases.append(_case("HingeLoss", "multiclass", kind, num_classes=C, **kwargs))
    for task in ("binary", "multiclass"):
        cases.append(
            Case(
                f"HingeLoss(task={task})",
                "HingeLoss",
                {"task": task, "num_classes": C},
                _batches(task, "logits", None),
                ours_top,
                tm_top,
            )
        )
    return cases


CASES += hinge_cases()


def operating_point_cases() -> list[Case]:
    """Recall at fixed precision and its three siblings, binned and exact, every task."""
    import torchmetrics as tm_top

    from torchtally.compat import torchmetrics as ours_top

    families = {
        "RecallAtFixedPrecision": ("min_precision", (0.3, 0.6, 1.0)),
        "PrecisionAtFixedRecall": ("min_recall", (0.3, 0.8, 1.0)),
        "SensitivityAtSpecificity": ("min_specificity", (0.0, 0.5, 0.9)),
        "SpecificityAtSensitivity": ("min_sensitivity", (0.0, 0.5, 0.9)),
    }
    cases = []
    for family, (bound, values) in families.items():
        for value, thresholds in itertools.product(values, (None, 11, [0.9, 0.1, 0.5])):
            for task, size in (
                ("binary", {}),
                ("multiclass", {"num_classes": C}),
                ("multilabel", {"num_labels": L}),
            ):
                for ignore in (None, IGNORES[task][-1]):
                    kwargs: dict[str, Any] = {
                        bound: value,
                        "thresholds": thresholds,
                        "ignore_index": ignore,
                        **size,
                    }
                    cases.append(_case(family, task, "logits", **kwargs))
        for task in ("binary", "multiclass", "multilabel"):
            cases.append(
                Case(
                    f"{family}(task={task})",
                    family,
                    {
                        "task": task,
                        bound: values[1],
                        "thresholds": 11,
                        "num_classes": C,
                        "num_labels": L,
                    },
                    _batches(task, "probs", None),
                    ours_top,
                    tm_top,
                )
            )
    return cases


CASES += operating_point_cases()


def normalization_cases() -> list[Case]:
    """TorchMetrics 1.9's `normalization` of binary curve scores: sigmoid or none ("softmax"
    is refused: TorchMetrics fails inside torch on binary logits with it)."""
    cases = []
    for name in ("BinaryROC", "BinaryPrecisionRecallCurve", "BinaryAveragePrecision"):
        for normalization, thresholds, ignore in itertools.product(
            ("sigmoid", None), (None, 7), (None, -1)
        ):
            for kind in ("logits", "probs"):
                kwargs = {"normalization": normalization, "thresholds": thresholds}
                cases.append(
                    _case(name[len("Binary") :], "binary", kind, **kwargs, ignore_index=ignore)
                )
    return cases


CASES += normalization_cases()


def eer_cases() -> list[Case]:
    cases = []  # TorchMetrics exports EER from torchmetrics.classification only
    for thresholds, kind in itertools.product((None, 11, [0.9, 0.2, 0.5]), ("logits", "probs")):
        for task, size in (
            ("binary", {}),
            ("multiclass", {"num_classes": C}),
            ("multilabel", {"num_labels": L}),
        ):
            for ignore in (None, IGNORES[task][-1]):
                cases.append(
                    _case("EER", task, kind, thresholds=thresholds, ignore_index=ignore, **size)
                )
    for task in ("binary", "multiclass", "multilabel"):
        kwargs = {"task": task, "thresholds": 11, "num_classes": C, "num_labels": L}
        cases.append(Case(f"EER(task={task})", "EER", kwargs, _batches(task, "logits", None)))
    return cases


CASES += eer_cases()


def word_information_cases() -> list[Case]:
    import torchmetrics.text as tm_text

    from torchtally.compat.torchmetrics import text as our_text

    return [
        Case(name, name, {}, _text_batches, our_text, tm_text)  # type: ignore[arg-type]
        for name in ("MatchErrorRate", "WordInfoLost", "WordInfoPreserved")
    ]


CASES += word_information_cases()


def log_auc_cases() -> list[Case]:
    cases = []  # TorchMetrics exports LogAUC from torchmetrics.classification only
    for thresholds, fpr_range in itertools.product(
        (None, 50, [0.9, 0.2, 0.5, 0.05]), ((0.001, 0.1), (0.05, 0.6), (0.0, 0.3))
    ):
        for task, size in (
            ("binary", {}),
            ("multiclass", {"num_classes": C}),
            ("multilabel", {"num_labels": L}),
        ):
            averages = (None,) if task == "binary" else (None, "macro")
            for ignore, average in itertools.product((None, IGNORES[task][-1]), averages):
                extra = {} if task == "binary" else {"average": average}
                kwargs: dict[str, Any] = {
                    "thresholds": thresholds,
                    "fpr_range": fpr_range,
                    "ignore_index": ignore,
                    **extra,
                    **size,
                }
                cases.append(_case("LogAUC", task, "logits", **kwargs))
    for task in ("binary", "multiclass", "multilabel"):
        kwargs = {"task": task, "thresholds": None, "num_classes": C, "num_labels": L}
        cases.append(Case(f"LogAUC(task={task})", "LogAUC", kwargs, _batches(task, "logits", None)))
    return cases


CASES += log_auc_cases()


def partial_auc_cases() -> list[Case]:
    """BinaryAUROC(max_fpr=...): TorchMetrics' McClish-standardized partial AUC."""
    cases = []
    for max_fpr, thresholds, ignore in itertools.product(
        # thresholds without 0 can end the ROC before max_fpr: TorchMetrics then fails with
        # an IndexError (tests/compat/test_torchmetrics_more_classification.py has our value)
        (0.05, 0.3, 0.8, 1.0),
        (None, 9, [0.0, 0.3, 0.5, 0.9]),
        (None, -1),
    ):
        kwargs: dict[str, Any] = {"max_fpr": max_fpr, "thresholds": thresholds}
        for kind in ("logits", "probs"):
            cases.append(_case("AUROC", "binary", kind, **kwargs, ignore_index=ignore))
    return cases


CASES += partial_auc_cases()


def averaged_curve_cases() -> list[Case]:
    """Multiclass ROC / PR curve (and EER) with average="micro" / "macro"."""
    cases = []
    for name, average, thresholds, ignore, kind in itertools.product(
        ("ROC", "PrecisionRecallCurve", "EER"),
        ("micro", "macro"),
        (None, 11, [0.0, 0.3, 0.6, 0.9]),
        (None, -100),
        ("logits", "probs"),
    ):
        kwargs: dict[str, Any] = {
            "num_classes": C,
            "average": average,
            "thresholds": thresholds,
            "ignore_index": ignore,
        }
        if average == "micro" and thresholds is not None:
            continue  # TorchMetrics 1.9 fails there (tests/compat/test_torchmetrics_curves.py)
        cases.append(_case(name, "multiclass", kind, **kwargs))
    return cases


CASES += averaged_curve_cases()


def _spread(values: Tensor, dim: int | None = None) -> Tensor:
    """A custom retrieval aggregation (TorchMetrics calls it with `dim=None`)."""
    return values.max() - values.min()


def retrieval_median_cases() -> list[Case]:
    import torchmetrics.retrieval as tm_retrieval

    from torchtally.compat.torchmetrics import retrieval as our_retrieval

    cases = []
    for name, action, ignore, aggregation in itertools.product(
        ("RetrievalMAP", "RetrievalMRR", "RetrievalNormalizedDCG", "RetrievalPrecision"),
        ("neg", "pos", "skip"),
        (None, -1),
        ("median", _spread),
    ):
        kwargs: dict[str, Any] = {
            "empty_target_action": action,
            "ignore_index": ignore,
            "aggregation": aggregation,
        }
        label = aggregation if isinstance(aggregation, str) else "callable"
        cases.append(
            Case(
                f"{name}[{action}|{ignore}|{label}]",
                name,
                kwargs,
                _retrieval_batches(name == "RetrievalNormalizedDCG", ignore),
                our_retrieval,
                tm_retrieval,
            )
        )
    return cases


CASES += retrieval_median_cases()


def psnr_dim_cases() -> list[Case]:
    """PeakSignalNoiseRatio(dim=...): one PSNR per remaining element, averaged or summed."""
    import torchmetrics.image as tm_image

    from torchtally.compat.torchmetrics import image as our_image

    cases = []
    for dim, reduction, data_range in itertools.product(
        ((1, 2, 3), (2, 3), 1, ()), ("elementwise_mean", "sum"), (1.0, (0.0, 1.0))
    ):
        kwargs: dict[str, Any] = {"data_range": data_range, "dim": dim, "reduction": reduction}
        cases.append(
            Case(
                f"PeakSignalNoiseRatio[dim={dim}|{reduction}|{data_range}]",
                "PeakSignalNoiseRatio",
                kwargs,
                _image_batches(0.2, 8),
                our_image,
                tm_image,
            )
        )
    return cases


CASES += psnr_dim_cases()
