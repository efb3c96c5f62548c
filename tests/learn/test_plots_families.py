"""Plots of the calibration, curve and retrieval families: what `Learner.test(curves=True)`
writes for them equals the metrics' own output and independent oracles (scikit-learn,
TorchMetrics, a hand-binned reliability table), what the plots draw equals what was written,
and `report.html` embeds the PNGs."""

from __future__ import annotations

import base64
import json
import math
from pathlib import Path
from typing import Any

import matplotlib.image
import numpy as np
import pytest
import torch
import torchmetrics.functional.classification as tmc
from sklearn import metrics as skm
from torchmetrics.retrieval import RetrievalHitRate, RetrievalMRR, RetrievalNormalizedDCG

from torchtally.learn._learner.families import at_k_values
from torchtally.learn._learner.learner import Learner
from torchtally.learn._learner.steps import classification_step
from torchtally.learn._logs.logdir import read_logdir
from torchtally.learn._outputs import ClassificationOutput, RegressionOutput
from torchtally.learn._plots import families as _plot_families
from torchtally.learn._plots.plots import plot_logdir
from torchtally.metrics import MeanMetric
from torchtally.metrics.calibration import CalibrationErrorMetric
from torchtally.metrics.curves import AveragePrecisionMetric, PrecisionRecallCurveMetric, ROCMetric
from torchtally.metrics.retrieval import (
    RetrievalHitRateMetric,
    RetrievalMRRMetric,
    RetrievalNDCGMetric,
)


def probabilities(output: ClassificationOutput) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.softmax(output.output.detach(), -1), output.targets


def nan_equal(a: list[Any], b: list[Any]) -> bool:
    """Element-wise equality, None / NaN equal to each other (JSON writes NaN as null)."""
    fa = [math.nan if v is None else float(v) for v in a]
    fb = [math.nan if v is None else float(v) for v in b]
    return len(fa) == len(fb) and all(x == y or (x != x and y != y) for x, y in zip(fa, fb))


def embedded(report: str, png: Path) -> bool:
    return base64.b64encode(png.read_bytes()).decode("ascii") in report


def assert_png(path: Path) -> None:
    image = matplotlib.image.imread(path)
    assert image.ndim == 3 and image.shape[0] > 300 and image.shape[1] > 300
    assert float(np.std(image[..., :3])) > 0.05  # not blank


@pytest.fixture
def classifier_run(tmp_path: Path) -> dict[str, Any]:
    gen = torch.Generator().manual_seed(3)
    inputs = torch.randn(150, 4, generator=gen)
    labels = (inputs[:, 0] > 0).long() + (inputs[:, 1] > 0.5).long()  # 3 classes, learnable
    data = torch.utils.data.TensorDataset(inputs, labels)
    kept: list[torch.Tensor] = []

    def step(model: Any, batch: Any) -> ClassificationOutput:
        output = classification_step(model, batch)
        kept.append(output.output.detach().clone())
        return output

    torch.manual_seed(0)
    model = torch.nn.Linear(4, 3)
    calibration = CalibrationErrorMetric(num_classes=3, n_bins=10, name="ece")
    pr = PrecisionRecallCurveMetric("multiclass", num_classes=3, name="pr_curve")
    roc = ROCMetric("multiclass", num_classes=3, name="roc_curve")
    learner = Learner(
        model,
        torch.optim.SGD(model.parameters(), lr=0.1),
        eval_step=step,
        logdir=tmp_path,
        metrics={
            "test": [
                MeanMetric("loss"),
                (calibration, probabilities),
                (pr, probabilities),
                (roc, probabilities),
            ]
        },
        class_names=["lo", "mid", "hi"],
    )
    values = learner.test(torch.utils.data.DataLoader(data, batch_size=32), curves=True)
    written = json.loads((tmp_path / "test" / "curves.json").read_text())
    return {
        "logdir": tmp_path,
        "learner": learner,
        "values": values,
        "written": written,
        "labels": labels,
        "probs": torch.softmax(torch.cat(kept), 1),
        "calibration": calibration,
        "pr": pr,
        "roc": roc,
    }


