"""`configure_lr_scheduler`: a number, a dict, or a list of dicts, as seed 003 describes."""

from __future__ import annotations

import copy
import math
from typing import Any

import pytest
import torch

from torchtally import optim
from torchtally.optim import lr_scheduler as ours


def _optimizer() -> optim.SGD:
    return optim.SGD([torch.zeros(2, requires_grad=True)], lr=1.0)


def _rates(optimizer: torch.optim.Optimizer, scheduler: Any, steps: int) -> list[float]:
    rates = [float(optimizer.param_groups[0]["lr"])]
    for _ in range(steps):
        scheduler.step()
        rates.append(float(optimizer.param_groups[0]["lr"]))
    return rates


def test_exported_from_optim_as_cstorch_has_it() -> None:
    assert optim.configure_lr_scheduler is ours.configure_lr_scheduler


@pytest.mark.parametrize("value", [0.01, 3])
def test_a_number_is_a_constant_rate(value: float) -> None:
    opt = _optimizer()
    scheduler = optim.configure_lr_scheduler(opt, value)
    assert isinstance(scheduler, ours.ConstantLR)
    assert _rates(opt, scheduler, 5) == pytest.approx([value] * 6)


@pytest.mark.parametrize("name", ["LinearLR", "linear", "LINEAR", "linearlr"])
def test_a_dict_names_the_scheduler_and_passes_the_rest(name: str) -> None:
    opt = _optimizer()
    config = {
        "scheduler": name,
        "initial_learning_rate": 0.0,
        "end_learning_rate": 0.1,
        "total_iters": 4,
    }
    scheduler = optim.configure_lr_scheduler(opt, config)
    assert isinstance(scheduler, ours.LinearLR)
    assert _rates(opt, scheduler, 5) == pytest.approx([0.0, 0.025, 0.05, 0.075, 0.1, 0.1])


def test_a_list_is_a_sequence_of_total_iters_steps_each() -> None:
    opt = _optimizer()
    config = [
        {
            "scheduler": "Linear",
            "initial_learning_rate": 0.0,
            "end_learning_rate": 0.1,
            "total_iters": 3,
        },
        {
            "scheduler": "StepLR",
            "initial_learning_rate": 0.1,
            "step_size": 2,
            "gamma": 0.5,
            "total_iters": 4,
        },
        {
            "scheduler": "CosineDecay",
            "initial_learning_rate": 0.05,
            "end_learning_rate": 0.0,
            "total_iters": 4,
        },
    ]
    original = copy.deepcopy(config)
    scheduler = optim.configure_lr_scheduler(opt, config)
    assert config == original, "the config must not be modified"
    assert isinstance(scheduler, ours.SequentialLR)
    assert scheduler.milestones == [3, 7]
    cosine = [0.025 * (1 + math.cos(math.pi * min(t, 4) / 4)) for t in range(6)]
    expected = [0.0, 1 / 30, 2 / 30, 0.1, 0.1, 0.05, 0.05, *cosine]
    assert _rates(opt, scheduler, 12) == pytest.approx(expected, abs=1e-7)


def test_the_last_entry_of_a_sequence_may_omit_total_iters() -> None:
    # ExponentialLR's own `total_iters` argument doubles as its length in the sequence.
    opt = _optimizer()
    config = [
        {"scheduler": "Constant", "learning_rate": 0.1, "total_iters": 2},
        {
            "scheduler": "Exponential",
            "initial_learning_rate": 0.1,
            "total_iters": 1,
            "decay_rate": 0.5,
        },
        {"scheduler": "StepLR", "initial_learning_rate": 0.01, "step_size": 100},
    ]
    scheduler = optim.configure_lr_scheduler(opt, config)
    assert _rates(opt, scheduler, 4) == pytest.approx([0.1, 0.1, 0.1, 0.01, 0.01])


