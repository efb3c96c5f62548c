"""The `Optimizer` contract: state allocated up front, rates as tensors, checkpoints, custom
subclasses, and errors that name the argument."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest
import torch
from _optim_support import TinyModel, paired_params, train
from torch import Tensor

from torchtally import optim

# Configurations that switch on every optional state entry.
FULL: dict[str, dict[str, Any]] = {
    "Adadelta": {},
    "Adafactor": {},
    "Adagrad": {},
    "Adam": {"amsgrad": True},
    "AdamW": {"amsgrad": True},
    "Adamax": {},
    "ASGD": {},
    "Lamb": {},
    "Lion": {},
    "Muon": {},
    "NAdam": {},
    "RAdam": {},
    "RMSprop": {"momentum": 0.9, "centered": True},
    "Rprop": {},
    "SGD": {"momentum": 0.9},
}


def _params(name: str, model: TinyModel) -> list[torch.nn.Parameter]:
    # Muon takes matrices only (its vectors go to another optimizer).
    params = list(model.parameters())
    return [p for p in params if p.dim() >= 2] if name == "Muon" else params


def test_full_configurations_cover_every_optimizer() -> None:
    assert set(FULL) == set(optim.OPTIMIZERS)


@pytest.mark.parametrize("name", sorted(FULL))
def test_state_is_allocated_at_construction_and_never_added_in_step(name: str) -> None:
    model = TinyModel()
    params = _params(name, model)
    opt = optim.OPTIMIZERS[name](params, lr=0.01, **FULL[name])
    before = {p: dict(opt.state[p]) for p in params}
    assert all(before[p] for p in params), "every parameter needs state"
    train(model, opt, 3)
    for p in params:
        after = opt.state[p]
        assert after.keys() == before[p].keys()
        assert all(after[k] is before[p][k] for k in after), "state updated in place"


@pytest.mark.parametrize("name", sorted(FULL))
def test_state_names_to_sparsify_are_shaped_like_their_parameter(name: str) -> None:
    model = TinyModel()
    params = _params(name, model)
    opt = optim.OPTIMIZERS[name](params, lr=0.01, **FULL[name])
    names = opt.state_names_to_sparsify()
    found = 0
    for p in params:
        for key in names:
            if key in opt.state[p]:
                found += 1
                assert opt.state[p][key].shape == p.shape, key
        shaped = {k for k, v in opt.state[p].items() if v.shape == p.shape and p.dim() > 0}
        assert shaped <= set(names), f"{shaped - set(names)} should be sparsified too"
    assert found > 0


@pytest.mark.parametrize("name", sorted(FULL))
def test_state_dict_round_trip_resumes_exactly(name: str) -> None:
    straight_model, resumed_model = TinyModel(), TinyModel()
    straight = optim.OPTIMIZERS[name](_params(name, straight_model), lr=0.01, **FULL[name])
    train(straight_model, straight, 4)
    saved = straight.state_dict()
    resumed_model.load_state_dict(straight_model.state_dict())
    resumed = optim.OPTIMIZERS[name](_params(name, resumed_model), lr=0.5, **FULL[name])
    resumed.load_state_dict(saved)
    assert float(resumed.param_groups[0]["lr"]) == pytest.approx(0.01)
    train(straight_model, straight, 4)
    train(resumed_model, resumed, 4)
    for _, p, q in paired_params(straight_model, resumed_model):
        torch.testing.assert_close(p, q, atol=0, rtol=0)


def test_saved_rate_is_a_copy() -> None:
    opt = optim.SGD(TinyModel().parameters(), lr=0.1)
    saved = opt.state_dict()
    opt.param_groups[0]["lr"].fill_(0.5)
    assert float(saved["param_groups"][0]["lr"]) == pytest.approx(0.1)


def test_loads_a_torch_adam_checkpoint_and_continues_like_torch() -> None:
    ours_model, torch_model = TinyModel(), TinyModel()
    oracle = torch.optim.Adam(torch_model.parameters(), lr=0.01, foreach=False)
    train(torch_model, oracle, 5)
    ours_model.load_state_dict(torch_model.state_dict())
    # torch's placement of eps (Cerebras' is the default); the checkpoint's step count becomes
    # the bias-correction powers.
    ours = optim.Adam(ours_model.parameters(), lr=0.01, eps_placement="torch")
    ours.load_state_dict(oracle.state_dict())
    train(torch_model, oracle, 5)
    train(ours_model, ours, 5)
    for _, p, q in paired_params(ours_model, torch_model):
        torch.testing.assert_close(p, q, atol=1e-6, rtol=0)


def test_rates_are_tensors_and_never_alias_the_callers() -> None:
    given = torch.tensor(0.1)
    opt = optim.SGD(TinyModel().parameters(), lr=given)
    rate = opt.param_groups[0]["lr"]
    assert isinstance(rate, Tensor) and rate.dim() == 0 and rate.dtype == torch.float32
    assert rate is not given


def test_a_float_rate_set_later_still_steps() -> None:
    w = torch.ones(2, requires_grad=True)
    opt = optim.Adam([w], lr=0.1)
    opt.param_groups[0]["lr"] = 0.5
    w.sum().backward()
    opt.step()
    # Cerebras' Adam: lr * m / (sqrt(v) + eps) * sqrt(1 - beta2) / (1 - beta1), g = 1, eps 1e-6.
    root_v = math.sqrt(1 - 0.999)
    expected = 1 - 0.5 * 0.1 / (root_v + 1e-6) * root_v / 0.1
    torch.testing.assert_close(w.detach(), torch.full((2,), expected))


def test_added_param_group_gets_state_and_a_rate_tensor_at_once() -> None:
    model = TinyModel()
    opt = optim.Adam([model.w1], lr=0.01)
    opt.add_param_group({"params": [model.b1], "lr": 0.2})
    assert isinstance(opt.param_groups[1]["lr"], Tensor)
    assert set(opt.state[model.b1]) == {"beta1_power", "beta2_power", "exp_avg", "exp_avg_sq"}


def test_a_refused_param_group_is_not_added() -> None:
    opt = optim.SGD([torch.zeros(2, requires_grad=True)], lr=0.1)
    with pytest.raises(ValueError, match="must hold real floating-point tensors"):
        opt.add_param_group({"params": [torch.zeros(2, dtype=torch.complex64)]})
    assert len(opt.param_groups) == 1


def test_a_torch_scheduler_drives_the_rate_tensor_in_place() -> None:
    opt = optim.SGD([torch.zeros(2, requires_grad=True)], lr=0.1)
    rate = opt.param_groups[0]["lr"]
    scheduler = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    for _ in range(5):
        opt.step()
        scheduler.step()
    assert opt.param_groups[0]["lr"] is rate
    assert float(rate) == pytest.approx(0.025)


def test_closure_is_evaluated_with_gradients_enabled() -> None:
    w = torch.ones(2, requires_grad=True)
    opt = optim.SGD([w], lr=0.1)

    def closure() -> float:
        opt.zero_grad()
        loss = (w**2).sum()
        loss.backward()
        return float(loss.detach())

    with torch.no_grad():
        assert opt.step(closure) == pytest.approx(2.0)
    torch.testing.assert_close(w.detach(), torch.full((2,), 0.8))


class PlainMomentum(optim.Optimizer):
    """The seed's custom-optimizer pattern: state in preinitialize, tensor-only step."""

    def __init__(self, params: Any, lr: float = 0.1, momentum: float = 0.5) -> None:
        super().__init__(params, {"lr": lr, "momentum": momentum}, enable_global_step=True)

    def preinitialize(self) -> None:
        for group in self.param_groups:
            for p in group["params"]:
                self.init_state(p, "velocity", torch.zeros_like)

    def state_names_to_sparsify(self) -> list[str]:
        return ["velocity"]

    @torch.no_grad()
    def step(self, closure: Callable[[], float] | None = None) -> float | None:  # type: ignore[override]
        for group, p, grad in self.params_with_grad():
            self.increment_global_step(p)
            velocity = self.state[p]["velocity"]
            velocity.mul_(group["momentum"]).add_(grad)
            p.sub_(group["lr"] * velocity)
        return None