def test_reliability_diagram_is_the_metrics_own_and_matches_a_hand_binning(
    classifier_run: dict[str, Any],
) -> None:
    entry = classifier_run["written"]["reliability"]["ece"]
    own = classifier_run["calibration"].reliability_diagram()
    for key in ("edges", "confidence", "accuracy", "weight"):
        assert nan_equal(entry[key], own[key].tolist()), key
    assert entry["norm"] == "l1"
    assert entry["value"] == pytest.approx(classifier_run["values"]["ece"], abs=1e-12)
    # Independent: bin the top-label confidences by hand.
    probs, labels = classifier_run["probs"].double(), classifier_run["labels"]
    confidence, predicted = probs.max(1)
    bins = torch.clamp((confidence * 10).floor().long(), max=9)
    for b in range(10):
        inside = bins == b
        assert entry["weight"][b] == float(inside.sum())
        if inside.any():
            assert entry["confidence"][b] == pytest.approx(float(confidence[inside].mean()))
            hits = (predicted[inside] == labels[inside]).double().mean()
            assert entry["accuracy"][b] == pytest.approx(float(hits))
        else:
            assert entry["confidence"][b] is None and entry["accuracy"][b] is None
    expected = tmc.multiclass_calibration_error(probs, labels, 3, n_bins=10, norm="l1")
    assert entry["value"] == pytest.approx(float(expected), abs=1e-6)


def test_pr_curves_are_the_metrics_own_and_equal_sklearn(classifier_run: dict[str, Any]) -> None:
    written = classifier_run["written"]["metric_pr"]["pr_curve"]
    assert list(written) == ["lo", "mid", "hi"]  # the learner's class names
    own = classifier_run["pr"].compute()
    probs, labels = classifier_run["probs"].double().numpy(), classifier_run["labels"].numpy()
    for index, name in enumerate(["lo", "mid", "hi"]):
        precision, recall, thresholds = own[index]
        assert nan_equal(written[name]["precision"], precision.tolist())
        assert nan_equal(written[name]["recall"], recall.tolist())
        assert nan_equal(written[name]["thresholds"], thresholds.tolist())
        sk_p, sk_r, sk_t = skm.precision_recall_curve(
            labels == index, probs[:, index], drop_intermediate=False
        )
        np.testing.assert_allclose(written[name]["precision"], sk_p, atol=1e-12)
        np.testing.assert_allclose(written[name]["recall"], sk_r, atol=1e-12)
        np.testing.assert_allclose(written[name]["thresholds"], sk_t, atol=1e-12)
    # The ROC curve metric's curves, likewise.
    roc_written = classifier_run["written"]["metric_roc"]["roc_curve"]
    own_roc = classifier_run["roc"].compute()
    for index, name in enumerate(["lo", "mid", "hi"]):
        fpr, tpr, thresholds = own_roc[index]
        assert nan_equal(roc_written[name]["fpr"], fpr.tolist())
        assert nan_equal(roc_written[name]["tpr"], tpr.tolist())
        sk_fpr, sk_tpr, _ = skm.roc_curve(labels == index, probs[:, index], drop_intermediate=False)
        np.testing.assert_allclose(roc_written[name]["fpr"], sk_fpr, atol=1e-12)
        np.testing.assert_allclose(roc_written[name]["tpr"], sk_tpr, atol=1e-12)
    # Curves are not numbers: those metrics are plotted, not logged.
    assert set(classifier_run["values"]) == {"loss", "ece"}
    # The classic curves are still there, beside the metrics' own.
    matrix = skm.confusion_matrix(labels, probs.argmax(1), labels=range(3))
    assert classifier_run["written"]["confusion_matrix"] == matrix.tolist()
    assert classifier_run["written"]["at_k"] == {}


