"""`configure_optimizer`: an optimizer from its name and keyword arguments."""

from __future__ import annotations

import pytest
import torch

from torchtally import optim


def _params() -> list[torch.Tensor]:
    return [torch.zeros(3, requires_grad=True)]


@pytest.mark.parametrize("name", ["SGD", "sgd", "Sgd"])
def test_name_is_case_insensitive_and_kwargs_reach_the_class(name: str) -> None:
    opt = optim.configure_optimizer(name, _params(), lr=0.001, momentum=0.5)
    assert type(opt) is optim.SGD
    assert float(opt.param_groups[0]["lr"]) == pytest.approx(0.001)
    assert opt.param_groups[0]["momentum"] == 0.5


def test_seed_003_example() -> None:
    model = torch.nn.Linear(2, 1)
    optimizer_params = {"optimizer_type": "SGD", "lr": 0.001, "momentum": 0.5}
    opt = optim.configure_optimizer(
        optimizer_type=optimizer_params.pop("optimizer_type"),
        params=model.parameters(),
        **optimizer_params,
    )
    assert isinstance(opt, optim.Optimizer)


@pytest.mark.parametrize("name", sorted(optim.OPTIMIZERS))
def test_every_optimizer_is_reachable(name: str) -> None:
    params = [torch.zeros(3, 2, requires_grad=True)] if name == "Muon" else _params()
    assert type(optim.configure_optimizer(name.upper(), params)) is optim.OPTIMIZERS[name]


def test_learning_rate_is_another_name_for_lr() -> None:
    opt = optim.configure_optimizer("adamw", _params(), learning_rate=0.02)
    assert float(opt.param_groups[0]["lr"]) == pytest.approx(0.02)


@pytest.mark.parametrize(
    ("name", "kwargs", "message"),
    [
        (
            "Adamm",
            {},
            "Argument `optimizer_type` must name one of: Adadelta, Adafactor, Adagrad, Adam, "
            "Adamax, AdamW, ASGD, Lamb, Lion, Muon, NAdam, RAdam, RMSprop, Rprop, SGD "
            r"\(case-insensitive\). Received: optimizer_type='Adamm'",
        ),
        (None, {}, "Received: optimizer_type=None"),
        (
            "SGD",
            {"betas": (0.9, 0.99)},
            r"SGD got unexpected arguments \['betas'\]. Accepted: lr, momentum, dampening, "
            "weight_decay, nesterov, maximize",
        ),
        ("SGD", {"lr": 0.1, "learning_rate": 0.2}, "pass only one"),
        (
            "SGD",
            {"learning_rate": {"scheduler": "Linear"}},
            "Argument `learning_rate` must be a number here; pass a schedule to "
            "configure_lr_scheduler",
        ),
    ],
)
def test_errors_name_the_problem(name: str, kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        optim.configure_optimizer(name, _params(), **kwargs)
