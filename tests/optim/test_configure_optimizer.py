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
        ("SGD", {"lr": 0.1, "learning_rate": 0.2}, "pass only one"),
        ("SGD", {"learning_rate": "fast"}, "Argument `learning_rate` must be a number, a "),
        ("SGD", {"learning_rate": {"scheduler": "Linear"}}, "lacks keys LinearLR needs"),
    ],
)
def test_errors_name_the_problem(name: str, kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        optim.configure_optimizer(name, _params(), **kwargs)


def test_unknown_arguments_are_warned_about_and_ignored_as_cstorch() -> None:
    # A model-zoo `optimizer:` section also carries keys for other parts of the flow.
    with pytest.warns(UserWarning, match=r"SGD got unexpected arguments \['betas'"):
        opt = optim.configure_optimizer("SGD", _params(), lr=0.1, betas=(0.9, 0.99))
    assert "betas" not in opt.param_groups[0]


def test_learning_rate_as_a_numeric_string_as_yaml_gives() -> None:
    opt = optim.configure_optimizer("AdamW", _params(), learning_rate="1e-3")
    assert float(opt.param_groups[0]["lr"]) == pytest.approx(1e-3)


def test_learning_rate_schedule_sets_the_first_rate() -> None:
    schedule = [
        {
            "scheduler": "Linear",
            "initial_learning_rate": 0.02,
            "end_learning_rate": 0.1,
            "total_iters": 10,
        },
        {
            "scheduler": "CosineDecay",
            "initial_learning_rate": 0.1,
            "end_learning_rate": 0.0,
            "total_iters": 90,
        },
    ]
    opt = optim.configure_optimizer("SGD", _params(), learning_rate=schedule, momentum=0.9)
    assert float(opt.param_groups[0]["lr"]) == pytest.approx(0.02)
    scheduler = optim.configure_lr_scheduler(opt, schedule)
    assert type(scheduler).__name__ == "SequentialLR"


def test_nested_optim_params() -> None:
    opt = optim.configure_optimizer("SGD", _params(), lr=0.1, optim_params={"momentum": 0.8})
    assert opt.param_groups[0]["momentum"] == 0.8
    with pytest.raises(ValueError, match="given both"):
        optim.configure_optimizer(
            "SGD", _params(), lr=0.1, momentum=0.5, optim_params={"momentum": 0.8}
        )


def test_configure_lr_scheduler_adjust_learning_rate_scales_groups() -> None:
    a, b = torch.zeros(2, requires_grad=True), torch.zeros(2, requires_grad=True)
    opt = optim.SGD([{"params": [a]}, {"params": [b], "adjust_learning_rate": 0.5}], lr=1.0)
    scheduler = optim.configure_lr_scheduler(opt, "0.2", adjust_learning_rate={"b": 0.5})
    assert type(scheduler).__name__ == "ScalePerParamLR"
    assert [float(g["lr"]) for g in opt.param_groups] == pytest.approx([0.2, 0.1])
