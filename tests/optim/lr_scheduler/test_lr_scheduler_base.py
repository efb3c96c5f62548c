"""The `LRScheduler` contract: closed form of a step-count tensor, rates written in place,
checkpoints, custom subclasses, and errors that name the argument."""

from __future__ import annotations

import math
from typing import Any

import pytest
import torch
from torch import Tensor

from torchtally import optim
from torchtally.optim import lr_scheduler as ours


def _optimizer(groups: int = 1) -> optim.SGD:
    return optim.SGD(
        [{"params": [torch.zeros(2, requires_grad=True)]} for _ in range(groups)], lr=1.0
    )


class Halving(ours.LRScheduler):
    """The seed's custom-scheduler pattern: set attributes, call super, define the closed form."""

    def __init__(
        self, optimizer: torch.optim.Optimizer, initial_learning_rate: float, last_epoch: int = -1
    ) -> None:
        self.initial_learning_rate = initial_learning_rate
        super().__init__(optimizer, total_iters=None, last_epoch=last_epoch)

    def _get_closed_form_lr(self) -> Tensor:
        return self.initial_learning_rate * 0.5 ** self.last_epoch.float()


def test_custom_scheduler_sets_step_0_at_construction_and_advances() -> None:
    opt = _optimizer(groups=2)
    scheduler = Halving(opt, 0.8)
    assert [float(g["lr"]) for g in opt.param_groups] == pytest.approx([0.8, 0.8])
    scheduler.step()
    scheduler.step()
    assert [float(g["lr"]) for g in opt.param_groups] == pytest.approx([0.2, 0.2])
    assert [float(lr) for lr in scheduler.get_last_lr()] == pytest.approx([0.2, 0.2])
    assert int(scheduler.last_epoch) == 2


def test_last_epoch_resumes_one_step_later() -> None:
    opt = _optimizer()
    Halving(opt, 1.0, last_epoch=2)
    assert float(opt.param_groups[0]["lr"]) == pytest.approx(0.125)


def test_step_with_epoch_jumps() -> None:
    opt = _optimizer()
    scheduler = ours.StepLR(opt, 1.0, step_size=3, gamma=0.1)
    scheduler.step(7)
    assert float(opt.param_groups[0]["lr"]) == pytest.approx(0.01)
    assert int(scheduler.last_epoch) == 7


def test_rate_tensor_is_written_in_place() -> None:
    # The compiled step and a CUDA graph hold the address of the rate tensor.
    opt = _optimizer()
    rate = opt.param_groups[0]["lr"]
    scheduler = ours.CosineDecayLR(opt, 1.0, 0.0, total_iters=10)
    for _ in range(3):
        scheduler.step()
    assert opt.param_groups[0]["lr"] is rate
    assert float(rate) == pytest.approx(0.5 * (1 + math.cos(math.pi * 0.3)), abs=1e-7)


def test_get_last_lr_is_a_copy() -> None:
    opt = _optimizer()
    scheduler = ours.ConstantLR(opt, 0.5)
    scheduler.get_last_lr()[0].fill_(7.0)
    assert float(opt.param_groups[0]["lr"]) == 0.5


def test_drives_a_torch_optimizer_with_float_rates() -> None:
    opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
    scheduler = ours.ExponentialLR(opt, 0.5, total_iters=1, decay_rate=0.5)
    scheduler.step()
    assert isinstance(opt.param_groups[0]["lr"], float)
    assert opt.param_groups[0]["lr"] == pytest.approx(0.25)


@pytest.mark.parametrize("composite", [False, True])
def test_state_dict_resumes_the_schedule(composite: bool) -> None:
    def build(opt: optim.SGD) -> ours.LRScheduler:
        if not composite:
            return ours.CosineAnnealingWarmRestarts(opt, 1.0, T_0=3, T_mult=2)
        warmup = ours.LinearLR(opt, 0.1, 1.0, total_iters=5)
        chain = ours.ChainedScheduler(
            [ours.CosineDecayLR(opt, 1.0, 0.0, 40), ours.StepLR(opt, 1.0, 7, 0.5)]
        )
        return ours.SequentialLR(opt, [warmup, chain], milestones=[5])

    straight_opt, resumed_opt = _optimizer(), _optimizer()
    straight = build(straight_opt)
    for _ in range(12):
        straight.step()
    saved = straight.state_dict()
    resumed = build(resumed_opt)
    resumed.load_state_dict(saved)
    assert float(resumed_opt.param_groups[0]["lr"]) == float(straight_opt.param_groups[0]["lr"])
    for _ in range(20):
        straight.step()
        resumed.step()
        assert float(resumed_opt.param_groups[0]["lr"]) == float(straight_opt.param_groups[0]["lr"])
    assert isinstance(saved["last_epoch"], int)


