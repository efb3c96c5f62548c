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


def test_an_argument_the_optimizer_does_not_take_is_refused_with_the_accepted_ones() -> None:
    # dropped, it would train with SGD's defaults and no sign of the typo
    with pytest.raises(ValueError) as info:
        optim.configure_optimizer("SGD", _params(), lr=0.1, momentm=0.9)
    assert str(info.value) == (
        "Optimizer SGD takes no argument 'momentm'. Accepted: lr, momentum, dampening, "
        "weight_decay, nesterov, maximize (and `learning_rate` for lr, `optim_params`, "
        "`adjust_learning_rate`). Remove the other keys of a model-zoo optimizer section (loss "
        "scaling, gradient clipping) before calling. Received: ['lr', 'momentm']"
    )
    with pytest.raises(ValueError, match="Optimizer SGD takes no argument 'betas'"):
        optim.configure_optimizer("SGD", _params(), lr=0.1, betas=(0.9, 0.99))
    with pytest.raises(ValueError, match="Optimizer AdamW takes no argument 'loss_scaling_factor'"):
        optim.configure_optimizer("AdamW", _params(), optim_params={"loss_scaling_factor": 8.0})


@pytest.mark.parametrize(
    ("name", "kwargs", "hint"),
    [
        ("Adam", {"beta1": 0.8, "beta2": 0.9}, "give `betas` instead of `beta1` and `beta2`"),
        ("AdamW", {"beta2": 0.9}, "give `betas` instead of `beta2` (one pair)"),
        ("Lamb", {"weight_decay_rate": 0.1}, "give `weight_decay` instead of `weight_decay_rate`"),
        ("Rprop", {"eta1": 0.4, "eta2": 1.3}, "give `etas` instead of `eta1` and `eta2`"),
        ("Rprop", {"step_size_max": 1.0}, "give `step_sizes` instead of `step_size_max`"),
        ("Adafactor", {"eps1": 1e-30}, "give `eps` instead of `eps1`"),
    ],
)
def test_cstorchs_old_spellings_are_refused_naming_the_new_one(
    name: str, kwargs: dict[str, object], hint: str
) -> None:
    # cstorch raises on these ("no longer supported") instead of using the defaults
    with pytest.raises(ValueError, match=f"Optimizer {name} takes no argument") as info:
        optim.configure_optimizer(name, _params(), lr=0.01, **kwargs)
    assert hint in str(info.value)


def test_a_spelling_the_optimizer_itself_takes_is_not_renamed() -> None:
    # Cerebras' Adafactor takes `beta1` (its first-moment decay), so it is no old spelling there
    opt = optim.configure_optimizer("Adafactor", _params(), lr=0.01, beta1=0.9)
    assert opt.param_groups[0]["beta1"] == 0.9


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
