"""Final-evaluation curves: torch-computed ROC / PR curves against scikit-learn, and the
curves.json a test run writes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from sklearn import metrics as skm

from torchtally.learn._learner.curves import curve_data, pr_curve, roc_curve, write_curves
from torchtally.learn._learner.learner import Learner
from torchtally.learn._learner.steps import classification_step
from torchtally.learn._outputs import ClassificationOutput


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("drop", [False, True])
def test_binary_curves_equal_sklearn(seed: int, drop: bool) -> None:
    gen = torch.Generator().manual_seed(seed)
    n = 40 + seed
    labels = torch.randint(0, 2, (n,), generator=gen)
    labels[:2] = torch.tensor([0, 1])
    scores = torch.randint(0, 6, (n,), generator=gen).double() / 5  # many ties
    fpr, tpr, auc = roc_curve(labels, scores, drop_intermediate=drop)
    sk_fpr, sk_tpr, _ = skm.roc_curve(labels.numpy(), scores.numpy(), drop_intermediate=drop)
    np.testing.assert_allclose(fpr.numpy(), sk_fpr, rtol=0, atol=1e-15)
    np.testing.assert_allclose(tpr.numpy(), sk_tpr, rtol=0, atol=1e-15)
    assert auc == pytest.approx(skm.roc_auc_score(labels.numpy(), scores.numpy()), abs=1e-12)
    recall, precision, ap = pr_curve(labels, scores, drop_intermediate=drop)
    sk_p, sk_r, _ = skm.precision_recall_curve(
        labels.numpy(), scores.numpy(), drop_intermediate=drop
    )
    np.testing.assert_allclose(recall.numpy(), sk_r, rtol=0, atol=1e-15)
    np.testing.assert_allclose(precision.numpy(), sk_p, rtol=0, atol=1e-15)
    expected_ap = skm.average_precision_score(labels.numpy(), scores.numpy())
    assert ap == pytest.approx(expected_ap, abs=1e-12)


def test_written_multiclass_curves_equal_sklearn(tmp_path: Path) -> None:
    gen = torch.Generator().manual_seed(7)
    labels = torch.randint(0, 3, (80,), generator=gen)  # class 3 never occurs
    scores = torch.softmax(torch.randn(80, 4, generator=gen), dim=1)
    names = ["cat", "dog", "emu", "yak"]
    returned = write_curves(tmp_path, "test", labels, scores, names)
    data = json.loads((tmp_path / "test" / "curves.json").read_text())
    assert data["class_names"] == names and returned.class_names == names
    expected_matrix = skm.confusion_matrix(labels, scores.argmax(1), labels=range(4))
    assert data["confusion_matrix"] == expected_matrix.tolist()
    for index, name in enumerate(names[:3]):
        positive = (labels == index).numpy()
        column = scores[:, index].numpy()
        sk_fpr, sk_tpr, _ = skm.roc_curve(positive, column)  # drop_intermediate=True
        np.testing.assert_allclose(data["roc"][name]["fpr"], sk_fpr, atol=1e-15)
        np.testing.assert_allclose(data["roc"][name]["tpr"], sk_tpr, atol=1e-15)
        assert data["roc"][name]["auc"] == pytest.approx(skm.roc_auc_score(positive, column))
        sk_p, sk_r, _ = skm.precision_recall_curve(positive, column, drop_intermediate=True)
        np.testing.assert_allclose(data["pr"][name]["recall"], sk_r, atol=1e-15)
        np.testing.assert_allclose(data["pr"][name]["precision"], sk_p, atol=1e-15)
        assert data["pr"][name]["ap"] == pytest.approx(
            skm.average_precision_score(positive, column)
        )
    assert data["roc"]["yak"]["auc"] is None and data["pr"]["yak"]["ap"] is None  # no positive
    assert all(v is None for v in data["roc"]["yak"]["tpr"])  # NaN rates are written as null


def test_multilabel_and_binary_curve_data() -> None:
    gen = torch.Generator().manual_seed(3)
    indicators = torch.randint(0, 2, (50, 2), generator=gen)
    scores = torch.rand(50, 2, generator=gen, dtype=torch.float64)
    data = curve_data(indicators, scores)
    assert data.confusion_matrix is None and data.class_names == ["0", "1"]
    for index in range(2):
        expected = skm.roc_auc_score(indicators[:, index], scores[:, index])
        assert data.roc[str(index)]["auc"] == pytest.approx(expected)
    labels = indicators[:, 0]
    binary = curve_data(labels, scores[:, 0])  # (N,) scores of class 1
    assert binary.roc["1"]["auc"] == pytest.approx(skm.roc_auc_score(labels, scores[:, 0]))
    assert binary.roc["0"]["auc"] == pytest.approx(skm.roc_auc_score(1 - labels, -scores[:, 0]))
    with pytest.raises(ValueError, match="class_names"):
        curve_data(labels, scores, ["only one"])
    with pytest.raises(ValueError, match="same N"):
        curve_data(labels[:10], scores)


def test_learner_test_writes_curves_of_its_predictions(tmp_path: Path) -> None:
    torch.manual_seed(0)
    inputs = torch.randn(60, 3)
    labels = inputs.argmax(1)
    data = torch.utils.data.TensorDataset(inputs, labels)
    kept: list[torch.Tensor] = []

    def step(model: Any, batch: Any) -> ClassificationOutput:
        output = classification_step(model, batch)
        kept.append(output.output.detach().clone())
        return output

    model = torch.nn.Linear(3, 3)
    learner = Learner(
        model,
        torch.optim.SGD(model.parameters(), lr=0.1),
        eval_step=step,
        logdir=tmp_path,
        class_names=["a", "b", "c"],
    )
    values = learner.test(torch.utils.data.DataLoader(data, batch_size=16), curves=True)
    assert set(values) == {"loss"}
    written = json.loads((tmp_path / "test" / "curves.json").read_text())
    probabilities = torch.softmax(torch.cat(kept), 1)
    expected = skm.confusion_matrix(labels, probabilities.argmax(1), labels=range(3))
    assert written["confusion_matrix"] == expected.tolist()
    assert written["class_names"] == ["a", "b", "c"]
    auc_b = skm.roc_auc_score((labels == 1).numpy(), probabilities[:, 1].numpy())
    assert written["roc"]["b"]["auc"] == pytest.approx(auc_b)
    assert learner.curves is not None and learner.curves.confusion_matrix == expected.tolist()


def test_curves_without_logdir_are_kept_not_written(tmp_path: Path) -> None:
    model = torch.nn.Linear(2, 2)
    learner = Learner(model, torch.optim.SGD(model.parameters(), lr=0.1))
    data = torch.utils.data.TensorDataset(torch.randn(10, 2), torch.tensor([0, 1] * 5))
    learner.test(
        torch.utils.data.DataLoader(data, batch_size=5), curves=True, class_names=["n", "p"]
    )
    assert learner.curves is not None and learner.curves.class_names == ["n", "p"]
    assert sum(sum(row) for row in learner.curves.confusion_matrix or []) == 10
