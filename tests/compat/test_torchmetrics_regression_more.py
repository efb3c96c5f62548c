"""TorchMetrics' further regression metrics: the argument and domain errors (values are in the
oracle registry, tests/compat/tm_cases.py), and the Tweedie deviance against scikit-learn."""

from __future__ import annotations

import math

import pytest
import torch
import torchmetrics.regression as tmr
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import mean_tweedie_deviance

from torchtally._errors import MetricValueError
from torchtally.compat.torchmetrics import regression
from torchtally.compat.torchmetrics.utilities.exceptions import TorchMetricsUserError


def test_tweedie_domain_errors_are_counted_and_raised_at_compute() -> None:
    metric = regression.TweedieDevianceScore(power=2.0)
    metric.update(torch.tensor([1.0, 2.0]), torch.tensor([1.5, 2.5]))
    metric.update(torch.tensor([1.0, -2.0]), torch.tensor([1.5, 2.5]))  # TorchMetrics raises here
    with pytest.raises(MetricValueError, match="Tweedie"):
        metric.compute()
    with pytest.raises(ValueError, match="power"):
        tmr.TweedieDevianceScore(power=2.0).update(torch.tensor([-2.0]), torch.tensor([2.5]))


@pytest.mark.parametrize(
    ("build", "message"),
    [
        # TorchMetrics' words where its tests match them
        (lambda: regression.TweedieDevianceScore(power=0.5), r"not defined for power=0.5"),
        (lambda: regression.TweedieDevianceScore(power="1"), r"Argument `power`.*power='1'"),
        (
            lambda: regression.CriticalSuccessIndex(0.5, keep_sequence_dim=0),
            r"Argument `keep_sequence_dim` must be None",
        ),
        (
            lambda: regression.NormalizedRootMeanSquaredError("max"),
            r"Argument `normalization` should be either 'mean', 'range', 'std' or 'l2', but got max",
        ),
        (lambda: regression.RelativeSquaredError(squared=1), r"Argument `squared` must be a bool"),
        (lambda: regression.LogCoshError(num_outputs=0), r"Argument `num_outputs`"),
    ],
)
def test_bad_arguments_name_the_argument(build: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build()  # type: ignore[operator]


def test_log_cosh_of_a_large_error_is_finite() -> None:
    # TorchMetrics' float32 exp overflows to inf past |error| ~ 89; the stable form does not.
    metric = regression.LogCoshError()
    metric.update(torch.tensor([100.0]), torch.tensor([0.0]))
    assert float(metric.compute()) == pytest.approx(100.0 - math.log(2.0))


def test_minkowski_refuses_p_below_one_as_torchmetrics() -> None:
    with pytest.raises(TorchMetricsUserError, match=r"Argument ``p`` must be a float or int"):
        regression.MinkowskiDistance(p=0.5)
    with pytest.raises(Exception, match=r"Argument ``p`` must be a float or int") as theirs:
        tmr.MinkowskiDistance(p=0.5)
    assert type(theirs.value).__name__ == TorchMetricsUserError.__name__


def test_2d_inputs_need_num_outputs_declared() -> None:
    # TorchMetrics' classes with `num_outputs` refuse another width, with these words
    match = (
        r"Expected argument `num_outputs` to match the second dimension of input, but got 1 and 3"
    )
    with pytest.raises(ValueError, match=match):
        regression.ConcordanceCorrCoef().update(torch.randn(8, 3), torch.randn(8, 3))
    with pytest.raises(ValueError, match=match):
        tmr.ConcordanceCorrCoef().update(torch.randn(8, 3), torch.randn(8, 3))


@settings(max_examples=60, deadline=None)
@given(
    power=st.sampled_from([0.0, 1.0, 1.5, 2.0, 3.0, -1.0, -0.5]),
    sizes=st.lists(st.integers(1, 40), min_size=1, max_size=4),
    seed=st.integers(0, 2**31 - 1),
)
def test_tweedie_deviance_matches_sklearn_in_float64(
    power: float, sizes: list[int], seed: int
) -> None:
    # The independent oracle for the deviance's value: scikit-learn in float64 (the
    # TorchMetrics oracle registry allows its float32 cancellation for negative powers).
    g = torch.Generator().manual_seed(seed)
    metric = regression.TweedieDevianceScore(power=power)
    all_preds, all_target = [], []
    for n in sizes:
        target = torch.randn(n, generator=g).exp()
        preds = (target.log() + 0.5 * torch.randn(n, generator=g)).exp()
        value = metric(preds, target)
        expected = mean_tweedie_deviance(
            target.double().numpy(), preds.double().numpy(), power=power
        )
        assert float(value) == pytest.approx(expected, rel=1e-6, abs=1e-9)
        all_preds.append(preds)
        all_target.append(target)
    expected = mean_tweedie_deviance(
        torch.cat(all_target).double().numpy(), torch.cat(all_preds).double().numpy(), power=power
    )
    assert float(metric.compute()) == pytest.approx(expected, rel=1e-6, abs=1e-9)