def test_load_state_dict_errors_name_the_problem() -> None:
    opt = _optimizer()
    with pytest.raises(ValueError, match="must contain the key 'last_epoch'"):
        ours.ConstantLR(opt, 0.1).load_state_dict({})
    sequence = ours.SequentialLR(
        opt, [ours.ConstantLR(opt, 0.1), ours.ConstantLR(opt, 0.2)], milestones=[3]
    )
    with pytest.raises(ValueError, match="must hold 2 scheduler states"):
        sequence.load_state_dict({"last_epoch": 1, "_schedulers": [{"last_epoch": 0}]})


def test_incomplete_subclass_cannot_be_built() -> None:
    class NoFormula(ours.LRScheduler):
        pass

    with pytest.raises(TypeError, match="_get_closed_form_lr"):
        NoFormula(_optimizer())  # type: ignore[abstract]


def test_composites_accept_custom_schedulers() -> None:
    class Tenfold(ours.LRScheduler):  # no initial_learning_rate: it cannot scale a chain
        def _get_closed_form_lr(self) -> Tensor:
            return 0.1 * (self.last_epoch.float() + 1)

    opt = _optimizer()
    sequence = ours.SequentialLR(opt, [Tenfold(opt), Halving(opt, 1.0)], milestones=[2])
    rates = [float(opt.param_groups[0]["lr"])]
    for _ in range(3):
        sequence.step()
        rates.append(float(opt.param_groups[0]["lr"]))
    assert rates == pytest.approx([0.1, 0.2, 1.0, 0.5])
    chain = ours.ChainedScheduler([Tenfold(opt), Halving(opt, 2.0)])
    chain.step(2)
    assert float(opt.param_groups[0]["lr"]) == pytest.approx(0.3 * 0.25)
    with pytest.raises(ValueError, match=r"initial_learning_rate=None"):
        ours.ChainedScheduler([Halving(opt, 1.0), Tenfold(opt)])


def test_initial_learning_rate_is_declared_and_composites_take_the_first_childs() -> None:
    class Tenfold(ours.LRScheduler):  # says nothing of where it starts
        def _get_closed_form_lr(self) -> Tensor:
            return 0.1 * (self.last_epoch.float() + 1)

    opt = _optimizer()
    assert Tenfold(opt).initial_learning_rate is None
    assert Halving(opt, 0.3).initial_learning_rate == 0.3
    assert ours.LinearLR(opt, 0.2, 1.0, total_iters=4).initial_learning_rate == 0.2
    # A composite reads its first child's start: the hand-written value, or None.
    assert (
        ours.SequentialLR(opt, [Tenfold(opt), Halving(opt, 1.0)], [2]).initial_learning_rate is None
    )
    assert (
        ours.SequentialLR(opt, [Halving(opt, 0.7), Tenfold(opt)], [2]).initial_learning_rate == 0.7
    )
    assert ours.ChainedScheduler([Tenfold(opt), Halving(opt, 2.0)]).initial_learning_rate is None
    assert (
        ours.ChainedScheduler([Halving(opt, 0.4), Halving(opt, 2.0)]).initial_learning_rate == 0.4
    )
    assert ours.ScalePerParamLR(opt, Tenfold(opt)).initial_learning_rate is None
    assert ours.ScalePerParamLR(opt, Halving(opt, 0.9)).initial_learning_rate == 0.9


def test_a_plain_torch_scheduler_is_refused_by_the_composites() -> None:
    opt = _optimizer()
    plain = torch.optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=2)
    with pytest.raises(ValueError, match=r"`schedulers\[1\]` must be a torchtally LRScheduler"):
        ours.SequentialLR(opt, [Halving(opt, 1.0), plain], milestones=[2])  # type: ignore[list-item]
    with pytest.raises(ValueError, match=r"`schedulers\[0\]` must be a torchtally LRScheduler"):
        ours.ChainedScheduler([plain])  # type: ignore[list-item]
    with pytest.raises(ValueError, match=r"`scheduler` must be a torchtally LRScheduler"):
        ours.ScalePerParamLR(opt, plain)  # type: ignore[arg-type]


