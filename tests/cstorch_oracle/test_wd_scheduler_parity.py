"""Every weight-decay scheduler gives the real `cerebras.pytorch.optim.weight_decay_scheduler`
sequence (2.10.0, run eagerly on CPU) over 200 steps, with Cerebras' argument names and
`param_group_tags`, and an optimizer driven by one takes Cerebras' steps."""

from __future__ import annotations

import copy
import inspect
from typing import Any

import pytest
import torch

from torchtally import optim
from torchtally.optim import weight_decay_scheduler as ours_wd

STEPS = 200
RTOL = 1e-6

Case = tuple[str, dict[str, Any], list[tuple[str, dict[str, Any]]]]

CASES: list[Case] = [
    ("ConstantWD", {"val": 0.1, "total_iters": 50}, []),
    ("CosineAnnealingWD", {"initial_val": 0.1, "T_max": 40, "eta_min": 0.01}, []),
    ("CosineDecayWD", {"initial_val": 0.1, "end_val": 0.01, "total_iters": 100}, []),
    ("CyclicWD", {"base_val": 0.01, "max_val": 0.1, "step_size_up": 20, "step_size_down": 10}, []),
    ("CyclicWD", {"base_val": 0.01, "max_val": 0.1, "step_size_up": 15, "mode": "triangular2"}, []),
    (
        "CyclicWD",
        {"base_val": 0.01, "max_val": 0.1, "step_size_up": 15, "mode": "exp_range", "gamma": 0.99},
        [],
    ),
    ("ExponentialWD", {"initial_val": 0.1, "total_iters": 30, "decay_rate": 0.5}, []),
    (
        "ExponentialWD",
        {"initial_val": 0.1, "total_iters": 30, "decay_rate": 0.5, "staircase": True},
        [],
    ),
    (
        "InverseExponentialTimeDecayWD",
        {"initial_val": 0.1, "step_exponent": 2, "total_iters": 20, "decay_rate": 0.5},
        [],
    ),
    (
        "InverseExponentialTimeDecayWD",
        {
            "initial_val": 0.1,
            "step_exponent": 1,
            "total_iters": 20,
            "decay_rate": 0.5,
            "staircase": True,
        },
        [],
    ),
    ("InverseSquareRootDecayWD", {"initial_val": 0.1, "scale": 2.0, "warmup_steps": 10}, []),
    ("InverseSquareRootDecayWD", {}, []),
    ("LinearWD", {"initial_val": 0.1, "end_val": 0.01, "total_iters": 50}, []),
    ("LinearWD", {"initial_val": 0.1, "end_val": 0.01, "total_iters": 30, "cycle": True}, []),
    ("MultiStepWD", {"initial_val": 0.1, "gamma": 0.5, "milestones": [20, 60, 120]}, []),
    ("MultiplicativeWD", {"initial_val": 0.1, "coefficient": 0.99}, []),
    ("OneCycleWD", {"initial_val": 0.01, "max_val": 0.1, "total_steps": 150}, []),
    (
        "OneCycleWD",
        {
            "initial_val": 0.01,
            "max_val": 0.1,
            "total_steps": 150,
            "pct_start": 0.2,
            "final_div_factor": 100.0,
            "three_phase": True,
            "anneal_strategy": "linear",
        },
        [],
    ),
    ("PiecewiseConstantWD", {"vals": [0.1, 0.05, 0.01], "milestones": [30, 90]}, []),
    (
        "PolynomialWD",
        {"initial_val": 0.1, "end_val": 0.01, "total_iters": 50, "power": 2.0},
        [],
    ),
    (
        "PolynomialWD",
        {"initial_val": 0.1, "end_val": 0.01, "total_iters": 30, "power": 0.5, "cycle": True},
        [],
    ),
    ("StepWD", {"initial_val": 0.1, "step_size": 30, "gamma": 0.5}, []),
    (
        "SequentialWD",
        {"milestones": [30]},
        [
            ("LinearWD", {"initial_val": 0.0, "end_val": 0.1, "total_iters": 30}),
            ("CosineDecayWD", {"initial_val": 0.1, "end_val": 0.0, "total_iters": 100}),
        ],
    ),
]

# Built by their own tests below: composites without an optimizer argument or with
# per-group factors, Cerebras' lambda by subclassing, and the warm restarts that differ.
OWN_TESTS = {"ChainedWD", "ScalePerParamWD", "LambdaWD", "CosineAnnealingWarmRestartsWD"}


