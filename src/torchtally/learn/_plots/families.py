"""Plots of the test metrics' own plot data (`CurveData.reliability`, `.metric_pr`,
`.metric_roc`, `.at_k`): a reliability diagram per calibration metric, the curves of each
precision-recall or ROC curve metric, and one chart of every retrieval metric against its
cut-off k."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

from torchtally.learn._plots.canvas import new_figure, save_png

__all__ = ["plot_at_k", "plot_metric_pr", "plot_metric_roc", "plot_reliability"]

_NORM_NAMES = {"l1": "ECE", "max": "MCE", "l2": "RMS calibration error"}
_LEGEND_LIMIT = 20


def plot_reliability(name: str, diagram: Mapping[str, object], split: str, path: Path) -> Path:
    """A reliability diagram: per confidence bin, the accuracy (blue bars) against the
    diagonal of perfect calibration, the (mean confidence, accuracy) point of the bin, and
    the gap from the accuracy to the mean confidence (red hatching: above a bar for
    over-confidence, inside it for under-confidence); below, how many samples (or how much
    weight) each bin holds.

    Args:
        name: The calibration metric's name.
        diagram: Its entry of `CurveData.reliability` (`edges`, `confidence`, `accuracy`,
            `weight`, `norm`, `value`).
        split: The split name (for the title).
        path: Where to write the PNG.

    Returns:
        `path`.

    Example:
        >>> diagram = {"edges": [0.0, 0.5, 1.0], "confidence": [0.3, 0.8],
        ...            "accuracy": [0.25, 0.9], "weight": [0.4, 0.6], "norm": "l1", "value": 0.08}
        >>> plot_reliability("ece", diagram, "test", Path("rel.png"))
        PosixPath('rel.png')
    """
    edges = _floats(diagram.get("edges"))
    confidence = _floats(diagram.get("confidence"))
    accuracy = _floats(diagram.get("accuracy"))
    weight = _floats(diagram.get("weight"))
    bins = min(len(edges) - 1, len(confidence), len(accuracy), len(weight))
    lefts = edges[:bins]
    widths = [edges[i + 1] - edges[i] for i in range(bins)]
    filled = [i for i in range(bins) if weight[i] > 0 and math.isfinite(accuracy[i])]
    figure = new_figure(6.4, 7.2)
    top, bottom = figure.subplots(2, 1, sharex=True, height_ratios=[3, 1])
    top.plot([0, 1], [0, 1], ls="--", lw=1, color="0.5", label="perfect calibration")
    top.bar(
        [lefts[i] for i in filled],
        [accuracy[i] for i in filled],
        width=[widths[i] for i in filled],
        align="edge",
        color="#4c72b0",
        edgecolor="white",
        label="accuracy",
    )
    gaps = [confidence[i] - accuracy[i] for i in filled]
    top.bar(
        [lefts[i] for i in filled],
        gaps,
        bottom=[accuracy[i] for i in filled],
        width=[widths[i] for i in filled],
        align="edge",
        facecolor=(0.87, 0.27, 0.27, 0.18),
        edgecolor="#cc3333",
        hatch="//",
        lw=1.0,
        label="gap: accuracy to mean confidence",
    )
    top.plot(
        [confidence[i] for i in filled],
        [accuracy[i] for i in filled],
        "o",
        color="black",
        ms=4,
        label="(mean confidence, accuracy)",
    )
    top.set_xlim(0, 1)
    top.set_ylim(0, 1.03)
    top.set_ylabel("accuracy")
    top.grid(alpha=0.3)
    top.legend(loc="upper left", fontsize=8)
    norm = str(diagram.get("norm", "l1"))
    value = diagram.get("value")
    score = f" ({_NORM_NAMES.get(norm, norm)} = {value:.4f})" if _number(value) else ""
    top.set_title(f"{split}: {name} reliability diagram{score}", fontweight="bold")
    bottom.bar(lefts, weight[:bins], width=widths, align="edge", color="0.55", edgecolor="white")
    bottom.set_xlabel("confidence")
    bottom.set_ylabel("samples")
    bottom.grid(alpha=0.3)
    return save_png(figure, path)


def plot_metric_pr(
    name: str, curves: Mapping[str, Mapping[str, object]], split: str, path: Path
) -> Path:
    """The precision-recall curves a `PrecisionRecallCurveMetric` computed, one per class
    (drawn as steps; points where precision is undefined are left out).

    Args:
        name: The metric's name.
        curves: Its entry of `CurveData.metric_pr` (class -> precision, recall, thresholds).
        split: The split name (for the title).
        path: Where to write the PNG.

    Returns:
        `path`.

    Example:
        >>> curves = {"dog": {"precision": [0.5, 1.0, 1.0], "recall": [1.0, 0.5, 0.0],
        ...                   "thresholds": [0.2, 0.7]}}
        >>> plot_metric_pr("pr_curve", curves, "test", Path("pr.png"))
        PosixPath('pr.png')
    """
    figure = new_figure(6.4, 6.0)
    ax = figure.subplots()
    for label, curve in curves.items():
        recall, precision = _floats(curve.get("recall")), _floats(curve.get("precision"))
        # The metric's order (recall decreasing) drawn as steps-post: scikit-learn's display.
        points = [(r, p) for r, p in zip(recall, precision) if math.isfinite(r * p)]
        ax.plot(
            [r for r, _ in points],
            [p for _, p in points],
            lw=1.6,
            marker="." if len(points) <= 60 else None,
            drawstyle="steps-post",
            label=label,
        )
    ax.set_xlim(-0.01, 1.01)
    ax.set_ylim(-0.01, 1.01)
    ax.set_aspect("equal")
    ax.grid(alpha=0.3)
    ax.set_xlabel("recall")
    ax.set_ylabel("precision")
    ax.set_title(f"{split}: {name} (precision-recall curve metric)", fontweight="bold")
    if len(curves) <= _LEGEND_LIMIT:
        ax.legend(loc="best", fontsize=8)
    return save_png(figure, path)


def plot_metric_roc(
    name: str, curves: Mapping[str, Mapping[str, object]], split: str, path: Path
) -> Path:
    """The ROC curves a `ROCMetric` computed, one per class, against the chance diagonal.

    Args:
        name: The metric's name.
        curves: Its entry of `CurveData.metric_roc` (class -> fpr, tpr, thresholds).
        split: The split name (for the title).
        path: Where to write the PNG.

    Returns:
        `path`.

    Example:
        >>> curves = {"dog": {"fpr": [0.0, 0.0, 1.0], "tpr": [0.0, 1.0, 1.0],
        ...                   "thresholds": [1.0, 0.7, 0.2]}}
        >>> plot_metric_roc("roc", curves, "test", Path("roc.png"))
        PosixPath('roc.png')
    """
    figure = new_figure(6.4, 6.0)
    ax = figure.subplots()
    ax.plot([0, 1], [0, 1], ls="--", lw=1, color="0.6", label="chance")
    for label, curve in curves.items():
        fpr, tpr = _floats(curve.get("fpr")), _floats(curve.get("tpr"))
        points = [(x, y) for x, y in zip(fpr, tpr) if math.isfinite(x * y)]
        ax.plot([x for x, _ in points], [y for _, y in points], lw=1.6, label=label)
    ax.set_xlim(-0.01, 1.01)
    ax.set_ylim(-0.01, 1.01)
    ax.set_aspect("equal")
    ax.grid(alpha=0.3)
    ax.set_xlabel("false positive rate")
    ax.set_ylabel("true positive rate")
    ax.set_title(f"{split}: {name} (ROC curve metric)", fontweight="bold")
    if len(curves) <= _LEGEND_LIMIT:
        ax.legend(loc="lower right", fontsize=8)
    return save_png(figure, path)


def plot_at_k(at_k: Mapping[str, Mapping[str, object]], split: str, path: Path) -> Path | None:
    """Every retrieval metric against its cut-off k (one line each); a star marks the value
    the metric logs (at its own `top_k`; without one, at the candidate count).

    Args:
        at_k: `CurveData.at_k` (metric -> k, value, top_k, logged_k).
        split: The split name (for the title).
        path: Where to write the PNG.

    Returns:
        `path`, or None when `at_k` is empty.

    Example:
        >>> at_k = {"ndcg": {"k": [1, 2, 3], "value": [0.5, 0.82, 0.82], "top_k": 3, "logged_k": 3}}
        >>> plot_at_k(at_k, "test", Path("at-k.png"))
        PosixPath('at-k.png')
    """
    if not at_k:
        return None
    figure = new_figure(7.2, 5.0)
    ax = figure.subplots()
    largest = 1.0
    for name, entry in at_k.items():
        ks, values = _floats(entry.get("k")), _floats(entry.get("value"))
        (line,) = ax.plot(ks, values, marker="o", ms=3.5, lw=1.6, label=name)
        largest = max([largest, *ks])
        own = entry.get("logged_k")
        if _number(own) and own in ks:
            value = values[ks.index(float(own))]
            ax.plot([own], [value], marker="*", ms=13, color=line.get_color(), mec="black")
            ax.annotate(
                f"{value:.3f}", (float(own), value), textcoords="offset points", xytext=(6, 6)
            )
    ax.set_xlim(0.5, largest + 0.9)  # room for the last star's label
    ax.set_ylim(-0.02, 1.05)
    if largest <= 25:
        ax.set_xticks(range(1, int(largest) + 1))
    ax.set_xlabel("k (cut-off)")
    ax.set_ylabel("value")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    ax.set_title(f"{split}: retrieval metrics @k (★ = the logged value)", fontweight="bold")
    return save_png(figure, path)


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _floats(values: object) -> list[float]:
    if not isinstance(values, Sequence):
        return []
    return [math.nan if v is None else float(v) for v in values]
