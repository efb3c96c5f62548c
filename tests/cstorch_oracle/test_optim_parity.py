"""Every optimizer Cerebras ships takes the same 50 steps as the real `cerebras.pytorch.optim`
class (run eagerly on CPU from the 2.10.0 wheel), for its defaults and a non-default config."""

from __future__ import annotations

import inspect
from typing import Any

import pytest
import torch
from torch import nn

from torchtally import optim

STEPS = 50
TOL = 1e-6
SEEDS = (0, 1, 2)

# (name, kwargs): the first case of each name is Cerebras' defaults (plus `lr` where it has none).
CASES: list[tuple[str, dict[str, Any]]] = [
    ("SGD", {"lr": 0.05}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "dampening": 0.1, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.05, "momentum": 0.8, "nesterov": True}),
    ("Adam", {}),
    (
        "Adam",
        {"lr": 0.01, "betas": (0.8, 0.99), "eps": 1e-7, "weight_decay": 0.01, "amsgrad": True},
    ),
    ("AdamW", {}),
    ("AdamW", {"lr": 0.01, "weight_decay": 0.1, "correct_bias": False}),
    ("AdamW", {"lr": 0.01, "weight_decay": 0.1, "amsgrad": True}),
    ("Adafactor", {"lr": 0.01}),
    (
        "Adafactor",
        {
            "lr": 0.02,
            "eps": (1e-20, 1e-2),
            "decay_rate": -0.5,
            "weight_decay": 0.1,
            "scale_parameter": False,
        },
    ),
    ("Adafactor", {"lr": 0.005, "eps": (1e-3, 1e-3), "weight_decay": 0.01}),
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.8, "eps": 1e-5, "weight_decay": 0.01, "maximize": True}),
    ("Adagrad", {}),
    (
        "Adagrad",
        {"lr": 0.1, "lr_decay": 0.01, "weight_decay": 0.01, "initial_accumulator_value": 0.1},
    ),
    ("Adamax", {}),
    ("Adamax", {"lr": 0.01, "betas": (0.8, 0.95), "eps": 1e-7, "weight_decay": 0.01}),
    ("ASGD", {}),
    ("ASGD", {"lr": 0.05, "lambd": 1e-3, "alpha": 0.6, "t0": 20, "weight_decay": 0.01}),
    ("Lamb", {}),
    ("Lamb", {"lr": 0.01, "betas": (0.8, 0.99), "weight_decay": 0.01}),
    ("Lamb", {"lr": 0.01, "weight_decay": 0.01, "adam": True}),
    ("Lion", {}),
    ("Lion", {"lr": 1e-3, "betas": (0.8, 0.95), "weight_decay": 0.1}),
    ("NAdam", {}),
    ("NAdam", {"lr": 0.01, "betas": (0.8, 0.99), "weight_decay": 0.01, "momentum_decay": 0.01}),
    ("RAdam", {}),
    ("RAdam", {"lr": 0.01, "betas": (0.9, 0.9), "eps": 1e-7, "weight_decay": 0.1}),
    ("RMSprop", {}),
    (
        "RMSprop",
        {"lr": 0.01, "alpha": 0.9, "momentum": 0.9, "centered": True, "weight_decay": 0.01},
    ),
    ("Rprop", {}),
    ("Rprop", {"lr": 0.02, "etas": (0.4, 1.3), "step_sizes": (1e-4, 0.05)}),
    # Cerebras 2.10's Muon never stores its momentum buffer; `keep_momentum=False` is that.
    ("Muon", {"keep_momentum": False}),
    (
        "Muon",
        {
            "lr": 0.01,
            "weight_decay": 0.1,
            "momentum": 0.9,
            "nesterov": False,
            "ns_steps": 3,
            "keep_momentum": False,
        },
    ),
    ("Muon", {"momentum": 0.0}),
    ("Muon", {"momentum": 0.0, "nesterov": False, "ns_steps": 2, "weight_decay": 0.0}),
]


