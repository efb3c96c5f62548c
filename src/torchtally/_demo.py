"""The main job: train a small classifier on scikit-learn's digits, then evaluate it with the
catalog inside one `torch.compile(fullgraph=True)` eval step, and print each value beside
scikit-learn's on the same predictions."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor, nn

from torchtally.metrics import (
    AccuracyMetric,
    ConfusionMatrixMetric,
    F1ScoreMetric,
    MeanMetric,
    MeanPerClassAccuracyMetric,
    MetricCollection,
    PrecisionMetric,
    RecallMetric,
    TopKAccuracyMetric,
)

NUM_CLASSES = 10


def load_digits_split(seed: int = 0) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """scikit-learn's bundled 8x8 digits (no download), 75/25 stratified split."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    features, labels = load_digits(return_X_y=True)
    x_train, x_test, y_train, y_test = train_test_split(
        features / 16.0, labels, test_size=0.25, random_state=seed, stratify=labels
    )
    as_x = lambda a: torch.tensor(a, dtype=torch.float32)  # noqa: E731
    as_y = lambda a: torch.tensor(a, dtype=torch.long)  # noqa: E731
    return as_x(x_train), as_y(y_train), as_x(x_test), as_y(y_test)


def train_classifier(x: Tensor, y: Tensor, epochs: int, seed: int = 0) -> nn.Module:
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, NUM_CLASSES))
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    for _ in range(epochs):
        for batch in torch.randperm(len(x)).split(64):
            loss = nn.functional.cross_entropy(model(x[batch]), y[batch])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return model.eval()


def catalog() -> MetricCollection:
    c = NUM_CLASSES
    return MetricCollection(
        {
            "accuracy": AccuracyMetric(),
            "top2_accuracy": TopKAccuracyMetric(k=2),
            "precision_macro": PrecisionMetric(c, average_type="macro"),
            "recall_macro": RecallMetric(c, average_type="macro"),
            "f1_macro": F1ScoreMetric(c, average_type="macro"),
            "f1_weighted": F1ScoreMetric(c, average_type="weighted"),
            "mean_per_class_accuracy": MeanPerClassAccuracyMetric(c),
            "confusion_matrix": ConfusionMatrixMetric(c),
        },
        prefix="test/",
    )


def sklearn_reference(labels: Tensor, scores: Tensor) -> dict[str, Any]:
    from sklearn import metrics as skm

    y, s = labels.numpy(), scores.double().numpy()
    p = s.argmax(-1)
    return {
        "accuracy": skm.accuracy_score(y, p),
        "top2_accuracy": skm.top_k_accuracy_score(y, s, k=2, labels=range(NUM_CLASSES)),
        "precision_macro": skm.precision_score(y, p, average="macro"),
        "recall_macro": skm.recall_score(y, p, average="macro"),
        "f1_macro": skm.f1_score(y, p, average="macro"),
        "f1_weighted": skm.f1_score(y, p, average="weighted"),
        "mean_per_class_accuracy": skm.balanced_accuracy_score(y, p),
        "confusion_matrix": skm.confusion_matrix(y, p),
    }


def evaluate(
    model: nn.Module, x: Tensor, y: Tensor, compile_step: bool
) -> tuple[dict[str, Any], float, Tensor]:
    metrics, loss = catalog(), MeanMetric("loss")

    def eval_step(inputs: Tensor, targets: Tensor) -> Tensor:
        scores = model(inputs)
        metrics.update(targets, scores)
        loss.update(nn.functional.cross_entropy(scores, targets, reduction="none"))
        return scores

    step: Callable[[Tensor, Tensor], Tensor] = (
        torch.compile(eval_step, fullgraph=True) if compile_step else eval_step
    )
    all_scores = []
    with torch.no_grad():
        for batch in torch.arange(len(x)).split(64):
            # a fixed batch shape avoids a recompile for the ragged last batch
            all_scores.append(step(x[batch], y[batch]))
    return metrics.compute(), float(loss), torch.cat(all_scores)


def _format(value: Any) -> str:
    if isinstance(value, Tensor) and value.numel() > 1:
        return f"{tuple(value.shape)} matrix"
    return f"{float(value):.6f}"


def run_demo(epochs: int = 30, compile_step: bool = True) -> int:
    """Train, evaluate with the catalog, print the table; return a process exit code."""
    start = time.perf_counter()
    x_train, y_train, x_test, y_test = load_digits_split()
    model = train_classifier(x_train, y_train, epochs)
    trained = time.perf_counter()
    results, mean_loss, scores = evaluate(model, x_test, y_test, compile_step)
    reference = sklearn_reference(y_test, scores)
    mode = "torch.compile(fullgraph=True)" if compile_step else "eager"
    print(
        f"digits: {len(x_train)} train / {len(x_test)} test, {epochs} epochs in "
        f"{trained - start:.1f} s; eval step: {mode}\n"
    )
    print(f"{'metric':<34}{'torchtally':>14}{'scikit-learn':>16}  match")
    all_match = True
    for key, value in results.items():
        name = key.removeprefix("test/")
        expected = torch.as_tensor(reference[name], dtype=torch.float64)
        match = bool(torch.allclose(torch.as_tensor(value, dtype=torch.float64), expected))
        all_match &= match
        print(f"{key:<34}{_format(value):>14}{_format(expected):>16}  {'yes' if match else 'NO'}")
    print(f"{'test/loss':<34}{mean_loss:>14.6f}")
    print(f"\ndone in {time.perf_counter() - start:.1f} s")
    return 0 if all_match else 1
