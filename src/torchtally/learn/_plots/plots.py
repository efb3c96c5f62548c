"""`plot_logdir`: a learner's log directory rendered as PNG plots and one HTML report (what
`torchtally plot LOGDIR` runs)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
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

__all__ = ["plot_logdir", "report_heading", "run_name"]


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
    title, subtitle = report_heading(logdir, data.records, data.curves)
    report = write_report(
        out / "report.html", title, summarize(data.records), figures, data.curves, subtitle
    )
    return [path for _, path in figures] + [report]


#: Folder names that say where logs are but not which run they are of.
_GENERIC_FOLDERS = frozenset({"logs", "log", "logdir", "runs", "run", "output", "outputs"})


def run_name(logdir: str | Path) -> str:
    """The name of the run whose logs are in `logdir`: the folder's name, or its parent's when
    the folder is only called "logs" or the like (the learner's `logdir` is often `RUN/logs`).

    Args:
        logdir: The log directory.

    Returns:
        The name.

    Example:
        >>> run_name("tally-out/demo-20261129-0712/logs"), run_name("runs/mnist")
        ('demo-20261129-0712', 'mnist')
    """
    folder = Path(logdir).resolve()
    if folder.name.lower() in _GENERIC_FOLDERS and folder.parent.name:
        return folder.parent.name
    return folder.name


def report_heading(
    logdir: str | Path, records: Sequence[MetricRecord], curves: Mapping[str, object]
) -> tuple[str, str]:
    """The report's title (the run) and the line under it (where its logs are, what it shows).

    Args:
        logdir: The log directory.
        records: Its records.
        curves: Split -> its final-evaluation curves.

    Returns:
        (title, subtitle).

    Example:
        >>> records = [MetricRecord("train", e, 10 * e, "loss", 1 / e, 0.0) for e in (1, 2, 3)]
        >>> report_heading("runs/mnist", records, {})[0]
        'Run mnist: training report'
        >>> report_heading("runs/mnist", records, {})[1].split(" · ")[1:]
        ['epochs 1–3 of train', '1 metric']
    """
    run = [r for r in records if r.split not in (SYSTEM_SPLIT, "test")]
    parts = [f"logs in {Path(logdir).resolve()}"]
    if run:
        first, last = min(r.epoch for r in run), max(r.epoch for r in run)
        epochs = f"epoch {first}" if first == last else f"epochs {first}–{last}"
        splits = ", ".join(ordered_splits({r.split: None for r in run}))
        parts.append(f"{epochs} of {splits}")
    if any(r.split == "test" for r in records) or "test" in curves:
        parts.append("the test evaluation")
    names = {r.name for r in records if r.split != SYSTEM_SPLIT}
    parts.append(f"{len(names)} metric{'s' * (len(names) != 1)}")
    per_metric = Counter(r.name for r in records if r.split == SYSTEM_SPLIT)
    samples = max(per_metric.values(), default=0)  # one sample reads every system metric
    if samples:
        parts.append(f"{samples} system samples")
    return f"Run {run_name(logdir)}: training report", " · ".join(parts)