def test_custom_subclass_steps_like_torch_sgd_with_momentum() -> None:
    ours_model, torch_model = TinyModel(), TinyModel()
    ours = PlainMomentum(ours_model.parameters(), lr=0.05, momentum=0.5)
    oracle = torch.optim.SGD(torch_model.parameters(), lr=0.05, momentum=0.5, foreach=False)
    train(ours_model, ours, 10)
    train(torch_model, oracle, 10)
    for _, p, q in paired_params(ours_model, torch_model):
        torch.testing.assert_close(p, q, atol=1e-6, rtol=0)
    assert all(float(ours.state[p]["step"]) == 10 for p in ours_model.parameters())


def test_incomplete_subclass_cannot_be_built() -> None:
    class NoStep(optim.Optimizer):
        def preinitialize(self) -> None:
            pass

        def state_names_to_sparsify(self) -> list[str]:
            return []

    with pytest.raises(TypeError, match="step"):
        NoStep([torch.zeros(1, requires_grad=True)], {"lr": 0.1})  # type: ignore[abstract]


def test_sparse_gradients_are_refused() -> None:
    embedding = torch.nn.Embedding(4, 2, sparse=True)
    opt = optim.Adam(embedding.parameters())
    embedding(torch.tensor([1])).sum().backward()
    with pytest.raises(RuntimeError, match="Adam does not support sparse gradients"):
        opt.step()