def _groups() -> list[dict[str, Any]]:
    g = torch.Generator().manual_seed(3)
    return [
        {"params": [torch.nn.Parameter(torch.randn(2, generator=g))], "tags": "decay"},
        {
            "params": [torch.nn.Parameter(torch.randn(3, generator=g))],
            "tags": ["other", "decay"],
            "adjust_learning_rate": 0.25,
        },
        {"params": [torch.nn.Parameter(torch.randn(1, generator=g))], "tags": "other"},
        {"params": [torch.nn.Parameter(torch.randn(2, generator=g))], "adjust_val": 2.0},
    ]


def _build(module: Any, opt: Any, case: Case, tags: Any) -> Any:
    name, kwargs, subs = case
    cls = getattr(module, name)
    extra = {} if tags is None else {"param_group_tags": tags}
    if subs:
        children = [getattr(module, n)(opt, **kw, **extra) for n, kw in subs]
        return cls(opt, children, **kwargs, **extra)
    return cls(opt, **kwargs, **extra)


def _decays(opt: Any, scheduler: Any, steps: int = STEPS) -> list[list[float]]:
    values = [[float(group["weight_decay"]) for group in opt.param_groups]]
    for _ in range(steps):
        opt.step()
        scheduler.step()
        values.append([float(group["weight_decay"]) for group in opt.param_groups])
    return values


def _assert_equal(got: list[list[float]], expected: list[list[float]]) -> None:
    for step, (g, e) in enumerate(zip(got, expected, strict=True)):
        assert g == pytest.approx(e, rel=RTOL, abs=1e-12), f"step {step}: {g} != {e}"


def _case_id(case: Case) -> str:
    name, kwargs, subs = case
    return "-".join([name, *(f"{k}={v}" for k, v in kwargs.items()), *(n for n, _ in subs)])


def test_cases_cover_every_cerebras_weight_decay_scheduler(cs_optim: Any) -> None:
    theirs = {name for name in dir(cs_optim.weight_decay_scheduler) if name.endswith("WD")}
    assert len(theirs) == 19
    assert theirs == {name for name, _, _ in CASES} | OWN_TESTS
    assert theirs | {"WeightDecayScheduler"} == set(ours_wd.__all__)


@pytest.mark.parametrize("tags", [None, "decay", ["other", None]])
@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_weight_decays_equal_cerebras_over_200_steps(case: Case, tags: Any, cs_optim: Any) -> None:
    cs_opt = cs_optim.SGD(_groups(), lr=0.1)
    opt = optim.SGD(_groups(), lr=0.1)
    expected = _decays(cs_opt, _build(cs_optim.weight_decay_scheduler, cs_opt, case, tags))
    got = _decays(opt, _build(ours_wd, opt, case, tags))
    _assert_equal(got, expected)
    assert len({tuple(v) for v in expected}) > 1 or case[0] == "ConstantWD"


def test_defaults_and_positional_order_are_cerebras(cs_optim: Any) -> None:
    for name in sorted({name for name, _, _ in CASES} | OWN_TESTS - {"LambdaWD"}):
        theirs = inspect.signature(getattr(cs_optim.weight_decay_scheduler, name).__init__)
        ours = inspect.signature(getattr(ours_wd, name).__init__).parameters
        positional = [a for a in theirs.parameters if a not in ("self", "param_group_tags")]
        assert [a for a in ours if a in positional][: len(positional)] == positional, name
        for arg in positional:
            default = theirs.parameters[arg].default
            if default is not inspect.Parameter.empty:
                assert ours[arg].default == default, (name, arg)


def test_chained_wd_equals_cerebras(cs_optim: Any) -> None:
    sequences = []
    for module, optim_module in ((cs_optim.weight_decay_scheduler, cs_optim), (ours_wd, optim)):
        opt = optim_module.SGD(_groups(), lr=0.1)
        scheduler = module.ChainedWD(
            [module.CosineDecayWD(opt, 0.1, 0.01, 100), module.StepWD(opt, 1.0, 30, 0.5)]
        )
        sequences.append(_decays(opt, scheduler))
    _assert_equal(sequences[1], sequences[0])


