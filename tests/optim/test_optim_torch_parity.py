"""Every optimizer torch also has takes the same 100 steps as torch's (the oracle)."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from _optim_support import TinyModel, paired_params, train

from torchtally import optim

STEPS = 100
ATOL = 1e-6

# (name, kwargs): each configuration runs on ours and on torch.optim.<name>(foreach=False).
CASES: list[tuple[str, dict[str, Any]]] = [
    ("SGD", {"lr": 0.05}),
    # Dampening differs on the first step (Cerebras damps it, torch does not): it is checked
    # against Cerebras in tests/cstorch_oracle/test_optim_parity.py.
    ("SGD", {"lr": 0.05, "momentum": 0.9, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.05, "momentum": 0.8, "nesterov": True}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.01}),
    ("Adam", {"lr": 0.01, "betas": (0.8, 0.99), "amsgrad": True, "eps": 1e-6}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("AdamW", {"lr": 0.01}),
    ("AdamW", {"lr": 0.01, "weight_decay": 0.2, "amsgrad": True, "maximize": True}),
    ("Adadelta", {"lr": 1.0, "rho": 0.8, "weight_decay": 0.01}),
    ("Adafactor", {"lr": 0.01}),
    ("Adafactor", {"lr": 0.02, "beta2_decay": -0.5, "d": 1.5, "weight_decay": 0.1}),
    ("Adafactor", {"lr": 0.01, "eps": (1e-3, 1e-2)}),
    ("Adagrad", {"lr": 0.1}),
    (
        "Adagrad",
        {"lr": 0.1, "lr_decay": 0.01, "weight_decay": 0.01, "initial_accumulator_value": 0.1},
    ),
    ("Adamax", {"lr": 0.01, "betas": (0.8, 0.95), "weight_decay": 0.01}),
    ("ASGD", {"lr": 0.05}),
    ("ASGD", {"lr": 0.05, "lambd": 1e-3, "alpha": 0.6, "t0": 20, "weight_decay": 0.01}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.01}),
    (
        "NAdam",
        {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True, "momentum_decay": 0.01},
    ),
    ("RAdam", {"lr": 0.01, "weight_decay": 0.01}),
    (
        "RAdam",
        {"lr": 0.01, "betas": (0.9, 0.9), "weight_decay": 0.1, "decoupled_weight_decay": True},
    ),
    ("RMSprop", {"lr": 0.01}),
    (
        "RMSprop",
        {"lr": 0.01, "alpha": 0.9, "momentum": 0.9, "centered": True, "weight_decay": 0.01},
    ),
    ("Rprop", {"lr": 0.01}),
    ("Rprop", {"lr": 0.02, "etas": (0.4, 1.3), "step_sizes": (1e-4, 0.05), "maximize": True}),
]


# Our defaults are Cerebras' (tests/cstorch_oracle/test_optim_parity.py checks them); here ours
# gets torch's where they differ, so that the update rules are compared.
TORCH_DEFAULTS: dict[str, dict[str, Any]] = {
    "Adam": {"eps": 1e-8, "eps_placement": "torch"},
    "AdamW": {"eps": 1e-8, "weight_decay": 1e-2, "eps_placement": "torch"},
    "Adagrad": {"eps": 1e-10},
    "Adamax": {"lr": 2e-3, "eps": 1e-8},
    "RAdam": {"eps": 1e-8},
    "Rprop": {"lr": 1e-2},
    "NAdam": {"momentum_product": "torch"},
    "Adafactor": {"algorithm": "torch", "eps": (None, 1e-3), "relative_step": True},
}


def _ours(name: str, params: Any, **kwargs: Any) -> torch.optim.Optimizer:
    return optim.OPTIMIZERS[name](params, **{**TORCH_DEFAULTS.get(name, {}), **kwargs})


def _case_id(case: tuple[str, dict[str, Any]]) -> str:
    name, kwargs = case
    return name + "-" + "-".join(f"{k}={v}" for k, v in kwargs.items())


def test_cases_cover_every_optimizer_torch_has() -> None:
    # torch's Muon is another variant (learning rate scaled by sqrt(max(1, rows / cols)));
    # ours is Cerebras', checked in tests/cstorch_oracle/test_optim_parity.py.
    in_torch = {name for name in optim.OPTIMIZERS if hasattr(torch.optim, name)} - {"Muon"}
    assert in_torch == {name for name, _ in CASES}
    assert set(optim.OPTIMIZERS) - in_torch == {"Lamb", "Lion", "Muon"}


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_matches_torch_over_100_steps(case: tuple[str, dict[str, Any]]) -> None:
    name, kwargs = case
    ours_model, torch_model = TinyModel(), TinyModel()
    ours = _ours(name, ours_model.parameters(), **kwargs)
    oracle = getattr(torch.optim, name)(torch_model.parameters(), foreach=False, **kwargs)
    train(ours_model, ours, STEPS)
    train(torch_model, oracle, STEPS)
    for param_name, p, q in paired_params(ours_model, torch_model):
        torch.testing.assert_close(p, q, atol=ATOL, rtol=0)
        assert not torch.equal(p, TinyModel().get_parameter(param_name)), param_name


def test_param_groups_with_their_own_hyperparameters_match_torch() -> None:
    ours_model, torch_model = TinyModel(), TinyModel()

    def groups(model: TinyModel) -> list[dict[str, Any]]:
        return [
            {"params": [model.w1, model.w2]},
            {"params": [model.b1, model.scale], "lr": 0.003, "weight_decay": 0.1},
        ]

    ours = _ours("Adam", groups(ours_model), lr=0.01)
    oracle = torch.optim.Adam(groups(torch_model), lr=0.01, foreach=False)
    train(ours_model, ours, STEPS)
    train(torch_model, oracle, STEPS)
    for _, p, q in paired_params(ours_model, torch_model):
        torch.testing.assert_close(p, q, atol=ATOL, rtol=0)


def test_asgd_average_matches_torch() -> None:
    # ASGD's answer is the averaged iterate `ax`, not the parameter itself.
    ours_model, torch_model = TinyModel(), TinyModel()
    ours = optim.ASGD(ours_model.parameters(), lr=0.05, t0=30)
    oracle = torch.optim.ASGD(torch_model.parameters(), lr=0.05, t0=30, foreach=False)
    train(ours_model, ours, STEPS)
    train(torch_model, oracle, STEPS)
    for _, p, q in paired_params(ours_model, torch_model):
        torch.testing.assert_close(ours.state[p]["ax"], oracle.state[q]["ax"], atol=ATOL, rtol=0)


@pytest.mark.parametrize("name", ["SGD", "Adam", "ASGD", "Rprop"])
def test_scheduled_rates_match_torch_scheduler(name: str) -> None:
    """Our scheduler driving our optimizer equals torch's scheduler driving torch's: the rate
    reaches the step as a tensor, and ASGD and Rprop seed their state from the rate of the
    first step (not the constructor's), as torch's lazy state does."""
    ours_model, torch_model = TinyModel(), TinyModel()
    base = 0.05
    ours = _ours(name, ours_model.parameters(), lr=base)
    oracle = getattr(torch.optim, name)(torch_model.parameters(), lr=base, foreach=False)
    warmup = optim.lr_scheduler.LinearLR(ours, 0.3 * base, base, total_iters=10)
    decay = optim.lr_scheduler.StepLR(ours, base, step_size=15, gamma=0.5)
    ours_schedule = optim.lr_scheduler.SequentialLR(ours, [warmup, decay], milestones=[10])
    torch_schedule = torch.optim.lr_scheduler.SequentialLR(
        oracle,
        [
            torch.optim.lr_scheduler.LinearLR(oracle, start_factor=0.3, total_iters=10),
            torch.optim.lr_scheduler.StepLR(oracle, step_size=15, gamma=0.5),
        ],
        milestones=[10],
    )
    train(ours_model, ours, STEPS, ours_schedule.step)
    train(torch_model, oracle, STEPS, torch_schedule.step)
    for _, p, q in paired_params(ours_model, torch_model):
        torch.testing.assert_close(p, q, atol=ATOL, rtol=0)
