"""The native regression sums and computes that the TorchMetrics-compatible classes adapt,
against scikit-learn, scipy and numpy, including the parameters that carry TorchMetrics'
conventions (SMAPE's epsilon, R²'s tolerance/adjusted/variance weighting)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import pearsonr, spearmanr
from sklearn.metrics import (
    explained_variance_score,
    mean_absolute_percentage_error,
    mean_squared_log_error,
    mean_tweedie_deviance,
    r2_score,
)

from torchtally.functional.regression import (
    absolute_error_sum,
    absolute_percentage_error_sum,
    average_ranks,
    comoment_sums,
    concordance_from_sums,
    cosine_similarity_rows,
    critical_success_counts,
    critical_success_index_compute,
    explained_variance_compute,
    explained_variance_sums,
    log_cosh_error_sum,
    minkowski_sum,
    nrmse_compute,
    pearson_from_sums,
    r2_compute,
    r2_sums,
    relative_squared_error_compute,
    smape_sum,
    spearman_from_ranks,
    squared_error_sum,
    squared_log_error_sum,
    tweedie_deviance_sum,
)


def _data(seed: int, rows: int, outputs: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.normal(size=(rows, outputs)) * rng.uniform(0.5, 3.0, outputs) + 1.0
    return y, y + rng.normal(size=(rows, outputs))


SEEDS = st.integers(0, 2**31 - 1)


@settings(max_examples=40, deadline=None)
@given(seed=SEEDS, rows=st.integers(3, 40), outputs=st.integers(1, 4))
def test_per_output_error_sums(seed: int, rows: int, outputs: int) -> None:
    y, p = _data(seed, rows, outputs)
    labels, preds = torch.tensor(y), torch.tensor(p)
    np.testing.assert_allclose(
        squared_error_sum(labels, preds, per_output=True).numpy(), ((p - y) ** 2).sum(0)
    )
    np.testing.assert_allclose(
        absolute_error_sum(labels, preds, per_output=True).numpy(), np.abs(p - y).sum(0)
    )
    # the plain sums are unchanged: all elements
    assert float(squared_error_sum(labels, preds)) == pytest.approx(((p - y) ** 2).sum())
    d = np.abs(p - y)
    np.testing.assert_allclose(
        log_cosh_error_sum(labels, preds, per_output=True).numpy(), np.log(np.cosh(d)).sum(0)
    )
    assert float(minkowski_sum(labels, preds, 3.5)) == pytest.approx((d**3.5).sum())


@settings(max_examples=40, deadline=None)
@given(seed=SEEDS, rows=st.integers(3, 40))
def test_percentage_and_log_errors_match_sklearn(seed: int, rows: int) -> None:
    y, p = _data(seed, rows, 1)
    y, p = y[:, 0], p[:, 0]
    labels, preds = torch.tensor(y), torch.tensor(p)
    mape = float(absolute_percentage_error_sum(labels, preds)) / rows
    assert mape == pytest.approx(mean_absolute_percentage_error(y, p), rel=1e-9)
    y_pos, p_pos = np.abs(y), np.abs(p)
    msle = float(squared_log_error_sum(torch.tensor(y_pos), torch.tensor(p_pos))) / rows
    assert msle == pytest.approx(mean_squared_log_error(y_pos, p_pos), rel=1e-9)
    # SMAPE with TorchMetrics' epsilon floor: 0/0 pairs score 0 either way, a near-zero pair
    # is scored against epsilon
    zeros = torch.zeros(2, dtype=torch.float64)
    assert float(smape_sum(zeros, zeros, epsilon=1e-6)) == 0.0
    tiny = torch.tensor([1e-9], dtype=torch.float64)
    assert float(smape_sum(tiny, -tiny, epsilon=1e-6)) == pytest.approx(2e-9 / 1e-6)
    assert float(smape_sum(tiny, -tiny)) == pytest.approx(1.0)


@pytest.mark.parametrize("power", [0.0, 1.0, 1.5, 2.0, 3.0, -1.0])
def test_tweedie_deviance_matches_sklearn(power: float) -> None:
    rng = np.random.default_rng(int(power * 10) + 20)
    y, p = rng.uniform(0.1, 3.0, 50), rng.uniform(0.1, 3.0, 50)
    total, outside = tweedie_deviance_sum(torch.tensor(y), torch.tensor(p), power)
    assert int(outside) == 0
    assert float(total) / 50 == pytest.approx(mean_tweedie_deviance(y, p, power=power), rel=1e-9)
    bad, outside = tweedie_deviance_sum(torch.tensor([1.0, 2.0]), torch.tensor([-1.0, 2.0]), power)
    assert int(outside) == (0 if power == 0 else 1)
    # an element outside the domain adds nothing (the caller raises for it); (2, 2) adds 0
    assert float(bad) == pytest.approx(4.0 if power == 0 else 0.0)


@settings(max_examples=40, deadline=None)
@given(
    seed=SEEDS,
    rows=st.integers(3, 40),
    outputs=st.integers(1, 4),
    multioutput=st.sampled_from(["raw_values", "uniform_average", "variance_weighted"]),
)
def test_r2_and_explained_variance_match_sklearn(
    seed: int, rows: int, outputs: int, multioutput: str
) -> None:
    y, p = _data(seed, rows, outputs)
    labels, preds = torch.tensor(y), torch.tensor(p)
    count = torch.tensor(float(rows), dtype=torch.float64)
    sums = r2_sums(labels, preds)
    for tolerance, fallback in ((0.0, True), (1e-4, False)):
        got = r2_compute(*sums, count, multioutput, tolerance=tolerance, weighted_fallback=fallback)
        np.testing.assert_allclose(got.numpy(), r2_score(y, p, multioutput=multioutput))
    plain = r2_score(y, p, multioutput=multioutput)
    adjusted = r2_compute(*sums, count, multioutput, adjusted=1)
    expected = np.where(rows - 1 > 1, 1 - (1 - plain) * (rows - 1) / (rows - 2), plain)
    np.testing.assert_allclose(adjusted.numpy(), expected)
    ev = explained_variance_compute(*explained_variance_sums(labels, preds), count, multioutput)
    np.testing.assert_allclose(ev.numpy(), explained_variance_score(y, p, multioutput=multioutput))
    tss = ((y - y.mean(0)) ** 2).sum(0)
    rse = relative_squared_error_compute(*sums, count)
    assert float(rse) == pytest.approx((((p - y) ** 2).sum(0) / tss).mean())


def test_r2_variance_weighted_over_constant_outputs() -> None:
    labels = torch.ones(4, 2, dtype=torch.float64)
    preds = labels + torch.tensor([[0.5, 0.0]] * 4, dtype=torch.float64)
    sums, count = r2_sums(labels, preds), torch.tensor(4.0, dtype=torch.float64)
    # scikit-learn falls back to the plain average; TorchMetrics' weights are 0/0
    assert float(r2_compute(*sums, count, "variance_weighted")) == pytest.approx(
        r2_score(labels.numpy(), preds.numpy(), multioutput="variance_weighted")
    )
    assert torch.isnan(r2_compute(*sums, count, "variance_weighted", weighted_fallback=False))


@settings(max_examples=40, deadline=None)
@given(seed=SEEDS, rows=st.integers(3, 40), outputs=st.integers(1, 3))
def test_correlations_match_scipy(seed: int, rows: int, outputs: int) -> None:
    y, p = _data(seed, rows, outputs)
    p = np.round(p, 1)  # ties for the ranks
    preds, labels = torch.tensor(p), torch.tensor(y)
    sums = comoment_sums(preds, labels)
    count = torch.tensor(float(rows), dtype=torch.float64)
    pearson = pearson_from_sums(*sums, count)
    ranks_p, ranks_y = average_ranks(preds), average_ranks(labels)
    spearman = spearman_from_ranks(ranks_p, ranks_y)
    for k in range(outputs):
        assert float(pearson[k]) == pytest.approx(pearsonr(p[:, k], y[:, k]).statistic, abs=1e-9)
        assert float(spearman[k]) == pytest.approx(spearmanr(p[:, k], y[:, k]).statistic, abs=1e-9)
        x_k, y_k = p[:, k], y[:, k]
        ccc = (
            2
            * np.cov(x_k, y_k)[0, 1]
            / (x_k.var(ddof=1) + y_k.var(ddof=1) + (x_k.mean() - y_k.mean()) ** 2)
        )
        assert float(concordance_from_sums(*sums, count)[k]) == pytest.approx(ccc, abs=1e-9)


def test_cosine_nrmse_and_csi_by_definition() -> None:
    rng = np.random.default_rng(9)
    a, b = rng.normal(size=(5, 4)), rng.normal(size=(5, 4))
    expected = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    np.testing.assert_allclose(
        cosine_similarity_rows(torch.tensor(b), torch.tensor(a)).numpy(), expected
    )
    y, p = rng.normal(size=20) + 3, rng.normal(size=20) + 3
    sum_y, sum_y2, sse = r2_sums(torch.tensor(y), torch.tensor(p))
    count = torch.tensor(20.0, dtype=torch.float64)
    rmse = np.sqrt(((p - y) ** 2).mean())
    lo, hi = torch.tensor(y.min()), torch.tensor(y.max())
    for normalization, scale in [
        ("mean", y.mean()),
        ("range", y.max() - y.min()),
        ("std", y.std()),
        ("l2", np.linalg.norm(y)),
    ]:
        got = nrmse_compute(sse, sum_y, sum_y2, count, lo, hi, normalization)
        assert float(got) == pytest.approx(rmse / scale)
    hits, misses, false_alarms = critical_success_counts(
        torch.tensor([1.0, 1.0, 0.0, 0.0]), torch.tensor([1.0, 0.0, 1.0, 0.0]), 0.5
    )
    assert (float(hits), float(misses), float(false_alarms)) == (1.0, 1.0, 1.0)
    assert float(critical_success_index_compute(hits, misses, false_alarms)) == pytest.approx(1 / 3)
    zero = torch.zeros((), dtype=torch.float64)
    assert float(critical_success_index_compute(zero, zero, zero)) == 0.0