@pytest.mark.parametrize("tags", [None, "decay"])
def test_scale_per_param_wd_equals_cerebras(tags: Any, cs_optim: Any) -> None:
    sequences = []
    extra = {} if tags is None else {"param_group_tags": tags}
    for module, optim_module in ((cs_optim.weight_decay_scheduler, cs_optim), (ours_wd, optim)):
        opt = optim_module.SGD(_groups(), lr=0.1)
        inner = module.LinearWD(opt, 0.1, 0.01, 50, **extra)
        sequences.append(_decays(opt, module.ScalePerParamWD(opt, inner, **extra)))
    _assert_equal(sequences[1], sequences[0])


def test_lambda_wd_equals_cerebras_with_the_same_function(cs_optim: Any) -> None:
    def factor(t: torch.Tensor) -> torch.Tensor:
        return torch.pow(torch.tensor(0.97), t) * (1 + t.float() / 50)

    class CerebrasLambda(cs_optim.weight_decay_scheduler.LambdaWD):  # type: ignore[name-defined,misc]
        def set_value_lambda(self) -> list[Any]:
            return [factor]

    cs_opt = cs_optim.SGD(_groups(), lr=0.1)
    expected = _decays(cs_opt, CerebrasLambda(cs_opt, 0.1))
    opt = optim.SGD(_groups(), lr=0.1)
    _assert_equal(_decays(opt, ours_wd.LambdaWD(opt, 0.1, factor)), expected)


def test_warm_restarts_wd_equals_cerebras_in_the_first_cycle(cs_optim: Any) -> None:
    # The documented difference of the learning-rate version (tests/cstorch_oracle/
    # test_lr_scheduler_parity.py): ours anneals within every cycle, Cerebras 2.10 only in
    # the first.
    sequences = []
    for module, optim_module in ((cs_optim.weight_decay_scheduler, cs_optim), (ours_wd, optim)):
        opt = optim_module.SGD(_groups(), lr=0.1)
        scheduler = module.CosineAnnealingWarmRestartsWD(opt, 0.1, 20, 1, 0.001)
        sequences.append(_decays(opt, scheduler, 40))
    _assert_equal(sequences[1][:21], sequences[0][:21])


def _cerebras_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in kwargs.items() if k != "decoupled_weight_decay"}


CASES_TRAINED = [
    ("AdamW", {"lr": 0.01, "weight_decay": 0.1}),
    # Adam keeps its constructor's L2 rate and takes the schedule as a decoupled decay.
    ("Adam", {"lr": 0.01, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.01}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "weight_decay": 0.01}),
    ("Lamb", {"lr": 0.01, "weight_decay": 0.01}),
    ("Lion", {"lr": 1e-3, "weight_decay": 0.1}),
    ("Adafactor", {"lr": 0.01, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 0.01, "weight_decay": 0.01}),
]


@pytest.mark.parametrize(
    ("name", "kwargs"), CASES_TRAINED, ids=[f"{n}-{len(k)}" for n, k in CASES_TRAINED]
)
def test_optimizers_follow_a_scheduled_weight_decay_as_cerebras(
    name: str, kwargs: dict[str, Any], cs_optim: Any
) -> None:
    models = []
    for module, optim_module in ((cs_optim.weight_decay_scheduler, cs_optim), (ours_wd, optim)):
        g = torch.Generator().manual_seed(11)
        w = torch.nn.Parameter(torch.randn(4, 3, generator=g))
        b = torch.nn.Parameter(torch.randn(3, generator=g))
        own = kwargs if optim_module is optim else _cerebras_kwargs(kwargs)
        opt = getattr(optim_module, name)(
            [{"params": [w], "tags": "decay"}, {"params": [b]}], **own
        )
        schedule = module.CosineDecayWD(opt, 0.2, 0.0, 30, param_group_tags="decay")
        data = torch.Generator().manual_seed(12)
        for _ in range(50):
            x, y = torch.randn(8, 4, generator=data), torch.randn(8, 3, generator=data)
            opt.zero_grad()
            ((torch.tanh(x @ w + b) - y) ** 2).mean().backward()
            opt.step()
            schedule.step()
        models.append((w, b))
    for p, q in zip(models[1], models[0]):
        torch.testing.assert_close(p, q, atol=RTOL, rtol=RTOL, msg=name)


