"""Plots of a split's final-evaluation curves: the confusion matrix as an annotated heatmap,
and ROC and precision-recall curves per class with AUC / AP in the legend."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from torchtally._records import CurveData
from torchtally.learn._plots.canvas import new_figure, save_png

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["plot_confusion_matrix", "plot_pr", "plot_roc"]

_ANNOTATE_LIMIT = 25  # annotate cells up to this many classes
_LEGEND_LIMIT = 20  # list classes in the legend up to this many


def plot_confusion_matrix(curves: CurveData, split: str, path: Path) -> Path | None:
    """The confusion matrix: rows = true labels, columns = predictions, each cell annotated
    with its count; colours show the share of the row (the true class) so that rare classes
    stay readable.

    Args:
        curves: The split's curves.
        split: The split name (for the title).
        path: Where to write the PNG.

    Returns:
        `path`, or None when `curves` has no confusion matrix.

    Example:
        >>> plot_confusion_matrix(CurveData([[5, 1], [2, 7]], ["cat", "dog"]), "test", Path("c.png"))
        PosixPath('c.png')
    """
    matrix = curves.confusion_matrix
    if not matrix:
        return None
    n = len(matrix)
    names = _class_names(curves.class_names, n)
    totals = [sum(row) for row in matrix]
    shares = [[c / t if t else 0.0 for c in row] for row, t in zip(matrix, totals)]
    side = min(14.0, 3.5 + 0.45 * n)
    figure = new_figure(side + 1.2, side)
    ax = figure.subplots()
    image = ax.imshow(shares, cmap="Blues", vmin=0.0, vmax=1.0)
    figure.colorbar(image, ax=ax, shrink=0.8, label="share of the true class")
    ax.set_xticks(range(n), names, rotation=45 if n > 6 else 0, ha="right" if n > 6 else "center")
    ax.set_yticks(range(n), names)
    ax.set_xlabel("predicted")
    ax.set_ylabel("true")
    ax.set_title(f"{split}: confusion matrix ({sum(totals):g} samples)", fontweight="bold")
    if n <= _ANNOTATE_LIMIT:
        for i, row in enumerate(matrix):
            for j, count in enumerate(row):
                color = "white" if shares[i][j] > 0.5 else "black"
                text = f"{count:g}" if float(count).is_integer() else f"{count:.2f}"
                ax.text(j, i, text, ha="center", va="center", color=color, fontsize=9)
    return save_png(figure, path)


def plot_roc(curves: CurveData, split: str, path: Path) -> Path | None:
    """ROC curves per class (true positive rate against false positive rate), AUC in the legend.

    Args:
        curves: The split's curves.
        split: The split name (for the title).
        path: Where to write the PNG.

    Returns:
        `path`, or None when `curves` has no ROC curves.

    Example:
        >>> import torch
        >>> from torchtally.learn import curve_data
        >>> scores = torch.tensor([[0.8, 0.2], [0.3, 0.7], [0.6, 0.4]])
        >>> curves = curve_data(torch.tensor([0, 1, 1]), scores, ["cat", "dog"])
        >>> plot_roc(curves, "test", Path("roc.png"))
        PosixPath('roc.png')
    """
    if not curves.roc:
        return None
    figure = new_figure(6.4, 6.0)
    ax = figure.subplots()
    ax.plot([0, 1], [0, 1], ls="--", lw=1, color="0.6", label="chance")
    _draw(ax, curves.roc, "fpr", "tpr", "auc", "AUC", steps=False)
    ax.set_xlabel("false positive rate")
    ax.set_ylabel("true positive rate")
    ax.set_title(f"{split}: ROC", fontweight="bold")
    _finish(ax, len(curves.roc), "lower right")
    return save_png(figure, path)


def plot_pr(curves: CurveData, split: str, path: Path) -> Path | None:
    """Precision-recall curves per class (drawn as steps), average precision in the legend.

    Args:
        curves: The split's curves.
        split: The split name (for the title).
        path: Where to write the PNG.

    Returns:
        `path`, or None when `curves` has no precision-recall curves.

    Example:
        >>> import torch
        >>> from torchtally.learn import curve_data
        >>> scores = torch.tensor([[0.8, 0.2], [0.3, 0.7], [0.6, 0.4]])
        >>> curves = curve_data(torch.tensor([0, 1, 1]), scores, ["cat", "dog"])
        >>> plot_pr(curves, "test", Path("pr.png"))
        PosixPath('pr.png')
    """
    if not curves.pr:
        return None
    figure = new_figure(6.4, 6.0)
    ax = figure.subplots()
    _draw(ax, curves.pr, "recall", "precision", "ap", "AP", steps=True)
    ax.set_xlabel("recall")
    ax.set_ylabel("precision")
    ax.set_title(f"{split}: precision-recall", fontweight="bold")
    _finish(ax, len(curves.pr), "lower left")
    return save_png(figure, path)


def _draw(
    ax: Axes,
    per_class: Mapping[str, Mapping[str, object]],
    x_key: str,
    y_key: str,
    score_key: str,
    score_name: str,
    *,
    steps: bool,
) -> None:
    for name, curve in per_class.items():
        xs, ys = _floats(curve.get(x_key)), _floats(curve.get(y_key))
        score = curve.get(score_key)
        label = f"{name} ({score_name} = {score:.3f})" if isinstance(score, (int, float)) else name
        ax.plot(xs, ys, lw=1.6, label=label, drawstyle="steps-post" if steps else "default")


def _finish(ax: Axes, classes: int, corner: Literal["lower right", "lower left"]) -> None:
    ax.set_xlim(-0.01, 1.01)
    ax.set_ylim(-0.01, 1.01)
    ax.set_aspect("equal")
    ax.grid(alpha=0.3)
    if classes <= _LEGEND_LIMIT:
        ax.legend(loc=corner, fontsize=8)
    else:
        ax.text(0.98, 0.02, f"{classes} classes", transform=ax.transAxes, ha="right", fontsize=8)


def _floats(values: object) -> list[float]:
    if not isinstance(values, Sequence):
        return []
    return [float(v) for v in values]


def _class_names(names: Sequence[str], n: int) -> list[str]:
    return [str(names[i]) if i < len(names) else str(i) for i in range(n)]
