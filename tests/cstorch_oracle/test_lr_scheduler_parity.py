"""Every learning-rate scheduler gives the real `cerebras.pytorch.optim.lr_scheduler` sequence
(2.10.0, run eagerly on CPU) over 200 steps, built with Cerebras' argument names."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from torchtally import optim

STEPS = 200
RTOL = 1e-6

Case = tuple[str, dict[str, Any], list[tuple[str, dict[str, Any]]]]

CASES: list[Case] = [
    ("ConstantLR", {"learning_rate": 0.1, "total_iters": 50}, []),
    ("CosineAnnealingLR", {"initial_learning_rate": 0.1, "T_max": 40, "eta_min": 0.01}, []),
    (
        "CosineDecayLR",
        {"initial_learning_rate": 0.1, "end_learning_rate": 0.01, "total_iters": 100},
        [],
    ),
    ("CyclicLR", {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 20, "step_size_down": 10}, []),
    ("CyclicLR", {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 15, "mode": "triangular2"}, []),
    (
        "CyclicLR",
        {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 15, "mode": "exp_range", "gamma": 0.99},
        [],
    ),
    (
        "ExponentialLR",
        {"initial_learning_rate": 0.1, "total_iters": 30, "decay_rate": 0.5},
        [],
    ),
    (
        "ExponentialLR",
        {"initial_learning_rate": 0.1, "total_iters": 30, "decay_rate": 0.5, "staircase": True},
        [],
    ),
    (
        "InverseExponentialTimeDecayLR",
        {"initial_learning_rate": 0.1, "step_exponent": 2, "total_iters": 20, "decay_rate": 0.5},
        [],
    ),
    (
        "InverseExponentialTimeDecayLR",
        {
            "initial_learning_rate": 0.1,
            "step_exponent": 1,
            "total_iters": 20,
            "decay_rate": 0.5,
            "staircase": True,
        },
        [],
    ),
    (
        "InverseSquareRootDecayLR",
        {"initial_learning_rate": 0.1, "scale": 2.0, "warmup_steps": 10},
        [],
    ),
    ("InverseSquareRootDecayLR", {}, []),
    (
        "LinearLR",
        {"initial_learning_rate": 0.1, "end_learning_rate": 0.01, "total_iters": 50},
        [],
    ),
    (
        "MultiStepLR",
        {"initial_learning_rate": 0.1, "gamma": 0.5, "milestones": [20, 60, 120]},
        [],
    ),
    ("MultiplicativeLR", {"initial_learning_rate": 0.1, "coefficient": 0.99}, []),
    ("OneCycleLR", {"initial_learning_rate": 0.01, "max_lr": 0.1, "total_steps": 150}, []),
    (
        "OneCycleLR",
        {
            "initial_learning_rate": 0.01,
            "max_lr": 0.1,
            "total_steps": 150,
            "pct_start": 0.2,
            "final_div_factor": 100.0,
            "three_phase": True,
            "anneal_strategy": "linear",
        },
        [],
    ),
    (
        "PiecewiseConstantLR",
        {"learning_rates": [0.1, 0.05, 0.01], "milestones": [30, 90]},
        [],
    ),
    (
        "PolynomialLR",
        {"initial_learning_rate": 0.1, "end_learning_rate": 0.01, "total_iters": 50, "power": 2.0},
        [],
    ),
    (
        "PolynomialLR",
        {
            "initial_learning_rate": 0.1,
            "end_learning_rate": 0.01,
            "total_iters": 30,
            "power": 0.5,
            "cycle": True,
        },
        [],
    ),
    ("StepLR", {"initial_learning_rate": 0.1, "step_size": 30, "gamma": 0.5}, []),
    (
        "SequentialLR",
        {"milestones": [30]},
        [
            (
                "LinearLR",
                {"initial_learning_rate": 0.0, "end_learning_rate": 0.1, "total_iters": 30},
            ),
            (
                "CosineDecayLR",
                {"initial_learning_rate": 0.1, "end_learning_rate": 0.0, "total_iters": 100},
            ),
        ],
    ),
]


def _build(module: Any, opt: Any, case: Case) -> Any:
    name, kwargs, subs = case
    cls = getattr(module, name)
    if subs:
        return cls(opt, [getattr(module, n)(opt, **kw) for n, kw in subs], **kwargs)
    return cls(opt, **kwargs)


def _rates(module: Any, optim_module: Any, case: Case) -> list[float]:
    w = torch.nn.Parameter(torch.zeros(2))
    opt = optim_module.SGD([w], lr=0.5)
    scheduler = _build(module, opt, case)
    rates = [float(opt.param_groups[0]["lr"])]
    for _ in range(STEPS):
        opt.step()
        scheduler.step()
        rates.append(float(opt.param_groups[0]["lr"]))
    return rates


def _case_id(case: Case) -> str:
    name, kwargs, subs = case
    return "-".join([name, *(f"{k}={v}" for k, v in kwargs.items()), *(n for n, _ in subs)])


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_rates_equal_cerebras_over_200_steps(case: Case, cs_optim: Any) -> None:
    expected = _rates(cs_optim.lr_scheduler, cs_optim, case)
    got = _rates(optim.lr_scheduler, optim, case)
    for step, (e, g) in enumerate(zip(expected, got)):
        assert g == pytest.approx(e, rel=RTOL, abs=1e-12), f"step {step}: {g} != {e}"


def test_positional_arguments_in_cerebras_order(cs_optim: Any) -> None:
    # Scripts written for cstorch pass these positionally: (lr, gamma, milestones), ...
    for name, args in (
        ("MultiStepLR", (0.1, 0.5, [10, 20])),
        ("StepLR", (0.1, 10, 0.5)),
        ("LinearLR", (0.1, 0.01, 20, True)),
        ("OneCycleLR", (0.01, 0.1, 100, 0.3)),
        ("PolynomialLR", (0.1, 0.01, 20, 2.0, True)),
        ("ExponentialLR", (0.1, 10, 0.5, True)),
    ):
        rates = []
        for module, optim_module in (
            (cs_optim.lr_scheduler, cs_optim),
            (optim.lr_scheduler, optim),
        ):
            w = torch.nn.Parameter(torch.zeros(2))
            opt = optim_module.SGD([w], lr=0.5)
            scheduler = getattr(module, name)(opt, *args)
            seq = []
            for _ in range(60):
                opt.step()
                scheduler.step()
                seq.append(float(opt.param_groups[0]["lr"]))
            rates.append(seq)
        assert rates[1] == pytest.approx(rates[0], rel=RTOL), name


def test_cerebras_scheduler_state_dict_loads(cs_optim: Any) -> None:
    # Cerebras saves its whole __dict__, with `last_epoch` a tensor.
    kwargs = {"initial_learning_rate": 0.1, "end_learning_rate": 0.01, "total_iters": 50}
    w = torch.nn.Parameter(torch.zeros(2))
    cs_opt = cs_optim.SGD([w], lr=0.5)
    theirs = cs_optim.lr_scheduler.LinearLR(cs_opt, **kwargs)
    for _ in range(17):
        cs_opt.step()
        theirs.step()
    state = theirs.state_dict()
    assert isinstance(state["last_epoch"], torch.Tensor)
    opt = optim.SGD([torch.nn.Parameter(torch.zeros(2))], lr=0.5)
    ours = optim.lr_scheduler.LinearLR(opt, **kwargs)
    ours.load_state_dict(state)
    assert int(ours.last_epoch) == 17
    for _ in range(5):
        cs_opt.step()
        theirs.step()
        opt.step()
        ours.step()
        assert float(opt.param_groups[0]["lr"]) == pytest.approx(
            float(cs_opt.param_groups[0]["lr"]), rel=RTOL
        )


def test_warm_restarts_equal_cerebras_in_the_first_cycle_only(cs_optim: Any) -> None:
    # A documented difference: Cerebras 2.10 computes T_cur = floor(t / T_0) * T_0 - T_0 from
    # the second cycle on, a constant per cycle (the rate jumps between the initial rate and
    # eta_min every T_0 steps); ours anneals within each cycle as torch and SGDR do. Cerebras
    # accepts only T_mult=1.
    case: Case = (
        "CosineAnnealingWarmRestarts",
        {"initial_learning_rate": 0.1, "T_0": 20, "T_mult": 1, "eta_min": 0.001},
        [],
    )
    expected = _rates(cs_optim.lr_scheduler, cs_optim, case)
    got = _rates(optim.lr_scheduler, optim, case)
    assert got[:21] == pytest.approx(expected[:21], rel=RTOL)
    assert expected[21:40] == pytest.approx([0.1] * 19) and len(set(got[21:40])) == 19
    torch_rates = []
    w = torch.nn.Parameter(torch.zeros(2))
    opt = torch.optim.SGD([w], lr=0.1)
    reference = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, 20, 1, 0.001)
    for _ in range(STEPS):
        opt.step()
        reference.step()
        torch_rates.append(opt.param_groups[0]["lr"])
    assert got[1:] == pytest.approx(torch_rates, rel=1e-5)


def test_scale_per_param_equals_cerebras(cs_optim: Any) -> None:
    def groups() -> list[dict[str, Any]]:
        g = torch.Generator().manual_seed(3)
        return [
            {"params": [torch.nn.Parameter(torch.randn(2, generator=g))]},
            {
                "params": [torch.nn.Parameter(torch.randn(3, generator=g))],
                "adjust_learning_rate": 0.25,
            },
            {
                "params": [torch.nn.Parameter(torch.randn(1, generator=g))],
                "adjust_learning_rate": 2.0,
            },
        ]

    kwargs = {"initial_learning_rate": 0.1, "end_learning_rate": 0.01, "total_iters": 50}
    sequences = []
    for module, optim_module in ((cs_optim.lr_scheduler, cs_optim), (optim.lr_scheduler, optim)):
        opt = optim_module.SGD(groups(), lr=0.5)
        scheduler = module.ScalePerParamLR(opt, module.CosineDecayLR(opt, **kwargs))
        rates = []
        for _ in range(80):
            opt.step()
            scheduler.step()
            rates.append([float(group["lr"]) for group in opt.param_groups])
        sequences.append(rates)
    assert sequences[1] == [pytest.approx(r, rel=RTOL) for r in sequences[0]]


@pytest.mark.parametrize("tags", ["decay", ["decay", None], None])
def test_param_group_tags_select_groups_as_cerebras(tags: Any, cs_optim: Any) -> None:
    def groups() -> list[dict[str, Any]]:
        return [
            {"params": [torch.nn.Parameter(torch.zeros(2))], "tags": "decay"},
            {"params": [torch.nn.Parameter(torch.zeros(2))], "tags": ["other", "decay"]},
            {"params": [torch.nn.Parameter(torch.zeros(2))], "tags": "other"},
            {"params": [torch.nn.Parameter(torch.zeros(2))]},
        ]

    kwargs = {"initial_learning_rate": 0.1, "end_learning_rate": 0.01, "total_iters": 20}
    sequences = []
    for module, optim_module in ((cs_optim.lr_scheduler, cs_optim), (optim.lr_scheduler, optim)):
        opt = optim_module.SGD(groups(), lr=0.5)
        scheduler = module.LinearLR(opt, **kwargs, param_group_tags=tags)
        rates = [[float(group["lr"]) for group in opt.param_groups]]
        for _ in range(30):
            opt.step()
            scheduler.step()
            rates.append([float(group["lr"]) for group in opt.param_groups])
        sequences.append(rates)
    assert sequences[1] == [pytest.approx(r, rel=RTOL) for r in sequences[0]]


def test_param_group_tags_matching_nothing_is_an_error() -> None:
    opt = optim.SGD([{"params": [torch.nn.Parameter(torch.zeros(2))], "tags": "a"}], lr=0.5)
    with pytest.raises(ValueError, match="Argument `param_group_tags` matches no"):
        optim.lr_scheduler.ConstantLR(opt, 0.1, param_group_tags="b")


def test_chained_lr_equals_cerebras(cs_optim: Any) -> None:
    sequences = []
    for module, optim_module in ((cs_optim.lr_scheduler, cs_optim), (optim.lr_scheduler, optim)):
        opt = optim_module.SGD([torch.nn.Parameter(torch.zeros(2))], lr=0.5)
        scheduler = module.ChainedLR(
            [
                module.CosineDecayLR(opt, 0.1, 0.01, 100),
                module.StepLR(opt, 1.0, step_size=30, gamma=0.5),
            ]
        )
        rates = [float(opt.param_groups[0]["lr"])]
        for _ in range(STEPS):
            opt.step()
            scheduler.step()
            rates.append(float(opt.param_groups[0]["lr"]))
        sequences.append(rates)
    assert sequences[1] == pytest.approx(sequences[0], rel=RTOL)


def test_main_scheduler_chained_in_a_config() -> None:
    opt = optim.SGD([torch.nn.Parameter(torch.zeros(2))], lr=0.5)
    scheduler = optim.configure_lr_scheduler(
        opt,
        [
            {
                "scheduler": "CosineDecay",
                "initial_learning_rate": 0.1,
                "end_learning_rate": 0.01,
                "total_iters": 100,
                "main_scheduler": "chained",
            },
            {"scheduler": "Step", "initial_learning_rate": 1.0, "step_size": 30, "gamma": 0.5},
        ],
    )
    assert isinstance(scheduler, optim.lr_scheduler.ChainedLR)


def _resumed_in_cerebras(
    cs_module: Any, cs_optim_module: Any, ours_module: Any, ours_optim_module: Any, case: Case
) -> tuple[list[float], list[float]]:
    """Ours runs 37 steps and saves; a fresh Cerebras scheduler loads that state and both run
    on. Returns (Cerebras' rates after loading, ours)."""
    opt = ours_optim_module.SGD([torch.nn.Parameter(torch.zeros(2))], lr=0.5)
    ours = _build(ours_module, opt, case)
    for _ in range(37):
        opt.step()
        ours.step()
    state = ours.state_dict()
    cs_opt = cs_optim_module.SGD([torch.nn.Parameter(torch.zeros(2))], lr=0.5)
    theirs = _build(cs_module, cs_opt, case)
    theirs.load_state_dict(state)
    expected, got = [], []
    for _ in range(60):
        cs_opt.step()
        theirs.step()
        opt.step()
        ours.step()
        expected.append(float(cs_opt.param_groups[0]["lr"]))
        got.append(float(opt.param_groups[0]["lr"]))
    return expected, got


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_our_state_dict_resumes_a_cerebras_scheduler(case: Case, cs_optim: Any) -> None:
    expected, got = _resumed_in_cerebras(
        cs_optim.lr_scheduler, cs_optim, optim.lr_scheduler, optim, case
    )
    assert got == pytest.approx(expected, rel=RTOL, abs=1e-12)


def test_our_chained_and_scale_per_param_states_resume_cerebras(cs_optim: Any) -> None:
    def chained(module: Any, opt: Any) -> Any:
        return module.ChainedLR(
            [module.CosineDecayLR(opt, 0.1, 0.01, 100), module.StepLR(opt, 1.0, 30, 0.5)]
        )

    def scaled(module: Any, opt: Any) -> Any:
        return module.ScalePerParamLR(opt, module.LinearLR(opt, 0.1, 0.01, 80))

    for build in (chained, scaled):
        opt = optim.SGD([torch.nn.Parameter(torch.zeros(2))], lr=0.5)
        ours = build(optim.lr_scheduler, opt)
        for _ in range(37):
            opt.step()
            ours.step()
        cs_opt = cs_optim.SGD([torch.nn.Parameter(torch.zeros(2))], lr=0.5)
        theirs = build(cs_optim.lr_scheduler, cs_opt)
        theirs.load_state_dict(ours.state_dict())
        for _ in range(60):
            for o, s in ((cs_opt, theirs), (opt, ours)):
                o.step()
                s.step()
            assert float(opt.param_groups[0]["lr"]) == pytest.approx(
                float(cs_opt.param_groups[0]["lr"]), rel=RTOL
            ), build.__name__


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_a_cerebras_state_dict_resumes_ours(case: Case, cs_optim: Any) -> None:
    cs_opt = cs_optim.SGD([torch.nn.Parameter(torch.zeros(2))], lr=0.5)
    theirs = _build(cs_optim.lr_scheduler, cs_opt, case)
    for _ in range(37):
        cs_opt.step()
        theirs.step()
    opt = optim.SGD([torch.nn.Parameter(torch.zeros(2))], lr=0.5)
    ours = _build(optim.lr_scheduler, opt, case)
    ours.load_state_dict(theirs.state_dict())
    assert float(opt.param_groups[0]["lr"]) == pytest.approx(
        float(cs_opt.param_groups[0]["lr"]), rel=RTOL
    )
    for _ in range(60):
        for o, s in ((cs_opt, theirs), (opt, ours)):
            o.step()
            s.step()
        assert float(opt.param_groups[0]["lr"]) == pytest.approx(
            float(cs_opt.param_groups[0]["lr"]), rel=RTOL, abs=1e-12
        )
