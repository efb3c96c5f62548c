"""`report.html` from `plot_logdir`: self-contained, with every plot embedded and the summary
table (min / last / max per metric and split) checked against values computed here."""

from __future__ import annotations

import base64
import dataclasses
import html
import json
import math
import re
from pathlib import Path

import pytest

from torchtally._records import CurveData, MetricRecord
from torchtally.learn._format import format_value
from torchtally.learn._plots.plots import plot_logdir

T0 = 1_700_000_000.0
ROW = re.compile(
    r'<tr><td class="text">(.*?)</td><td class="text">(.*?)</td><td>(\d+)</td>'
    r"<td>(.*?)</td><td>(?:.*?)</td><td>(.*?)</td><td>(.*?)</td><td>(?:.*?)</td></tr>"
)
IMG = re.compile(r'<img alt="(.*?)" src="(.*?)">')

# (split, name, unit) -> values in step order; epoch e holds steps 2e-1 and 2e
SERIES = {
    ("train", "loss", ""): [1.25, 0.75, 0.5, 0.625],
    ("train", "accuracy", "%"): [0.5, 0.625, 0.75, 0.8125],
    ("valid", "loss", ""): [0.875, math.nan, 0.5625, 0.6875],
    ("valid", "f1 <macro>", "%"): [0.25, 0.5, 0.375, 0.4375],
    ("system", "gpu0_power", "W"): [212.5, 245.5, 230.25, 199.0],
    ("system", "cpu_temperature", "°C"): [55.0, 71.5, 64.0, 60.5],
}
CURVES = CurveData(
    confusion_matrix=[[9, 1], [2, 8]],
    class_names=["neg", "pos"],
    roc={"pos": {"fpr": [0.0, 0.1, 1.0], "tpr": [0.0, 0.8, 1.0], "auc": 0.86125}},
    pr={"pos": {"recall": [1.0, 0.8, 0.0], "precision": [0.5, 0.89, 1.0], "ap": 0.8275}},
)


def make_logdir(root: Path) -> Path:
    by_file: dict[Path, list[dict[str, object]]] = {}
    for (split, name, unit), values in SERIES.items():
        for step, value in enumerate(values, start=1):
            epoch = (step + 1) // 2
            record = MetricRecord(split, epoch, step, name, value, T0 + step, unit)
            row = dataclasses.asdict(record)
            row["value"] = None if math.isnan(value) else value  # strict JSON: NaN as null
            by_file.setdefault(root / split / f"epoch-{epoch}.jsonl", []).append(row)
    for path, rows in by_file.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(r, allow_nan=False) + "\n" for r in rows))
    (root / "valid" / "curves.json").write_text(json.dumps(dataclasses.asdict(CURVES)))
    return root


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The paths `plot_logdir` wrote for the logdir above (rendered once for this module)."""
    return plot_logdir(make_logdir(tmp_path_factory.mktemp("report") / "run"))


def shown(value: float, unit: str) -> str:
    """The one value format of dashboard, plain output, summary table and report."""
    return format_value(value, unit)


def test_report_is_self_contained_and_embeds_every_png(rendered: list[Path]) -> None:
    paths = rendered
    report = paths[-1]
    assert report.name == "report.html"
    text = report.read_text(encoding="utf-8")
    for outside in ("http://", "https://", 'src="file', "<script", "<link", "url(", "@import"):
        assert outside not in text
    images = IMG.findall(text)
    pngs = [p for p in paths if p.suffix == ".png"]
    assert len(images) == len(pngs) == 7  # loss, accuracy, f1, system, confusion, ROC, PR
    for (_, src), png in zip(images, pngs):
        prefix = "data:image/png;base64,"
        assert src.startswith(prefix)
        assert base64.b64decode(src[len(prefix) :]) == png.read_bytes()


def test_summary_rows_match_the_logged_values(rendered: list[Path]) -> None:
    text = rendered[-1].read_text(encoding="utf-8")
    rows = {(html.unescape(s), html.unescape(n)): rest for s, n, *rest in ROW.findall(text)}
    assert set(rows) == {(split, name) for split, name, _ in SERIES}
    for (split, name, unit), series in SERIES.items():
        # Epoch values only: the last of each epoch (steps 2, 4); machine samples all count.
        values = series if split == "system" else series[1::2]
        finite = [v for v in values if not math.isnan(v)]
        expected = [
            str(len(values)),
            *(shown(v, unit) for v in (min(finite), values[-1], max(finite))),
        ]
        assert [html.unescape(cell) for cell in rows[(split, name)]] == expected, (split, name)
    assert rows[("valid", "f1 <macro>")][0] == "2"
    assert "f1 &lt;macro&gt;" in text and "f1 <macro>" not in text  # escaped
    assert rows[("system", "gpu0_power")][1:] == ["199.0 W", "199.0 W", "245.5 W"]
    # The running 50.00% of step 1 is no epoch value: it is not the minimum.
    assert rows[("train", "accuracy")][1:] == ["62.50%", "81.25%", "81.25%"]
    # the system split's order: train, valid, then system
    order = [s for s, *_ in ROW.findall(text)]
    assert order == sorted(order, key=["train", "valid", "system"].index)


def test_report_lists_auc_and_ap_and_every_metric_name(rendered: list[Path]) -> None:
    text = rendered[-1].read_text(encoding="utf-8")
    assert '<tr><td class="text">pos</td><td>0.8612</td><td>0.8275</td></tr>' in text
    for caption in ("loss", "accuracy", "f1 &lt;macro&gt;", "system", "valid: ROC"):
        assert f"<figcaption>{caption}</figcaption>" in text
    assert "valid: confusion matrix" in text and "valid: precision-recall" in text
