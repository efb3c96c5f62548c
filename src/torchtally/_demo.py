"""The main job (`make demo`): train a small classifier on scikit-learn's bundled digits with the
learner (live dashboard, loggers, system monitor, checkpoints), evaluate the held-out split with
the whole catalog inside one `torch.compile(fullgraph=True)` step beside scikit-learn's values,
benchmark the model NeuroBench-style, and render the plots and the HTML report."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import torch
from torch import Tensor, nn

from torchtally.metrics import (
    AccuracyMetric,
    AUROCMetric,
    ConfusionMatrixMetric,
    F1ScoreMetric,
    LearningRateMetric,
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
    x = [torch.tensor(a, dtype=torch.float32) for a in (x_train, x_test)]
    y = [torch.tensor(a, dtype=torch.long) for a in (y_train, y_test)]
    return x[0], y[0], x[1], y[1]


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
        return cast(Tensor, scores)

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


def _loaders(
    x: Tensor, y: Tensor, batch_size: int, shuffle: bool, seed: int = 0
) -> torch.utils.data.DataLoader[tuple[Tensor, ...]]:
    dataset = torch.utils.data.TensorDataset(x, y)
    generator = torch.Generator().manual_seed(seed)
    return torch.utils.data.DataLoader(
        dataset, batch_size=batch_size, shuffle=shuffle, generator=generator
    )


def _learner_metrics() -> dict[str, list[Any]]:
    c = NUM_CLASSES
    return {
        "train": [MeanMetric("loss"), AccuracyMetric(), LearningRateMetric()],
        "valid": [
            MeanMetric("loss"),
            AccuracyMetric(),
            F1ScoreMetric(c, average_type="macro", name="f1_macro"),
            AUROCMetric(c, capacity=1024, name="auroc"),
        ],
        "test": [
            MeanMetric("loss"),
            AccuracyMetric(),
            F1ScoreMetric(c, average_type="macro", name="f1_macro"),
            ConfusionMatrixMetric(c),
        ],
    }


def _fit(out: Path, epochs: int) -> tuple[nn.Module, dict[str, float], int, tuple[Tensor, ...]]:
    """Train with the learner (dashboard, loggers, system monitor), then test with curves."""
    from torchtally import optim
    from torchtally.learn import FileLogger, Learner, SummaryTable, TensorBoardLogger, make_renderer
    from torchtally.metrics.system import SystemMonitor

    x_train, y_train, x_test, y_test = load_digits_split()
    x_fit, y_fit, x_valid, y_valid = x_train[:1000], y_train[:1000], x_train[1000:], y_train[1000:]
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, NUM_CLASSES))
    optimizer = optim.Adam(model.parameters(), lr=3e-3)
    steps = epochs * ((len(x_fit) + 63) // 64)
    scheduler = optim.lr_scheduler.CosineDecayLR(optimizer, 3e-3, 3e-4, steps)
    logdir = out / "logs"
    observers = [
        make_renderer(),  # the learner binds its request_stop to `q`
        FileLogger(logdir, format="csv"),
        TensorBoardLogger(logdir / "tensorboard"),
        SummaryTable(),
    ]
    learner = Learner(
        model,
        optimizer,
        lr_scheduler=scheduler,
        metrics=_learner_metrics(),
        num_epochs=epochs,
        logdir=logdir,
        observers=observers,
        log_every=4,
        keep_checkpoints=3,
        monitor=SystemMonitor(interval_s=0.5),
        class_names=[str(i) for i in range(NUM_CLASSES)],
    )
    learner.fit(_loaders(x_fit, y_fit, 64, True), _loaders(x_valid, y_valid, 64, False))
    values = learner.test(_loaders(x_test, y_test, 64, False), curves=True)
    return learner.model, values, learner.epochs_done, (x_train, y_train, x_test, y_test)


def _catalog_table(model: nn.Module, x_test: Tensor, y_test: Tensor, compile_step: bool) -> bool:
    """The whole catalog in one compiled eval step, each value beside scikit-learn's."""
    results, mean_loss, scores = evaluate(model, x_test, y_test, compile_step)
    reference = sklearn_reference(y_test, scores)
    mode = "torch.compile(fullgraph=True)" if compile_step else "eager"
    print(f"\nThe catalog on the test split, updated inside one {mode} eval step:\n")
    print(f"{'metric':<34}{'torchtally':>14}{'scikit-learn':>16}  match")
    all_match = True
    for key, value in results.items():
        name = key.removeprefix("test/")
        expected = torch.as_tensor(reference[name], dtype=torch.float64)
        match = bool(torch.allclose(torch.as_tensor(value, dtype=torch.float64), expected))
        all_match &= match
        print(f"{key:<34}{_format(value):>14}{_format(expected):>16}  {'yes' if match else 'NO'}")
    print(f"{'test/loss':<34}{mean_loss:>14.6f}")
    return all_match


def _benchmark(model: nn.Module, x_test: Tensor, y_test: Tensor, out: Path) -> dict[str, Any]:
    """NeuroBench-style static and workload metrics of the trained model."""
    from torchtally import bench

    loader = _loaders(x_test, y_test, 64, False)
    argmax = lambda batch: batch.argmax(-1)  # noqa: E731
    static = [bench.Footprint, bench.ParameterCount, bench.ConnectionSparsity]
    workload = [bench.ClassificationAccuracy, bench.ActivationSparsity, bench.SynapticOperations]
    benchmark = bench.Benchmark(model, loader, [], [argmax], [static, workload])
    results = benchmark.run(quiet=True)
    benchmark.save_benchmark_results(str(out / "benchmark"))
    print("\nNeuroBench-style benchmark of the trained model:")
    for name, value in results.items():
        print(f"  {name:<26}{value}")
    return results


def run_demo(epochs: int = 20, compile_step: bool = True, out: str | None = None) -> int:
    """The main job: train with the learner, check the catalog, benchmark, plot.

    Returns:
        A process exit code: 0 when every catalog value matches scikit-learn and the test
        accuracy is at least 95%.
    """
    from torchtally.learn import plot_logdir

    start = time.perf_counter()
    folder = Path(out) if out else Path("tally-out") / time.strftime("demo-%Y%m%d-%H%M%S")
    folder.mkdir(parents=True, exist_ok=True)
    model, values, trained_epochs, (_, _, x_test, y_test) = _fit(folder, epochs)
    all_match = _catalog_table(model, x_test, y_test, compile_step)
    _benchmark(model, x_test, y_test, folder)
    paths = plot_logdir(folder / "logs", folder / "plots")
    accuracy = float(values["accuracy"])
    print(
        f"\ntest accuracy {accuracy:.2%} after {trained_epochs} epochs; "
        f"{len(paths)} plot files, report: {folder / 'plots' / 'report.html'}"
    )
    print(f"output folder: {folder.resolve()}")
    print(f"done in {time.perf_counter() - start:.1f} s")
    return 0 if all_match and accuracy >= 0.95 else 1