class Net(nn.Module):
    """Parameters of several shapes: matrices, a bias vector, a 4-d conv kernel."""

    def __init__(self, seed: int, with_vectors: bool = True) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.w1 = nn.Parameter(torch.randn(6, 5, generator=g) * 0.5)
        self.w2 = nn.Parameter(torch.randn(3, 6, generator=g) * 0.5)
        self.conv = nn.Parameter(torch.randn(4, 2, 3, 3, generator=g) * 0.3)
        self.b1 = nn.Parameter(torch.randn(6, generator=g) * 0.1) if with_vectors else None

    def loss(self, x: torch.Tensor, y: torch.Tensor, image: torch.Tensor) -> torch.Tensor:
        h = x @ self.w1.T
        if self.b1 is not None:
            h = h + self.b1
        out = torch.tanh(h) @ self.w2.T
        conv = torch.nn.functional.conv2d(image, self.conv).tanh().mean()
        return ((out - y) ** 2).mean() + conv


def _run(model: Net, opt: torch.optim.Optimizer, seed: int) -> None:
    g = torch.Generator().manual_seed(1000 + seed)
    for _ in range(STEPS):
        x, y = torch.randn(8, 5, generator=g), torch.randn(8, 3, generator=g)
        image = torch.randn(2, 2, 5, 5, generator=g)
        opt.zero_grad()
        model.loss(x, y, image).backward()
        opt.step()


