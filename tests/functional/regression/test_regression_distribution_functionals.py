"""The native CRPS, KL and Jensen-Shannon divergences, Kendall's tau and the co-moment merge
against independent oracles: properscoring, scipy and the definitions computed pair by pair."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.distance import jensenshannon
from scipy.stats import entropy, kendalltau

from torchtally.functional.regression import (
    continuous_ranked_probability_score,
    crps_rows,
    js_divergence_rows,
    kendall_statistics,
    kendall_tau,
    kl_divergence_rows,
    merge_comoments,
)
from torchtally.testing import assert_traceable

properscoring = pytest.importorskip("properscoring")


def _sample(seed: int, n: int, ties: int) -> tuple[np.ndarray, np.ndarray]:
    """A pair of samples; `ties` > 0 draws integers in [0, ties) (many ties), 0 floats."""
    rng = np.random.default_rng(seed)
    if ties:
        return rng.integers(0, ties, n).astype(float), rng.integers(0, ties, n).astype(float)
    x = rng.normal(size=n)
    return x, 0.3 * x + rng.normal(size=n)


@settings(max_examples=120, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(3, 300),
    ties=st.sampled_from([0, 2, 3, 7, 40]),
    variant=st.sampled_from(["b", "c"]),
    alternative=st.sampled_from(["two-sided", "less", "greater"]),
)
def test_kendall_matches_scipy(
    seed: int, n: int, ties: int, variant: str, alternative: str
) -> None:
    x, y = _sample(seed, n, ties)
    expected = kendalltau(x, y, variant=variant, method="asymptotic", alternative=alternative)
    tau, p_value = kendall_tau(torch.tensor(x), torch.tensor(y), variant, alternative)
    assert tau.dtype == torch.float64
    np.testing.assert_allclose(float(tau), expected.statistic, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(float(p_value), expected.pvalue, rtol=1e-8, atol=1e-12)


def _pairs(x: np.ndarray, y: np.ndarray) -> tuple[int, int]:
    """Concordant and discordant pairs, pair by pair (the definition)."""
    sign = np.sign(x[:, None] - x[None, :]) * np.sign(y[:, None] - y[None, :])
    upper = np.triu(np.ones_like(sign, dtype=bool), 1)
    return int((sign[upper] > 0).sum()), int((sign[upper] < 0).sum())


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(2, 120), ties=st.sampled_from([0, 2, 5]))
def test_kendall_pair_counts_and_tau_a_by_definition(seed: int, n: int, ties: int) -> None:
    x, y = _sample(seed, n, ties)
    concordant, discordant = _pairs(x, y)
    stats = kendall_statistics(torch.tensor(x), torch.tensor(y))
    assert float(stats.concordant[0]) == concordant
    assert float(stats.discordant[0]) == discordant
    if concordant + discordant:
        # TorchMetrics' tau-a: (C - D) / (C + D)
        expected = (concordant - discordant) / (concordant + discordant)
        assert float(kendall_tau(torch.tensor(x), torch.tensor(y), "a")) == pytest.approx(expected)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(3, 60), pad=st.integers(1, 70))
def test_kendall_leaves_invalid_rows_out(seed: int, n: int, pad: int) -> None:
    """A preallocated buffer's unfilled rows (any values, valid False) change nothing, in
    any position; columns are independent."""
    x, y = _sample(seed, n, 4)
    rng = np.random.default_rng(seed + 1)
    xs = np.concatenate([x, rng.normal(size=pad)])
    ys = np.concatenate([y, rng.integers(0, 4, pad).astype(float)])
    order = rng.permutation(n + pad)
    valid = torch.tensor(order < n)
    columns_x = torch.stack([torch.tensor(xs[order]), torch.tensor(ys[order])], 1)
    columns_y = torch.stack([torch.tensor(ys[order]), torch.tensor(xs[order])], 1)
    tau, p_value = kendall_tau(columns_x, columns_y, "b", "two-sided", valid=valid)
    expected = kendalltau(x, y, method="asymptotic")
    for column in range(2):  # NaN where scipy's is (a constant sample)
        np.testing.assert_allclose(float(tau[column]), expected.statistic, atol=1e-12)
        np.testing.assert_allclose(float(p_value[column]), expected.pvalue, rtol=1e-8, atol=1e-12)


def test_kendall_traces_without_host_reads() -> None:
    from torchtally.metrics import Metric

    class Tau(Metric):
        def __init__(self) -> None:
            super().__init__("tau")
            self.register_state("x", torch.zeros(16, dtype=torch.float64), reduction="cat")
            self.register_state("y", torch.zeros(16, dtype=torch.float64), reduction="cat")
            self.register_state("valid", torch.zeros(16, dtype=torch.bool), reduction="cat")

        def update(self, x: torch.Tensor, y: torch.Tensor) -> None:
            self.cat_state("x").append(x)
            self.cat_state("y").append(y)
            self.cat_state("valid").append(torch.ones_like(x, dtype=torch.bool))

        def compute(self) -> torch.Tensor:
            return kendall_tau(  # type: ignore[return-value]
                self.cat_state("x").rows(),
                self.cat_state("y").rows(),
                "b",
                valid=self.cat_state("valid").rows(),
            )

    x = torch.tensor([1.0, 3.0, 2.0, 2.0])
    assert_traceable(Tau(), x, torch.tensor([0.5, 2.0, 2.0, 1.0]))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 30), m=st.integers(2, 12))
def test_crps_matches_properscoring(seed: int, n: int, m: int) -> None:
    rng = np.random.default_rng(seed)
    members = rng.normal(size=(n, m))
    members[:, 0] = members[:, -1]  # ties among members
    target = rng.normal(size=n)
    expected = properscoring.crps_ensemble(target, members)
    rows = crps_rows(torch.tensor(target), torch.tensor(members))
    np.testing.assert_allclose(rows.numpy(), expected, rtol=1e-10, atol=1e-12)
    mean = continuous_ranked_probability_score(torch.tensor(target), torch.tensor(members))
    assert float(mean) == pytest.approx(expected.mean(), rel=1e-10)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 8), d=st.integers(2, 9))
def test_divergences_match_scipy(seed: int, n: int, d: int) -> None:
    rng = np.random.default_rng(seed)
    p, q = rng.random((n, d)) + 0.01, rng.random((n, d)) + 0.01
    p[:, 0] = 0.0  # a zero probability adds nothing (0 log 0 = 0)
    kl = kl_divergence_rows(torch.tensor(p), torch.tensor(q))
    np.testing.assert_allclose(kl.numpy(), entropy(p, q, axis=1), rtol=1e-10, atol=1e-14)
    js = js_divergence_rows(torch.tensor(p), torch.tensor(q))
    # scipy's distance is the square root of the divergence
    np.testing.assert_allclose(js.numpy(), jensenshannon(p, q, axis=1) ** 2, rtol=1e-9, atol=1e-14)
    # log-probabilities of the normalized distributions give the same divergences
    log_p = torch.tensor(p / p.sum(1, keepdims=True)).log()
    log_q = torch.tensor(q / q.sum(1, keepdims=True)).log()
    np.testing.assert_allclose(
        kl_divergence_rows(log_p, log_q, log_prob=True).numpy(), kl.numpy(), rtol=1e-9, atol=1e-14
    )
    np.testing.assert_allclose(
        js_divergence_rows(log_p, log_q, log_prob=True).numpy(), js.numpy(), rtol=1e-9, atol=1e-14
    )


def test_js_divergence_of_disjoint_distributions_is_log_2() -> None:
    js = js_divergence_rows(torch.tensor([[1.0, 0.0]]), torch.tensor([[0.0, 1.0]]))
    assert float(js[0]) == pytest.approx(math.log(2.0))


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    sizes=st.lists(st.integers(0, 20), min_size=1, max_size=6),
)
def test_merge_comoments_equals_the_whole_sample(seed: int, sizes: list[int]) -> None:
    rng = np.random.default_rng(seed)
    xs = [rng.normal(size=(size, 3)) for size in sizes]
    ys = [rng.normal(size=(size, 3)) + 2 for size in sizes]

    def moments(x: np.ndarray, y: np.ndarray) -> list[np.ndarray]:
        if len(x) == 0:
            return [np.zeros(3)] * 5 + [np.zeros(3)]
        mx, my = x.mean(0), y.mean(0)
        return [
            mx,
            my,
            ((x - mx) ** 2).sum(0),
            ((y - my) ** 2).sum(0),
            ((x - mx) * (y - my)).sum(0),
            np.full(3, float(len(x))),
        ]

    parts = [moments(x, y) for x, y in zip(xs, ys, strict=True)]
    stacked = [torch.tensor(np.stack([part[i] for part in parts])) for i in range(6)]
    merged = merge_comoments(*stacked)
    whole = moments(np.concatenate(xs), np.concatenate(ys))
    for got, expected in zip(merged, whole, strict=True):
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-9, atol=1e-9)