def test_param_group_tags_is_declared_and_set_by_the_outermost_constructor() -> None:
    a, b = torch.zeros(1, requires_grad=True), torch.zeros(1, requires_grad=True)
    opt = optim.SGD([{"params": [a], "tags": "decay"}, {"params": [b]}], lr=1.0)
    assert ours.LRScheduler.param_group_tags is None
    assert Halving(opt, 1.0).param_group_tags is None

    class Doubled(Halving):  # its constructor calls Halving's, itself given the keyword
        def __init__(self, optimizer: torch.optim.Optimizer, rate: float) -> None:
            super().__init__(optimizer, 2 * rate)

    doubled = Doubled(opt, 0.25, param_group_tags="decay")  # type: ignore[call-arg]
    assert doubled.param_group_tags == {"decay"}
    # Only the tagged group got the rate (the untagged one keeps Halving's above: 1.0).
    assert [float(g["lr"]) for g in opt.param_groups] == pytest.approx([0.5, 1.0])

    def constructor(self: Any, optimizer: torch.optim.Optimizer, rate: float) -> None:
        self.rate = rate
        ours.LRScheduler.__init__(self, optimizer)

    class First(ours.LRScheduler):
        __init__ = constructor

        def _get_closed_form_lr(self) -> Tensor:
            return torch.full((), self.rate)

    class Reused(First):  # reuses a constructor that already takes the keyword
        __init__ = First.__init__

    assert Reused.__init__ is First.__init__  # not wrapped twice
    reused = Reused(opt, 0.125, param_group_tags=[None])  # type: ignore[call-arg]
    assert reused.param_group_tags == {None}
    assert [float(g["lr"]) for g in opt.param_groups] == pytest.approx([0.5, 0.125])


def test_closed_form_must_return_a_tensor() -> None:
    class FloatFormula(ours.LRScheduler):
        def _get_closed_form_lr(self) -> Tensor:
            return 0.1  # type: ignore[return-value]

    with pytest.raises(TypeError, match=r"FloatFormula._get_closed_form_lr must return a tensor"):
        FloatFormula(_optimizer())


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (
            lambda o: ours.ConstantLR("sgd", 0.1),  # type: ignore[arg-type]
            "Argument `optimizer` must be a torch.optim.Optimizer. Received: optimizer='sgd'",
        ),
        (
            lambda o: ours.ConstantLR(o, -0.1),
            "Argument `learning_rate` must be a float >= 0. Received: learning_rate=-0.1",
        ),
        (
            lambda o: ours.LinearLR(o, 0.1, 0.0, total_iters=0),
            "Argument `total_iters` must be an integer >= 1. Received: total_iters=0",
        ),
        (
            lambda o: ours.StepLR(o, 0.1, step_size=2.5),
            "Argument `step_size` must be an integer >= 1. Received: step_size=2.5",
        ),
        (
            lambda o: ours.MultiStepLR(o, 0.1, milestones=[5, 3]),
            r"Argument `milestones` must be non-decreasing. Received: milestones=\[5, 3\]",
        ),
        (
            lambda o: ours.PiecewiseConstantLR(o, [0.1, 0.2], milestones=[1, 1]),
            "Argument `milestones` must be strictly increasing",
        ),
        (
            lambda o: ours.PiecewiseConstantLR(o, [0.1], milestones=[4]),
            "Argument `learning_rates` must be a list one longer than `milestones` "
            r"\(2 rates\). Received: learning_rates=\[0.1\]",
        ),
        (
            lambda o: ours.CyclicLR(o, 0.1, 1.0, mode="sawtooth"),
            "Argument `mode` must be one of 'triangular', 'triangular2', 'exp_range'. "
            "Received: mode='sawtooth'",
        ),
        (
            lambda o: ours.CosineAnnealingWarmRestarts(o, 0.1, T_0=5, T_mult=0),
            "Argument `T_mult` must be an integer >= 1. Received: T_mult=0",
        ),
        (
            lambda o: ours.OneCycleLR(o, 0.01, 0.1, total_steps=10, pct_start=0.1),
            "Arguments `pct_start` and `total_steps` must give every phase at least one step",
        ),
        (
            lambda o: ours.OneCycleLR(o, 0.01, 0.1, anneal_strategy="cosine"),
            "Argument `anneal_strategy` must be one of 'cos', 'linear'",
        ),
        (
            lambda o: ours.LambdaLR(o, 0.1, lr_lambda=0.5),  # type: ignore[arg-type]
            "Argument `lr_lambda` must be callable. Received: lr_lambda=0.5",
        ),
        (
            lambda o: ours.SequentialLR(o, [ours.ConstantLR(o, 0.1)], milestones=[3]),
            r"Argument `milestones` must have one entry fewer than `schedulers` \(0\)",
        ),
        (
            lambda o: ours.SequentialLR(o, [], milestones=[]),
            "Argument `schedulers` must be a non-empty list of torchtally LRSchedulers",
        ),
        (
            lambda o: ours.ChainedScheduler([torch.optim.lr_scheduler.StepLR(o, 2)]),
            r"Argument `schedulers\[0\]` must be a torchtally LRScheduler",
        ),
        (
            lambda o: ours.ChainedScheduler([ours.ConstantLR(o, 0.1), ours.ConstantLR(o, 0.0)]),
            r"Argument `schedulers\[1\]` must start from a learning rate > 0",
        ),
        (
            lambda o: ours.ChainedScheduler(
                [ours.ConstantLR(o, 0.1), ours.ConstantLR(_optimizer(), 1)]
            ),
            r"Argument `schedulers\[1\]` schedules a different optimizer",
        ),
    ],
)
def test_errors_name_the_argument(build, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=message):
        build(_optimizer())
