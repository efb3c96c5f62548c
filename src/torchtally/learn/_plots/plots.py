"""`plot_logdir`: a learner's log directory rendered as PNG plots and one HTML report (what
`torchtally plot LOGDIR` runs)."""

from __future__ import annotations

from pathlib import Path

from torchtally._records import SYSTEM_SPLIT, MetricRecord
from torchtally.learn._logs.logdir import read_logdir
from torchtally.learn._plots.canvas import safe_name
from torchtally.learn._plots.curves import plot_confusion_matrix, plot_pr, plot_roc
from torchtally.learn._plots.families import (
    plot_at_k,
    plot_metric_pr,
    plot_metric_roc,
    plot_reliability,
)
from torchtally.learn._plots.metrics import plot_metric, plot_system
from torchtally.learn._plots.report import write_report
from torchtally.learn._summarize import ordered_splits, summarize

__all__ = ["plot_logdir"]


def plot_logdir(logdir: str | Path, out_dir: str | Path | None = None) -> list[Path]:
    """Render a learner's logs: a PNG per metric (a panel per split, x = step, epochs marked),
    one PNG of the system samples, and for every split with `curves.json` its confusion matrix,
    ROC and precision-recall curves, a reliability diagram per calibration metric, the curves of
    each precision-recall or ROC curve metric and the retrieval metrics against k; then `report.html`, which embeds them all with a summary
    table (min / last / max per metric and split) and needs no other file.

    Needs matplotlib (`pip install torchtally[plots]`); uses its Agg canvas directly, so the
    pyplot backend and global state are left alone.

    Args:
        logdir: The learner's log directory (`<split>/epoch-<n>.csv|jsonl`,
            `<split>/curves.json`).
        out_dir: Where to write; default `<logdir>/plots`. Created if missing; files of the same
            names are overwritten.

    Returns:
        The files written: the PNGs in report order, then `report.html`.

    Raises:
        FileNotFoundError: `logdir` is not a directory.
        ValueError: `logdir` holds no logs.
        ImportError: matplotlib is not installed.

    Example:
        >>> from torchtally.learn import FileLogger
        >>> FileLogger("runs/mnist").on_records(
        ...     [MetricRecord("train", e, 10 * e, "loss", 1 / e, 0.0) for e in (1, 2, 3)])
        >>> paths = plot_logdir("runs/mnist")
        >>> [path.name for path in paths]
        ['metric-loss.png', 'report.html']
    """
    data = read_logdir(logdir)
    out = Path(logdir) / "plots" if out_dir is None else Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    figures: list[tuple[str, Path]] = []
    used: set[str] = set()

    def target(stem: str) -> Path:
        name, n = stem, 1
        while name in used:  # two metric names with the same file-safe form
            n += 1
            name = f"{stem}-{n}"
        used.add(name)
        return out / f"{name}.png"

    by_metric: dict[str, dict[str, list[MetricRecord]]] = {}
    system: list[MetricRecord] = []
    for record in data.records:
        if record.split == SYSTEM_SPLIT:
            system.append(record)
        else:
            by_metric.setdefault(record.name, {}).setdefault(record.split, []).append(record)
    for name in sorted(by_metric):
        splits = by_metric[name]
        ordered = {split: splits[split] for split in ordered_splits(splits)}
        figures.append((name, plot_metric(name, ordered, target(f"metric-{safe_name(name)}"))))
    if system:
        figures.append(("system", plot_system(system, target("system"))))
    for split in ordered_splits(data.curves):
        curves, stem = data.curves[split], safe_name(split)
        for caption, prefix, plot in (
            ("confusion matrix", "confusion", plot_confusion_matrix),
            ("ROC", "roc", plot_roc),
            ("precision-recall", "pr", plot_pr),
        ):
            path = plot(curves, split, target(f"{prefix}-{stem}"))
            if path is not None:
                figures.append((f"{split}: {caption}", path))
        for name, diagram in curves.reliability.items():
            path = target(f"reliability-{stem}-{safe_name(name)}")
            figures.append(
                (
                    f"{split}: {name} reliability diagram",
                    plot_reliability(name, diagram, split, path),
                )
            )
        for name, per_class in curves.metric_pr.items():
            path = target(f"pr-curve-{stem}-{safe_name(name)}")
            figures.append(
                (f"{split}: {name} precision-recall", plot_metric_pr(name, per_class, split, path))
            )
        for name, per_class in curves.metric_roc.items():
            path = target(f"roc-curve-{stem}-{safe_name(name)}")
            figures.append((f"{split}: {name} ROC", plot_metric_roc(name, per_class, split, path)))
        at_k = plot_at_k(curves.at_k, split, target(f"at-k-{stem}"))
        if at_k is not None:
            figures.append((f"{split}: retrieval metrics @k", at_k))
    title = f"torchtally report: {Path(logdir).resolve().name}"
    report = write_report(out / "report.html", title, summarize(data.records), figures, data.curves)
    return [path for _, path in figures] + [report]
