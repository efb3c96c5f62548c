"""The vocabulary of `Metric.input_kind`: what a metric's `update` takes.

A class attribute rather than a list of classes kept elsewhere, so a new metric says what it
reads where it is defined (the learner's adaptors, the docs and the common tests read it).
"""

from __future__ import annotations

__all__ = ["INPUT_KINDS"]

#: Input kind -> what `update` takes.
INPUT_KINDS: dict[str, str] = {
    "classification": "`(labels, predictions, weights=None)`: class indices, or class scores "
    "(binary or multiclass) that are thresholded or arg-maxed",
    "ranking": "`(labels, predictions, weights=None)`: labels and scores that are ranked "
    "(AUC, AUROC, precision/recall at k)",
    "regression": "`(labels, predictions)`: real-valued targets and predictions",
    "scores": "`(preds, target, weights=None)`: probabilities or scores and their labels, "
    "TorchMetrics' order (curves, calibration)",
    "multilabel": "`(preds, target, weights=None)`: multilabel scores and 0/1 indicators",
    "retrieval": "`(preds, target, indexes=None, mask=None)`: candidate scores and relevance",
    "image": "`(preds, target)`: images (N, C, H, W)",
    "text": "`(preds, target)`: strings (host work; refused inside a traced step)",
    "tokens": "`(labels, loss or logits, weights=None)`: token labels and their loss or logits",
    "values": "`(values, weights)`: numbers to aggregate",
    "learning_rate": "`(learning_rate)`: a rate or an optimizer to read it from",
    "count": "`(items=1)`: a count of processed items (timed on the host)",
    "wrapped": "whatever the wrapped metric's `update` takes",
}