def test_a_composite_refuses_a_learning_rate_child() -> None:
    opt = optim.SGD([torch.nn.Parameter(torch.zeros(2))], lr=0.1)
    with pytest.raises(ValueError, match=r"Argument `schedulers\[1\]` must set the parameter "):
        ours_wd.SequentialWD(
            opt,
            [ours_wd.ConstantWD(opt, 0.1), optim.lr_scheduler.ConstantLR(opt, 0.1)],
            milestones=[5],
        )


def test_errors_name_cerebras_arguments() -> None:
    opt = optim.SGD([torch.nn.Parameter(torch.zeros(2))], lr=0.1)
    with pytest.raises(ValueError, match="Argument `initial_val` must be a float >= 0"):
        ours_wd.LinearWD(opt, -0.1, 0.0, 10)
    with pytest.raises(ValueError, match=r"Argument `vals\[1\]` must be a float >= 0"):
        ours_wd.PiecewiseConstantWD(opt, [0.1, "x"], [5])


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_state_dicts_resume_both_ways(case: Case, cs_optim: Any) -> None:
    # Ours saved after 37 steps resumes a fresh Cerebras scheduler, and Cerebras' resumes ours.
    module = cs_optim.weight_decay_scheduler
    for source, target in (
        ((ours_wd, optim), (module, cs_optim)),
        ((module, cs_optim), (ours_wd, optim)),
    ):
        opt = source[1].SGD(_groups(), lr=0.1)
        saved = _build(source[0], opt, case, "decay")
        _decays(opt, saved, 37)
        fresh_opt = target[1].SGD(_groups(), lr=0.1)
        fresh = _build(target[0], fresh_opt, case, "decay")
        fresh.load_state_dict(saved.state_dict())
        _assert_equal(_decays(fresh_opt, fresh, 40)[1:], _decays(opt, saved, 40)[1:])


def test_a_scheduled_cerebras_adam_checkpoint_resumes_in_ours(cs_optim: Any) -> None:
    # Cerebras' Adam stores the L2 rate as `l2_regularization_rate` and the scheduled decay as
    # a tensor `weight_decay`; ours loads them as `weight_decay` and `scheduled_weight_decay`.
    def model() -> tuple[torch.nn.Parameter, torch.nn.Parameter]:
        g = torch.Generator().manual_seed(5)
        return (
            torch.nn.Parameter(torch.randn(4, 3, generator=g)),
            torch.nn.Parameter(torch.randn(3, generator=g)),
        )

    def train(params: Any, opt: Any, schedule: Any, seed: int) -> None:
        w, b = params
        data = torch.Generator().manual_seed(seed)
        for _ in range(25):
            x, y = torch.randn(8, 4, generator=data), torch.randn(8, 3, generator=data)
            opt.zero_grad()
            ((torch.tanh(x @ w + b) - y) ** 2).mean().backward()
            opt.step()
            schedule.step()

    reference = model()
    cs_opt = cs_optim.Adam(reference, lr=0.01, weight_decay=0.1)
    cs_schedule = cs_optim.weight_decay_scheduler.LinearWD(cs_opt, 0.2, 0.0, 40)
    train(reference, cs_opt, cs_schedule, 1)
    # Deep copies: torch's state dicts alias the live state tensors.
    saved_opt = copy.deepcopy(cs_opt.state_dict())
    saved_schedule = copy.deepcopy(cs_schedule.state_dict())
    train(reference, cs_opt, cs_schedule, 2)

    resumed = tuple(torch.nn.Parameter(p.detach().clone()) for p in model())
    opt = optim.Adam(resumed, lr=0.01, weight_decay=0.1)
    schedule = ours_wd.LinearWD(opt, 0.2, 0.0, 40)
    # The parameters as Cerebras left them after the first 25 steps.
    first = model()
    replay_opt = cs_optim.Adam(first, lr=0.01, weight_decay=0.1)
    replay_schedule = cs_optim.weight_decay_scheduler.LinearWD(replay_opt, 0.2, 0.0, 40)
    train(first, replay_opt, replay_schedule, 1)
    with torch.no_grad():
        for p, q in zip(resumed, first):
            p.copy_(q)
    opt.load_state_dict(saved_opt)
    schedule.load_state_dict(saved_schedule)
    assert float(opt.param_groups[0]["weight_decay"]) == pytest.approx(0.1)
    train(resumed, opt, schedule, 2)
    for p, q in zip(resumed, reference):
        torch.testing.assert_close(p, q, atol=RTOL, rtol=RTOL)