@pytest.fixture(autouse=True)
def _cerebras_muon_runs_off_csx(cs_optim: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # Cerebras 2.10 declares `_zeropower_via_newtonschulz5(G, steps)` inside the class without
    # `self` or @staticmethod, so its non-CSX branch raises TypeError. Made a staticmethod,
    # the function is used exactly as written.
    function = cs_optim.Muon.__dict__["_zeropower_via_newtonschulz5"]
    if not isinstance(function, staticmethod):
        monkeypatch.setattr(cs_optim.Muon, "_zeropower_via_newtonschulz5", staticmethod(function))


def _cerebras_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    # Our extra options (documented differences), which select Cerebras' behaviour here.
    return {k: v for k, v in kwargs.items() if k not in ("keep_momentum",)}


def _case_id(case: tuple[str, dict[str, Any]]) -> str:
    name, kwargs = case
    return name + "-" + ("-".join(f"{k}={v}" for k, v in kwargs.items()) or "defaults")


def test_cases_cover_every_cerebras_optimizer(cs_optim: Any) -> None:
    theirs = {
        name
        for name in cs_optim.__all__
        if inspect.isclass(getattr(cs_optim, name)) and name != "Optimizer"
    }
    assert theirs == {name for name, _ in CASES}
    assert theirs <= set(optim.OPTIMIZERS)


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_matches_cerebras_over_50_steps(case: tuple[str, dict[str, Any]], cs_optim: Any) -> None:
    name, kwargs = case
    for seed in SEEDS:
        # Muon orthogonalizes matrices only (Cerebras' raises on a vector parameter).
        ours_model = Net(seed, with_vectors=name != "Muon")
        cs_model = Net(seed, with_vectors=name != "Muon")
        ours = getattr(optim, name)(ours_model.parameters(), **kwargs)
        theirs = getattr(cs_optim, name)(cs_model.parameters(), **_cerebras_kwargs(kwargs))
        _run(ours_model, ours, seed)
        _run(cs_model, theirs, seed)
        moved = False
        for (pname, p), q in zip(ours_model.named_parameters(), cs_model.parameters()):
            torch.testing.assert_close(p, q, atol=TOL, rtol=TOL, msg=f"{name} {pname} seed {seed}")
            moved |= not torch.equal(q, Net(seed).get_parameter(pname))
        assert moved


def test_muon_keeping_momentum_equals_cerebras_on_the_first_step(cs_optim: Any) -> None:
    # Our default accumulates the buffer; Cerebras' starts from zero every step. The first
    # step, where both buffers are zero, is equal.
    ours_model, cs_model = Net(5, with_vectors=False), Net(5, with_vectors=False)
    ours, theirs = optim.Muon(ours_model.parameters()), cs_optim.Muon(cs_model.parameters())
    for model, opt in ((ours_model, ours), (cs_model, theirs)):
        g = torch.Generator().manual_seed(7)
        x, y = torch.randn(8, 5, generator=g), torch.randn(8, 3, generator=g)
        model.loss(x, y, torch.randn(2, 2, 5, 5, generator=g)).backward()
        opt.step()
    for p, q in zip(ours_model.parameters(), cs_model.parameters()):
        torch.testing.assert_close(p, q, atol=TOL, rtol=TOL)
    expected = (1 - 0.95) * ours_model.w1.grad
    torch.testing.assert_close(ours.state[ours_model.w1]["momentum_buffer"], expected)


def test_defaults_are_cerebras_defaults(cs_optim: Any) -> None:
    for name in sorted({name for name, _ in CASES}):
        theirs = inspect.signature(getattr(cs_optim, name).__init__).parameters
        ours = inspect.signature(getattr(optim, name).__init__).parameters
        for arg, param in theirs.items():
            if arg in ("self", "params"):
                continue
            assert arg in ours, f"{name} lacks Cerebras' argument {arg}"
            if param.default is not inspect.Parameter.empty:
                assert ours[arg].default == param.default, (name, arg)
        # Cerebras' positional order is kept (a config or script may pass them positionally).
        positional = [a for a in theirs if a not in ("self", "params")]
        assert [a for a in ours if a in positional][: len(positional)] == positional, name


def test_adafactor_first_moment_and_clip_threshold_follow_cerebras_code(cs_optim: Any) -> None:
    # Cerebras 2.10 refuses `beta1` and `clip_threshold != 1` in its constructor, but its step
    # implements both (Hugging Face's rule). Set on its groups after construction, that code
    # is the oracle for ours.
    for seed in SEEDS:
        ours_model, cs_model = Net(seed), Net(seed)
        config = {"beta1": 0.9, "clip_threshold": 1.5, "weight_decay": 0.01}
        ours = optim.Adafactor(ours_model.parameters(), lr=0.01, **config)
        theirs = cs_optim.Adafactor(cs_model.parameters(), lr=0.01, weight_decay=0.01)
        theirs.param_groups[0].update(config)
        theirs.preinitialize()
        _run(ours_model, ours, seed)
        _run(cs_model, theirs, seed)
        for (pname, p), q in zip(ours_model.named_parameters(), cs_model.parameters()):
            torch.testing.assert_close(p, q, atol=TOL, rtol=TOL, msg=f"{pname} seed {seed}")
            torch.testing.assert_close(ours.state[p]["exp_avg"], theirs.state[q]["exp_avg"])


@pytest.mark.parametrize("name", ["Adafactor", "AdamW", "SGD", "Lamb"])
def test_checkpoints_resume_across_implementations(name: str, cs_optim: Any) -> None:
    # 50 steps on one side, its state dict loaded by a fresh optimizer of the other, 50 more
    # steps on other data: the same parameters as 100 steps of Cerebras alone.
    kwargs = {"lr": 0.01, "weight_decay": 0.01}
    if name == "SGD":
        kwargs["momentum"] = 0.9
    reference = Net(3)
    theirs = getattr(cs_optim, name)(reference.parameters(), **kwargs)
    _run(reference, theirs, 3)
    _run(reference, theirs, 4)
    for first, second in ((cs_optim, optim), (optim, cs_optim)):
        model = Net(3)
        before = getattr(first, name)(model.parameters(), **kwargs)
        _run(model, before, 3)
        after = getattr(second, name)(model.parameters(), **kwargs)
        after.load_state_dict(before.state_dict())
        _run(model, after, 4)
        for (pname, p), q in zip(model.named_parameters(), reference.parameters()):
            torch.testing.assert_close(p, q, atol=TOL, rtol=TOL, msg=f"{name} {pname}")
