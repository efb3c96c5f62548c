"""The HTML report of a run: one self-contained file (PNGs embedded as base64 data URIs, inline
CSS, no scripts and no external resources) with the summary table and every plot."""

from __future__ import annotations

import base64
import html
from collections.abc import Mapping, Sequence
from pathlib import Path

from torchtally._records import SYSTEM_SPLIT, CurveData
from torchtally.learn._format import qualified_name
from torchtally.learn._summarize import SummaryRow, epoch_cell, format_cell

__all__ = ["write_report"]

_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto;
       max-width: 1100px; color: #222; padding: 0 1em; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; font-size: 0.9em; margin: 0.5em 0; }
th, td { padding: 0.25em 0.8em; border-bottom: 1px solid #eee; text-align: right; }
th { background: #f4f4f4; } td.text, th.text { text-align: left; }
figure { margin: 1.2em 0; } figcaption { color: #555; font-size: 0.9em; }
img { max-width: 100%; height: auto; border: 1px solid #eee; }
p.subtitle { color: #555; margin-top: -0.5em; }
"""


def write_report(
    path: Path,
    title: str,
    rows: Sequence[SummaryRow],
    figures: Sequence[tuple[str, Path]],
    curves: Mapping[str, CurveData],
    subtitle: str = "",
) -> Path:
    """Write the report.

    Args:
        path: Where to write the HTML.
        title: The page title (the run it reports on).
        rows: The summary table (min / last / max per metric and split).
        figures: (caption, PNG path) in display order; each PNG is embedded.
        curves: Split -> its final-evaluation curves, for the per-class AUC / AP table and
            the calibration and @k tables.
        subtitle: A line under the title (where the logs are, what the report covers).

    Returns:
        `path`.

    Example:
        >>> from torchtally._records import MetricRecord
        >>> from torchtally.learn._plots.canvas import new_figure, save_png
        >>> from torchtally.learn._summarize import summarize
        >>> rows = summarize([MetricRecord("train", 1, 10, "loss", 0.5, 0.0)])
        >>> png = save_png(new_figure(4, 3), Path("loss.png"))
        >>> write_report(Path("report.html"), "run", rows, [("loss", png)], {})
        PosixPath('report.html')
        >>> "data:image/png;base64," in Path("report.html").read_text()
        True
    """
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_text(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{_text(title)}</h1>",
        f'<p class="subtitle">{_text(subtitle)}</p>' if subtitle else "",
        "<h2>Summary</h2>",
        _summary_table(rows),
    ]
    for split, data in curves.items():
        if data.roc or data.pr:
            parts += [f"<h2>{_text(split)}: per-class scores</h2>", _scores_table(data)]
        if data.reliability:
            parts += [f"<h2>{_text(split)}: calibration</h2>", _calibration_table(data)]
        if data.at_k:
            parts += [f"<h2>{_text(split)}: retrieval metrics @k</h2>", _at_k_table(data)]
    parts.append("<h2>Plots</h2>")
    for caption, png in figures:
        encoded = base64.b64encode(png.read_bytes()).decode("ascii")
        parts.append(
            f'<figure><img alt="{_text(caption)}" src="data:image/png;base64,{encoded}">'
            f"<figcaption>{_text(caption)}</figcaption></figure>"
        )
    parts.append("</body></html>")
    path.write_text("\n".join(parts) + "\n", encoding="utf-8")
    return path


def _summary_table(rows: Sequence[SummaryRow]) -> str:
    head = (
        '<tr><th class="text">split</th><th class="text">metric</th><th>values</th>'
        "<th>min</th><th>epoch</th><th>last</th><th>max</th><th>epoch</th></tr>"
    )
    body = [
        f'<tr><td class="text">{_text(r.split)}</td><td class="text">{_text(_name(r))}</td>'
        f"<td>{r.count}</td><td>{_value(r.min, r.unit)}</td><td>{epoch_cell(r, r.min_epoch)}</td>"
        f"<td>{_value(r.last, r.unit)}</td><td>{_value(r.max, r.unit)}</td>"
        f"<td>{epoch_cell(r, r.max_epoch)}</td></tr>"
        for r in rows
    ]
    return "<table>" + head + "".join(body) + "</table>"


def _scores_table(data: CurveData) -> str:
    classes = list(dict.fromkeys([*data.roc, *data.pr]))
    head = '<tr><th class="text">class</th><th>ROC AUC</th><th>average precision</th></tr>'
    body = [
        f'<tr><td class="text">{_text(name)}</td>'
        f"<td>{_score(data.roc.get(name, {}).get('auc'))}</td>"
        f"<td>{_score(data.pr.get(name, {}).get('ap'))}</td></tr>"
        for name in classes
    ]
    return "<table>" + head + "".join(body) + "</table>"


def _calibration_table(data: CurveData) -> str:
    head = (
        '<tr><th class="text">metric</th><th class="text">norm</th><th>value</th>'
        "<th>bins filled</th><th>samples</th></tr>"
    )
    body = []
    for name, entry in data.reliability.items():
        weights = _numbers(entry.get("weight"))
        body.append(
            f'<tr><td class="text">{_text(name)}</td>'
            f'<td class="text">{_text(str(entry.get("norm", "")))}</td>'
            f"<td>{_score(entry.get('value'))}</td>"
            f"<td>{sum(w > 0 for w in weights)} / {len(weights)}</td><td>{sum(weights):g}</td></tr>"
        )
    return "<table>" + head + "".join(body) + "</table>"


def _at_k_table(data: CurveData) -> str:
    ks = sorted({int(k) for entry in data.at_k.values() for k in _numbers(entry.get("k"))})
    head = '<tr><th class="text">metric</th>' + "".join(f"<th>@{k}</th>" for k in ks) + "</tr>"
    body = []
    for name, entry in data.at_k.items():
        values = dict(zip((int(k) for k in _numbers(entry.get("k"))), _values(entry)))
        cells = "".join(f"<td>{_score(values.get(k))}</td>" for k in ks)
        body.append(f'<tr><td class="text">{_text(name)}</td>{cells}</tr>')
    return "<table>" + head + "".join(body) + "</table>"


def _name(row: SummaryRow) -> str:
    return qualified_name(row.name) if row.split == SYSTEM_SPLIT else row.name


def _numbers(values: object) -> list[float]:
    if not isinstance(values, list):
        return []
    return [float(v) for v in values if isinstance(v, (int, float))]


def _values(entry: Mapping[str, object]) -> list[object]:
    values = entry.get("value")
    return list(values) if isinstance(values, list) else []


def _value(value: float, unit: str) -> str:
    return _text(format_cell(value, unit))


def _score(value: object) -> str:
    return f"{value:.4f}" if isinstance(value, (int, float)) else "–"


def _text(value: str) -> str:
    return html.escape(value, quote=True)