def _w() -> list[Tensor]:
    return [torch.zeros(2, requires_grad=True)]


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: optim.SGD(_w(), lr=-1), r"Argument `lr` must be a float >= 0. Received: lr=-1"),
        (lambda: optim.Adam(_w(), lr="fast"), "Argument `lr` must be a float >= 0"),
        (
            lambda: optim.Adam(_w(), lr=torch.ones(2)),
            "Argument `lr` must be a float >= 0 or a 1-element floating-point tensor",
        ),
        (
            lambda: optim.SGD([{"params": _w()}, {"params": _w(), "lr": -0.5}], lr=0.1),
            r"Argument `param_groups\[1\]\['lr'\]` must be a float >= 0",
        ),
        (
            lambda: optim.Adam(_w(), betas=(0.9, 1.0)),
            r"Argument `betas` must be a pair of floats in \[0, 1\). "
            r"Received: betas=\(0.9, 1.0\)",
        ),
        (lambda: optim.Lion(_w(), betas=(0.9,)), "Argument `betas` must be a pair of floats"),
        (lambda: optim.AdamW(_w(), eps=-1e-8), r"Argument `eps` must be a float >= 0"),
        (
            lambda: optim.SGD(_w(), momentum=0.0, nesterov=True),
            "Argument `nesterov` needs momentum > 0 and dampening = 0",
        ),
        (lambda: optim.SGD(_w(), nesterov=1), "Argument `nesterov` must be a bool"),
        (
            lambda: optim.RMSprop(_w(), alpha=1.5),
            r"Argument `alpha` must be a float in \[0, 1\]. Received: alpha=1.5",
        ),
        (
            lambda: optim.Rprop(_w(), etas=(1.2, 0.5)),
            "Argument `etas` must have etaminus <= etaplus",
        ),
        (
            lambda: optim.Rprop(_w(), etas=(0.5, 0.9)),
            r"Argument `etas` must satisfy 0 < etas\[0\] < 1 < etas\[1\]",
        ),
        (lambda: optim.Adafactor(_w(), d=0.5), r"Argument `d` must be a float >= 1"),
        (
            lambda: optim.Adafactor(_w(), beta2_decay=0.5),
            r"Argument `beta2_decay` must be a float <= 0",
        ),
        (lambda: optim.Adafactor(_w(), eps=1e-3), r"Argument `eps` must be a pair \(eps1 or None"),
        (
            lambda: optim.Adafactor(_w(), eps=(None, 1e-3)),
            r"Argument `eps` must be a pair of floats \(eps1 or None only with algorithm='torch'\)",
        ),
        (
            lambda: optim.Adafactor(_w(), algorithm="hf"),
            r"Argument `algorithm` must be one of \('cerebras', 'torch'\). Received: "
            "algorithm='hf'",
        ),
        (
            lambda: optim.Adafactor(_w(), clip_threshold=0),
            r"Argument `clip_threshold` must be a float > 0",
        ),
        (
            lambda: optim.Adafactor(_w(), beta1=1.0),
            r"Argument `beta1` must be a float in \[0, 1\)",
        ),
        (
            lambda: optim.Adafactor(_w(), beta1=0.9, algorithm="torch"),
            r"Argument `beta1` must be None with algorithm='torch'",
        ),
        (
            lambda: optim.Adafactor(_w(), warmup_init=True),
            r"Argument `warmup_init` needs relative_step=True",
        ),
        (lambda: optim.Lamb(_w(), adam="yes"), "Argument `adam` must be a bool"),
        (
            lambda: optim.SGD([torch.zeros(2, dtype=torch.int64)]),
            "Argument `params` must hold real floating-point tensors. "
            "Received: a tensor of dtype torch.int64",
        ),
        (
            lambda: PlainMomentumWithoutLr(_w()),
            r"Argument `defaults` must contain the key 'lr'",
        ),
        (
            lambda: optim.Optimizer.__init__(PlainMomentum(_w()), _w(), {"lr": 0.1}, "yes"),
            "Argument `enable_global_step` must be a bool",
        ),
    ],
)
def test_errors_name_the_argument(build: Callable[[], Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build()


class PlainMomentumWithoutLr(PlainMomentum):
    def __init__(self, params: Any) -> None:
        optim.Optimizer.__init__(self, params, {"momentum": 0.5})