def test_plots_draw_the_written_data_and_the_report_embeds_them(
    classifier_run: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    drawn: dict[str, Any] = {}
    save = _plot_families.save_png

    def capture(figure: Any, path: Path) -> Path:
        drawn[path.name] = figure
        return save(figure, path)

    monkeypatch.setattr(_plot_families, "save_png", capture)
    logdir = classifier_run["logdir"]
    paths = plot_logdir(logdir)
    names = [p.name for p in paths]
    for expected in (
        "reliability-test-ece.png",
        "pr-curve-test-pr_curve.png",
        "roc-curve-test-roc_curve.png",
        "pr-test.png",
    ):
        assert expected in names
    assert "at-k-test.png" not in names  # no retrieval metric
    report = paths[-1].read_text(encoding="utf-8")
    for path in paths[:-1]:
        assert embedded(report, path), path.name
    for name in (
        "reliability-test-ece.png",
        "pr-curve-test-pr_curve.png",
        "roc-curve-test-roc_curve.png",
    ):
        assert_png(logdir / "plots" / name)
    assert "test: ece reliability diagram" in report
    ece = classifier_run["values"]["ece"]
    samples = len(classifier_run["labels"])
    assert f'<tr><td class="text">ece</td><td class="text">l1</td><td>{ece:.4f}</td>' in report
    assert f"<td>{samples:g}</td></tr>" in report
    assert "test: pr_curve precision-recall" in report

    curves = read_logdir(logdir).curves["test"]
    # The reliability diagram: accuracy bars and gap bars of the non-empty bins.
    diagram = curves.reliability["ece"]
    top = drawn["reliability-test-ece.png"].axes[0]
    filled = [i for i, w in enumerate(diagram["weight"]) if w > 0]
    accuracy_bars, gap_bars = top.containers[0], top.containers[1]
    assert [bar.get_height() for bar in accuracy_bars] == pytest.approx(
        [diagram["accuracy"][i] for i in filled]
    )
    assert [bar.get_x() for bar in accuracy_bars] == pytest.approx(
        [diagram["edges"][i] for i in filled]
    )
    assert [bar.get_height() for bar in gap_bars] == pytest.approx(
        [diagram["confidence"][i] - diagram["accuracy"][i] for i in filled]
    )
    counts = drawn["reliability-test-ece.png"].axes[1].containers[0]
    assert [bar.get_height() for bar in counts] == pytest.approx(diagram["weight"])
    # The PR plot: one line per class through the written (recall, precision) points.
    axes = drawn["pr-curve-test-pr_curve.png"].axes[0]
    for line, (name, curve) in zip(axes.get_lines(), curves.metric_pr["pr_curve"].items()):
        assert line.get_label() == name
        points = [
            (r, p)
            for r, p in zip(curve["recall"], curve["precision"])
            if r is not None and p is not None
        ]
        assert list(line.get_xdata()) == pytest.approx([r for r, _ in points])
        assert list(line.get_ydata()) == pytest.approx([p for _, p in points])
    roc_lines = drawn["roc-curve-test-roc_curve.png"].axes[0].get_lines()[1:]  # after chance
    for line, (name, curve) in zip(roc_lines, curves.metric_roc["roc_curve"].items(), strict=True):
        assert line.get_label() == name
        assert list(line.get_xdata()) == pytest.approx(curve["fpr"])
        assert list(line.get_ydata()) == pytest.approx(curve["tpr"])


def test_binned_binary_pr_curve_equals_torchmetrics(tmp_path: Path) -> None:
    gen = torch.Generator().manual_seed(11)
    inputs = torch.randn(90, 3, generator=gen)
    labels = (inputs[:, 0] + 0.5 * torch.randn(90, generator=gen) > 0).long()
    data = torch.utils.data.TensorDataset(inputs, labels)
    torch.manual_seed(1)
    model = torch.nn.Linear(3, 2)

    def positive(output: ClassificationOutput) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.softmax(output.output.detach(), -1)[:, 1], output.targets

    learner = Learner(
        model,
        torch.optim.SGD(model.parameters(), lr=0.1),
        logdir=tmp_path,
        metrics={"test": [(PrecisionRecallCurveMetric(thresholds=11, name="pr"), positive)]},
    )
    learner.test(torch.utils.data.DataLoader(data, batch_size=30), curves=True)
    written = json.loads((tmp_path / "test" / "curves.json").read_text())["metric_pr"]["pr"]
    assert list(written) == ["positive"]
    with torch.no_grad():
        scores = torch.softmax(model(inputs), -1)[:, 1]
    precision, recall, thresholds = tmc.binary_precision_recall_curve(scores, labels, 11)
    written_precision = [math.nan if v is None else v for v in written["positive"]["precision"]]
    np.testing.assert_allclose(written_precision, precision.numpy(), atol=1e-6)
    np.testing.assert_allclose(written["positive"]["recall"], recall.numpy(), atol=1e-6)
    np.testing.assert_allclose(written["positive"]["thresholds"], thresholds.numpy(), atol=1e-6)
    paths = plot_logdir(tmp_path)
    assert "pr-curve-test-pr.png" in [p.name for p in paths]


K = 8


@pytest.fixture
def ranker_run(tmp_path: Path) -> dict[str, Any]:
    gen = torch.Generator().manual_seed(5)
    features = torch.randn(60, K, 3, generator=gen)
    relevance = (features[..., 0] + torch.randn(60, K, generator=gen) > 0.8).long()
    relevance[:, 0] = torch.where(relevance.sum(1) == 0, 1, relevance[:, 0])  # none empty
    data = torch.utils.data.TensorDataset(features, relevance)
    kept: list[torch.Tensor] = []

    class Scorer(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.linear = torch.nn.Linear(3, 1)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.linear(x).squeeze(-1)

    def step(model: Any, batch: Any) -> RegressionOutput:
        x, y = batch
        scores = model(x)
        kept.append(scores.detach().clone())
        loss = torch.nn.functional.binary_cross_entropy_with_logits(scores, y.float())
        return RegressionOutput(loss, scores, y)

    def ranked(output: RegressionOutput) -> tuple[torch.Tensor, torch.Tensor]:
        # Probabilities: TorchMetrics' MRR counts no candidate scored <= 0 as relevant.
        return torch.sigmoid(output.output.detach()), output.targets

    torch.manual_seed(2)
    model = Scorer()
    learner = Learner(
        model,
        torch.optim.SGD(model.parameters(), lr=0.1),
        train_step=step,
        logdir=tmp_path,
        metrics={
            "test": [
                MeanMetric("loss"),
                (RetrievalNDCGMetric(top_k=5, name="ndcg@5"), ranked),
                (RetrievalHitRateMetric(top_k=3, name="hit_rate@3"), ranked),
                (RetrievalMRRMetric(name="mrr"), ranked),
            ]
        },
    )
    values = learner.test(torch.utils.data.DataLoader(data, batch_size=16), curves=True)
    return {
        "logdir": tmp_path,
        "values": values,
        "written": json.loads((tmp_path / "test" / "curves.json").read_text()),
        "scores": torch.sigmoid(torch.cat(kept)),
        "relevance": relevance,
    }


def test_at_k_curves_equal_the_metric_and_torchmetrics(ranker_run: dict[str, Any]) -> None:
    at_k = ranker_run["written"]["at_k"]
    assert set(at_k) == {"ndcg@5", "hit_rate@3", "mrr"}
    assert at_k["ndcg@5"]["k"] == [1, 2, 3, 4, 5] and at_k["ndcg@5"]["top_k"] == 5
    assert at_k["hit_rate@3"]["k"] == [1, 2, 3]
    assert at_k["mrr"]["k"] == list(range(1, K + 1)) and at_k["mrr"]["top_k"] is None
    assert [at_k[n]["logged_k"] for n in ("ndcg@5", "hit_rate@3", "mrr")] == [5, 3, K]
    # At the metric's own k the curve gives the value the learner logged.
    values = ranker_run["values"]
    assert at_k["ndcg@5"]["value"][4] == pytest.approx(values["ndcg@5"], abs=1e-12)
    assert at_k["hit_rate@3"]["value"][2] == pytest.approx(values["hit_rate@3"], abs=1e-12)
    assert at_k["mrr"]["value"][-1] == pytest.approx(values["mrr"], abs=1e-12)
    # Every k against TorchMetrics on the flat (preds, target, indexes) form.
    scores, relevance = ranker_run["scores"], ranker_run["relevance"]
    indexes = torch.arange(scores.shape[0])[:, None].expand(-1, K).reshape(-1)
    flat = (scores.reshape(-1), relevance.reshape(-1))
    for name, oracle in (("ndcg@5", RetrievalNormalizedDCG), ("hit_rate@3", RetrievalHitRate)):
        for k, value in zip(at_k[name]["k"], at_k[name]["value"]):
            expected = oracle(top_k=k)(*flat, indexes=indexes)
            assert value == pytest.approx(float(expected), abs=1e-6), (name, k)
    for k, value in zip(at_k["mrr"]["k"], at_k["mrr"]["value"]):
        expected = RetrievalMRR(top_k=k)(*flat, indexes=indexes)
        assert value == pytest.approx(float(expected), abs=1e-6), k
    # No classification output: no classic curves, and no error for it.
    written = ranker_run["written"]
    assert written["confusion_matrix"] is None and written["roc"] == {}


def test_at_k_of_the_flat_form_equals_torchmetrics(tmp_path: Path) -> None:
    gen = torch.Generator().manual_seed(9)
    features = torch.randn(24, 5, 2, generator=gen)  # 24 queries of 5 candidates
    relevance = (features[..., 0] + torch.randn(24, 5, generator=gen) > 0.5).long()
    queries = torch.arange(24)[:, None].expand(-1, 5)
    data = torch.utils.data.TensorDataset(features, relevance, queries)
    model = torch.nn.Linear(2, 1)

    def step(model: Any, batch: Any) -> RegressionOutput:
        x, y, q = batch
        scores = torch.sigmoid(model(x).squeeze(-1))
        loss = torch.nn.functional.binary_cross_entropy(scores, y.float())
        # The query ids ride along as the output's third tensor (no output type has them).
        return RegressionOutput(loss, torch.stack([scores, q.to(scores.dtype)]), y)

    def flat(output: RegressionOutput) -> tuple[torch.Tensor, ...]:
        scores, ids = output.output.detach()
        return scores.reshape(-1), output.targets.reshape(-1), ids.reshape(-1).long()

    metric = RetrievalNDCGMetric(top_k=3, capacity=200, name="ndcg@3")
    learner = Learner(
        model,
        torch.optim.SGD(model.parameters(), lr=0.1),
        train_step=step,
        logdir=tmp_path,
        metrics={"test": [(metric, flat)]},
    )
    values = learner.test(torch.utils.data.DataLoader(data, batch_size=7), curves=True)
    at_k = json.loads((tmp_path / "test" / "curves.json").read_text())["at_k"]["ndcg@3"]
    assert at_k["k"] == [1, 2, 3] and at_k["logged_k"] == 3
    assert at_k["value"][2] == pytest.approx(values["ndcg@3"], abs=1e-12)
    with torch.no_grad():
        scores = torch.sigmoid(model(features).squeeze(-1))
    for k, value in zip(at_k["k"], at_k["value"]):
        expected = RetrievalNormalizedDCG(top_k=k)(
            scores.reshape(-1), relevance.reshape(-1), indexes=queries.reshape(-1)
        )
        assert value == pytest.approx(float(expected), abs=1e-6), k


def test_at_k_plot_draws_the_written_values(
    ranker_run: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    drawn: dict[str, Any] = {}
    save = _plot_families.save_png

    def capture(figure: Any, path: Path) -> Path:
        drawn[path.name] = figure
        return save(figure, path)

    monkeypatch.setattr(_plot_families, "save_png", capture)
    paths = plot_logdir(ranker_run["logdir"])
    names = [p.name for p in paths]
    assert "at-k-test.png" in names and "confusion-test.png" not in names
    report = paths[-1].read_text(encoding="utf-8")
    png = ranker_run["logdir"] / "plots" / "at-k-test.png"
    assert embedded(report, png) and "test: retrieval metrics @k" in report
    assert_png(png)
    at_k = read_logdir(ranker_run["logdir"]).curves["test"].at_k
    # The @k table: a column per k, a row per metric ("–" past a metric's largest k).
    assert "".join(f"<th>@{k}</th>" for k in range(1, K + 1)) in report
    hit = at_k["hit_rate@3"]["value"]
    cells = "".join(f"<td>{v:.4f}</td>" for v in hit) + "<td>–</td>" * (K - 3)
    assert f'<tr><td class="text">hit_rate@3</td>{cells}</tr>' in report
    lines = {line.get_label(): line for line in drawn["at-k-test.png"].axes[0].get_lines()}
    for name, entry in at_k.items():
        assert list(lines[name].get_xdata()) == entry["k"]
        assert list(lines[name].get_ydata()) == pytest.approx(entry["value"])
    stars = [line for line in lines.values() if line.get_marker() == "*"]
    assert sorted(float(line.get_ydata()[0]) for line in stars) == pytest.approx(
        sorted(ranker_run["values"][name] for name in ("ndcg@5", "hit_rate@3", "mrr"))
    )


@pytest.mark.parametrize("classes", [2, 3])
def test_default_adaptors_feed_probabilities_first(classes: int) -> None:
    gen = torch.Generator().manual_seed(classes)
    inputs = torch.randn(64, 3, generator=gen)
    labels = torch.randint(0, classes, (64,), generator=gen)
    data = torch.utils.data.TensorDataset(inputs, labels)
    torch.manual_seed(4)
    model = torch.nn.Linear(3, classes)
    num_classes = None if classes == 2 else classes
    task = "binary" if classes == 2 else "multiclass"
    learner = Learner(
        model,
        torch.optim.SGD(model.parameters(), lr=0.1),
        metrics={
            "test": [
                CalibrationErrorMetric(num_classes, n_bins=8, name="ece"),
                CalibrationErrorMetric(num_classes, n_bins=8, from_logits=True, name="ece_l"),
                AveragePrecisionMetric(task, num_classes, name="ap"),
                PrecisionRecallCurveMetric(task, num_classes, name="pr"),
            ]
        },
    )
    values = learner.test(torch.utils.data.DataLoader(data, batch_size=16), curves=True)
    with torch.no_grad():
        probs = torch.softmax(model(inputs), -1).double()
    if classes == 2:
        ece = tmc.binary_calibration_error(probs[:, 1].contiguous(), labels, n_bins=8)
        ap = skm.average_precision_score(labels.numpy(), probs[:, 1].numpy())
        sk_p, sk_r, _ = skm.precision_recall_curve(labels.numpy(), probs[:, 1].numpy())
    else:
        ece = tmc.multiclass_calibration_error(probs, labels, classes, n_bins=8)
        onehot = torch.nn.functional.one_hot(labels, classes).numpy()
        ap = skm.average_precision_score(onehot, probs.numpy(), average="macro")
        sk_p, sk_r, _ = skm.precision_recall_curve(labels.numpy() == 0, probs[:, 0].numpy())
    assert values["ece"] == pytest.approx(float(ece), abs=1e-6)
    assert values["ece_l"] == pytest.approx(float(ece), abs=1e-6)
    assert values["ap"] == pytest.approx(ap, abs=1e-9)
    assert learner.curves is not None
    first = next(iter(learner.curves.metric_pr["pr"].values()))
    np.testing.assert_allclose(first["precision"], sk_p, atol=1e-9)
    np.testing.assert_allclose(first["recall"], sk_r, atol=1e-9)


def test_unreadable_output_without_family_metrics_still_raises(tmp_path: Path) -> None:
    model = torch.nn.Linear(2, 1)

    def step(model: Any, batch: Any) -> RegressionOutput:
        x, y = batch
        pred = model(x).squeeze(-1)
        return RegressionOutput(torch.nn.functional.mse_loss(pred, y), pred, y)

    learner = Learner(model, torch.optim.SGD(model.parameters(), lr=0.1), train_step=step)
    data = torch.utils.data.TensorDataset(torch.randn(6, 2), torch.randn(6))
    with pytest.raises(TypeError, match="Curves need a ClassificationOutput"):
        learner.test(torch.utils.data.DataLoader(data, batch_size=3), curves=True)


def test_at_k_values_thin_long_ranges() -> None:
    assert at_k_values(1) == [1]
    assert at_k_values(20) == list(range(1, 21))
    grid = at_k_values(100)
    assert grid[0] == 1 and grid[-1] == 100 and len(grid) == 20
    assert grid == sorted(set(grid))
