"""TorchMetrics 1.9 as the oracle for the regression drop-in's newer surface: CRPS, the
Jensen-Shannon divergence, Kendall's tau (every variant and test), `_final_aggregation`, the
width read from the first batch, the functions' result dtype and gradients, and the
exceptions TorchMetrics raises for bad input (type and words)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
import torchmetrics
import torchmetrics.functional.regression as tmf
import torchmetrics.regression as tmr
from hypothesis import given, settings
from hypothesis import strategies as st
from torchmetrics.regression.pearson import _final_aggregation as tm_final_aggregation

from torchtally.compat.torchmetrics import regression as ours
from torchtally.compat.torchmetrics.functional import regression as ours_f
from torchtally.compat.torchmetrics.regression.pearson import _final_aggregation
from torchtally.testing import assert_traceable

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _close(mine: Any, theirs: Any, atol: float = 1e-6) -> None:
    if isinstance(theirs, tuple):
        assert isinstance(mine, tuple) and len(mine) == len(theirs)
        for a, b in zip(mine, theirs, strict=True):
            _close(a, b, atol)
        return
    assert mine.shape == theirs.shape, (mine.shape, theirs.shape)
    assert mine.dtype == theirs.dtype, (mine.dtype, theirs.dtype)
    torch.testing.assert_close(mine, theirs, atol=atol, rtol=1e-5, equal_nan=True)


def _batches(seed: int, shape: tuple[int, ...], ties: bool) -> list[tuple[torch.Tensor, ...]]:
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(3):
        if ties:
            preds = torch.randint(-3, 4, shape, generator=g).float()
            target = torch.randint(-3, 4, shape, generator=g).float()
        else:
            target = torch.randn(shape, generator=g)
            preds = target + torch.randn(shape, generator=g)
        out.append((preds, target))
    return out


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    rows=st.integers(3, 25),
    outputs=st.sampled_from([1, 3]),
    ties=st.booleans(),
    variant=st.sampled_from(["a", "b", "c"]),
    alternative=st.sampled_from([None, "two-sided", "less", "greater"]),
)
def test_kendall_matches_torchmetrics(
    seed: int, rows: int, outputs: int, ties: bool, variant: str, alternative: str | None
) -> None:
    shape = (rows,) if outputs == 1 else (rows, outputs)
    batches = _batches(seed, shape, ties)
    kwargs: dict[str, Any] = {
        "variant": variant,
        "t_test": alternative is not None,
        "alternative": alternative,
    }
    mine = ours.KendallRankCorrCoef(num_outputs=outputs, capacity=128, **kwargs)
    theirs = tmr.KendallRankCorrCoef(num_outputs=outputs, **kwargs)
    for preds, target in batches:
        _close(mine(preds, target), theirs(preds, target))
        _close(
            ours_f.kendall_rank_corrcoef(preds, target, **kwargs),
            tmf.kendall_rank_corrcoef(preds, target, **kwargs),
        )
    _close(mine.compute(), theirs.compute())


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), rows=st.integers(1, 20), members=st.integers(2, 9))
def test_crps_matches_torchmetrics(seed: int, rows: int, members: int) -> None:
    g = torch.Generator().manual_seed(seed)
    mine, theirs = ours.ContinuousRankedProbabilityScore(), tmr.ContinuousRankedProbabilityScore()
    for _ in range(3):
        preds, target = torch.randn(rows, members, generator=g), torch.randn(rows, generator=g)
        _close(mine(preds, target), theirs(preds, target))
        _close(
            ours_f.continuous_ranked_probability_score(preds, target),
            tmf.continuous_ranked_probability_score(preds, target),
        )
        wide = preds.double(), target.double()
        _close(
            ours_f.continuous_ranked_probability_score(*wide),
            tmf.continuous_ranked_probability_score(*wide),
            atol=1e-12,
        )
    _close(mine.compute(), theirs.compute())


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    log_prob=st.booleans(),
    reduction=st.sampled_from(["mean", "sum"]),
)
def test_jensen_shannon_matches_torchmetrics(seed: int, log_prob: bool, reduction: str) -> None:
    g = torch.Generator().manual_seed(seed)
    mine = ours.JensenShannonDivergence(log_prob=log_prob, reduction=reduction)
    theirs = tmr.JensenShannonDivergence(log_prob=log_prob, reduction=reduction)
    for _ in range(3):
        p, q = torch.randn(8, 5, generator=g), torch.randn(8, 5, generator=g)
        p, q = (p.log_softmax(-1), q.log_softmax(-1)) if log_prob else (p.exp(), q.exp())
        _close(mine(p, q), theirs(p, q))
        args = {"log_prob": log_prob, "reduction": reduction}
        _close(
            ours_f.jensen_shannon_divergence(p, q, **args),
            tmf.jensen_shannon_divergence(p, q, **args),
        )
    _close(mine.compute(), theirs.compute())


@pytest.mark.parametrize("shape", [(5,), (1, 5), (2, 5), (4, 3)])
def test_final_aggregation_matches_torchmetrics(shape: tuple[int, ...]) -> None:
    g = torch.Generator().manual_seed(3)
    inputs = [torch.randn(shape, generator=g) for _ in range(7)]
    inputs[4:6] = [x.abs() for x in inputs[4:6]]  # sums of squared deviations
    counts = torch.randint(0, 10, shape, generator=g)
    counts.view(-1)[0] = 0  # a process with no rows
    for i in range(7):
        inputs[i].view(-1)[0] = 0.0
    copies = [x.clone() for x in (*inputs, counts)]
    mine = _final_aggregation(*inputs, counts)
    theirs = tm_final_aggregation(*inputs, counts)
    for a, b in zip(mine, theirs, strict=True):
        torch.testing.assert_close(a.double(), b.double(), rtol=1e-5, atol=1e-5)
    for before, after in zip(copies, (*inputs, counts), strict=True):
        assert torch.equal(before, after)  # never written


@pytest.mark.parametrize("name", ["R2Score", "ExplainedVariance"])
@pytest.mark.parametrize("multioutput", ["raw_values", "uniform_average", "variance_weighted"])
def test_width_comes_from_the_first_batch(name: str, multioutput: str) -> None:
    g = torch.Generator().manual_seed(5)
    mine = getattr(ours, name)(multioutput=multioutput)
    theirs = getattr(tmr, name)(multioutput=multioutput)
    for width in (4, 1, 2):  # a reset lets the next batch set another width
        for _ in range(2):
            preds = torch.randn(9, width, generator=g)
            target = preds + torch.randn(9, width, generator=g)
            if width == 1:
                preds, target = preds[:, 0], target[:, 0]
            _close(mine(preds, target), theirs(preds, target))
        _close(mine.compute(), theirs.compute())
        mine.reset()
        theirs.reset()


def test_a_declared_width_is_preallocated() -> None:
    metric = ours.R2Score(num_outputs=3)
    assert metric.sum_obs.shape == (3,)
    with pytest.raises(ValueError, match="num_outputs"):
        metric.update(torch.randn(5, 2), torch.randn(5, 2))
    # undeclared, a width change with data held is refused, not a mix of widths
    metric = ours.ExplainedVariance()
    metric.update(torch.randn(5, 3), torch.randn(5, 3))
    with pytest.raises(ValueError, match="num_outputs"):
        metric.update(torch.randn(5, 2), torch.randn(5, 2))


FUNCTIONS = [
    ("mean_squared_error", {}),
    ("mean_absolute_error", {}),
    ("log_cosh_error", {}),
    ("r2_score", {}),
    ("explained_variance", {}),
    ("relative_squared_error", {}),
    ("concordance_corrcoef", {}),
    ("pearson_corrcoef", {}),
    ("tweedie_deviance_score", {"power": 0.0}),
    ("weighted_mean_absolute_percentage_error", {}),
    ("mean_absolute_percentage_error", {}),
]


@pytest.mark.parametrize(("name", "kwargs"), FUNCTIONS, ids=[n for n, _ in FUNCTIONS])
def test_functions_return_the_inputs_dtype_and_exact_gradients(
    name: str, kwargs: dict[str, Any]
) -> None:
    g = torch.Generator().manual_seed(11)
    preds, target = torch.randn(6, dtype=torch.float64, generator=g), torch.randn(6, generator=g)
    mine = getattr(ours_f, name)(preds, target, **kwargs)
    theirs = getattr(tmf, name)(preds, target, **kwargs)
    _close(mine.reshape(theirs.shape), theirs, atol=1e-9)
    assert mine.dtype == theirs.dtype == torch.float64
    preds.requires_grad_(True)
    assert torch.autograd.gradcheck(lambda p: getattr(ours_f, name)(p, target, **kwargs), (preds,))


def _raised(build: Callable[[], Any]) -> BaseException:
    with pytest.raises(Exception) as info:  # the type and words are compared by the caller
        build()
    return info.value


BAD_INPUTS: list[tuple[str, Callable[[Any], Any]]] = [
    ("shape mse", lambda lib: lib.MeanSquaredError()(torch.randn(10), torch.randn(5))),
    ("shape r2", lambda lib: lib.R2Score()(torch.randn(10), torch.randn(5))),
    ("shape cosine", lambda lib: lib.CosineSimilarity()(torch.randn(10, 2), torch.randn(5, 2))),
    (
        "shape crps",
        lambda lib: lib.ContinuousRankedProbabilityScore()(torch.randn(10, 3), torch.randn(5)),
    ),
    (
        "one member crps",
        lambda lib: lib.ContinuousRankedProbabilityScore()(torch.randn(10, 1), torch.randn(10)),
    ),
    ("3-d r2", lambda lib: lib.R2Score()(torch.randn(4, 3, 2), torch.randn(4, 3, 2))),
    ("3-d rse", lambda lib: lib.RelativeSquaredError()(torch.randn(4, 3, 2), torch.randn(4, 3, 2))),
    ("3-d kl", lambda lib: lib.KLDivergence()(torch.randn(4, 3, 2), torch.randn(4, 3, 2))),
    (
        "3-d js",
        lambda lib: lib.JensenShannonDivergence()(torch.randn(4, 3, 2), torch.randn(4, 3, 2)),
    ),
    ("1-d cosine", lambda lib: lib.CosineSimilarity()(torch.randn(10), torch.randn(10))),
    (
        "3-d pearson",
        lambda lib: lib.PearsonCorrCoef(num_outputs=2)(torch.randn(4, 3, 2), torch.randn(4, 3, 2)),
    ),
    (
        "width pearson",
        lambda lib: lib.PearsonCorrCoef(num_outputs=2)(torch.randn(4, 3), torch.randn(4, 3)),
    ),
    ("width spearman", lambda lib: lib.SpearmanCorrCoef()(torch.randn(4, 3), torch.randn(4, 3))),
    ("int spearman", lambda lib: lib.SpearmanCorrCoef()(torch.randint(5, (4,)), torch.randn(4))),
    (
        "width kendall",
        lambda lib: lib.KendallRankCorrCoef(num_outputs=2)(torch.randn(4, 3), torch.randn(4, 3)),
    ),
    ("one sample r2", lambda lib: lib.R2Score()(torch.randn(1), torch.randn(1))),
    ("squared", lambda lib: lib.MeanSquaredError(squared="yes")),
    ("normalization", lambda lib: lib.NormalizedRootMeanSquaredError(normalization="max")),
    ("adjusted", lambda lib: lib.R2Score(adjusted=-1)),
    ("power", lambda lib: lib.TweedieDevianceScore(power=0.5)),
    ("kendall t_test", lambda lib: lib.KendallRankCorrCoef(t_test=True, alternative=None)),
    ("log_prob", lambda lib: lib.JensenShannonDivergence(log_prob=1)),
]


@pytest.mark.parametrize("build", [b for _, b in BAD_INPUTS], ids=[n for n, _ in BAD_INPUTS])
def test_bad_input_raises_as_torchmetrics(build: Callable[[Any], Any]) -> None:
    theirs, mine = _raised(lambda: build(tmr)), _raised(lambda: build(ours))
    assert type(mine).__name__ == type(theirs).__name__ or isinstance(mine, type(theirs))
    if "{" in str(theirs):
        # TorchMetrics' SpearmanCorrCoef forgot the f-string: its words up to the placeholder
        assert str(mine).startswith(str(theirs).split("{", 1)[0])
    else:
        assert str(mine) == str(theirs)


@pytest.mark.parametrize(
    ("power", "preds", "target"),
    [
        (1, [-1.0, 2.0], [1.0, 2.0]),
        (1, [1.0, 2.0], [-1.0, 2.0]),
        (2, [1.0, 2.0], [0.0, 2.0]),
        (-1, [0.0, 2.0], [1.0, 2.0]),
        (1.5, [1.0, 2.0], [-1.0, 2.0]),
        (3, [1.0, -2.0], [1.0, 2.0]),
    ],
)
def test_tweedie_domain_errors_carry_torchmetrics_words(
    power: float, preds: list[float], target: list[float]
) -> None:
    inputs = torch.tensor(preds), torch.tensor(target)
    theirs = _raised(lambda: tmr.TweedieDevianceScore(power=power)(*inputs))
    mine = _raised(lambda: ours.TweedieDevianceScore(power=power)(*inputs))
    assert isinstance(mine, ValueError) and str(theirs) in str(mine)


def test_r2_adjusted_warnings_as_torchmetrics() -> None:
    metric = ours.R2Score(adjusted=10)
    with pytest.warns(UserWarning, match="More independent regressions than data points"):
        metric(torch.randn(10), torch.randn(10))
    with pytest.warns(UserWarning, match="Division by zero in adjusted r2 score"):
        metric(torch.randn(11), torch.randn(11))


@pytest.mark.parametrize(
    ("build", "inputs"),
    [
        (
            lambda: ours.KendallRankCorrCoef(t_test=True, capacity=32),
            (torch.randn(8), torch.randn(8)),
        ),
        (lambda: ours.ContinuousRankedProbabilityScore(), (torch.randn(8, 4), torch.randn(8))),
        (lambda: ours.JensenShannonDivergence(), (torch.rand(8, 4), torch.rand(8, 4))),
        (lambda: ours.R2Score(num_outputs=3), (torch.randn(8, 3), torch.randn(8, 3))),
    ],
    ids=["kendall", "crps", "js", "r2-declared"],
)
def test_new_classes_trace(build: Callable[[], Any], inputs: tuple[torch.Tensor, ...]) -> None:
    report = assert_traceable(build(), *inputs)
    assert report.graphs == 1 and report.recompiles == 0 and not report.unbacked


def test_torchmetrics_is_1_9() -> None:
    assert torchmetrics.__version__.startswith("1.9")
    assert np is not None


@pytest.mark.parametrize("name", ["MeanSquaredError", "R2Score", "PearsonCorrCoef"])
def test_forward_compiles(name: str) -> None:
    """The functions carry their result dtype in a ContextVar, which Dynamo cannot read: a
    compiled `forward` of the classes must not touch it."""
    torch._dynamo.reset()
    metric = getattr(ours, name)()
    preds, target = torch.rand(16, dtype=torch.float64), torch.rand(16, dtype=torch.float64)
    compiled = torch.compile(lambda p, t: metric(p, t), fullgraph=True)
    value = compiled(preds, target)
    reference = getattr(tmr, name)()(preds, target)
    torch.testing.assert_close(value.double(), reference.double(), rtol=1e-5, atol=1e-6)