def test_chained_lr_main_scheduler_builds_a_chain() -> None:
    opt = _optimizer()
    config = [
        {
            "scheduler": "Exponential",
            "initial_learning_rate": 0.1,
            "total_iters": 1,
            "decay_rate": 0.9,
        },
        {
            "scheduler": "StepLR",
            "initial_learning_rate": 1.0,
            "step_size": 3,
            "gamma": 0.5,
            "main_scheduler": "ChainedLR",
        },
    ]
    scheduler = optim.configure_lr_scheduler(opt, config)
    assert isinstance(scheduler, ours.ChainedScheduler)
    expected = [0.1 * 0.9**t * 0.5 ** (t // 3) for t in range(8)]
    assert _rates(opt, scheduler, 7) == pytest.approx(expected, abs=1e-7)
    assert "main_scheduler" in config[1], "the config must not be modified"


def test_a_list_of_one_is_that_scheduler() -> None:
    scheduler = optim.configure_lr_scheduler(
        _optimizer(), [{"scheduler": "InverseSquareRootDecay", "warmup_steps": 4}]
    )
    assert isinstance(scheduler, ours.InverseSquareRootDecayLR)


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            {"scheduler": "Cosine"},
            "Key `scheduler` must name one of: ConstantLR, CosineAnnealingLR, "
            "CosineAnnealingWarmRestarts, CosineDecayLR, CyclicLR, ExponentialLR, "
            r".*Received: scheduler='Cosine'",
        ),
        ({"initial_learning_rate": 0.1}, "must be a dict with the key 'scheduler'"),
        (
            {"scheduler": "StepLR", "initial_learning_rate": 0.1, "step_size": 2, "decay": 0.5},
            r"has keys StepLR does not take: \['decay'\]. Accepted: initial_learning_rate, "
            "step_size, gamma",
        ),
        (
            [
                {"scheduler": "Constant", "learning_rate": 0.1},
                {"scheduler": "Constant", "learning_rate": 0.2},
            ],
            r"Argument `learning_rate\[0\]` must have the key 'total_iters'",
        ),
        (
            [
                {"scheduler": "Constant", "learning_rate": 0.1, "main_scheduler": "ChainedLR"},
                {"scheduler": "Constant", "learning_rate": 0.2, "main_scheduler": "SequentialLR"},
            ],
            "Key `main_scheduler` must have one value across the list",
        ),
        (
            [{"scheduler": "Constant", "learning_rate": 0.1, "main_scheduler": "Cyclic"}],
            "Key `main_scheduler` must be 'SequentialLR' or 'ChainedLR'",
        ),
        ([], "Argument `learning_rate` must be a number, a dict"),
        (True, "Argument `learning_rate` must be a number, a dict"),
        ("fast", "Argument `learning_rate` must be a number, a dict"),
    ],
)
def test_errors_name_the_problem(config: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        optim.configure_lr_scheduler(_optimizer(), config)


@pytest.mark.parametrize(
    ("config", "hint"),
    [
        (
            {
                "scheduler": "Linear",
                "initial_learning_rate": 0.1,
                "end_learning_rate": 0.0,
                "decay_steps": 10,
            },
            "LinearLR does not take: ['decay_steps']; give `total_iters` instead of `decay_steps`",
        ),
        (
            {
                "scheduler": "CosineDecay",
                "learning_rate": 0.1,
                "end_learning_rate": 0.0,
                "total_iters": 10,
            },
            "give `initial_learning_rate` instead of `learning_rate`",
        ),
        (
            {"scheduler": "PiecewiseConstant", "values": [0.1, 0.01], "boundaries": [5]},
            "give `milestones` instead of `boundaries`; give `learning_rates` instead of `values`",
        ),
        (
            {
                "scheduler": "Exponential",
                "initial_learning_rate": 0.1,
                "decay_steps": 10,
                "decay_rate": 0.5,
                "Staircase": True,
            },
            "give `total_iters` instead of `decay_steps`",
        ),
    ],
)
def test_cstorchs_old_schedule_spellings_are_refused_naming_the_new_one(
    config: dict[str, Any], hint: str
) -> None:
    # cstorch raises on these ("no longer supported"); a silently dropped `decay_steps` would
    # leave the schedule its default length
    with pytest.raises(ValueError) as info:
        optim.configure_lr_scheduler(_optimizer(), config)
    assert hint in str(info.value)
    assert "Accepted: " in str(info.value)
