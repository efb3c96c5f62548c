"""`GradScaler`: dynamic scale sequences worked out by hand, skipped steps, static scaling."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

from torchtally.amp import GradScaler


def _drive(scaler: GradScaler, pattern: str) -> list[float]:
    """Step once per character ('.' finite gradients, 'i' an inf, 'n' a NaN); return scales."""
    param = nn.Parameter(torch.zeros(3))
    optimizer = torch.optim.SGD([param], lr=0.1)
    scales = []
    for kind in pattern:
        grad = torch.ones(3)
        grad[1] = {".": 1.0, "i": float("inf"), "n": float("nan")}[kind]
        param.grad = grad
        scaler.step(optimizer)
        scaler.update()
        scales.append(float(scaler.get_scale()))
    return scales


def test_dynamic_scale_doubles_after_n_steps_halves_on_overflow_and_stays_in_bounds() -> None:
    scaler = GradScaler(
        loss_scale="dynamic",
        init_scale=8.0,
        steps_per_increase=3,
        min_loss_scale=1.0,
        max_loss_scale=32.0,
    )
    # As cstorch counts (tests/cstorch_oracle/test_amp_parity.py checks it against Cerebras):
    # the scale doubles on the 4th good step since the last rescale (count > 3): 8 -> 16 -> 32,
    # then stays at the max 32; any overflow halves and restarts the count; halving stops at
    # the minimum, 1.
    pattern = "........." + "i" + "..." + "iniiii" + "...."
    expected = [8, 8, 8, 16, 16, 16, 16, 32, 32]
    expected += [16]  # overflow
    expected += [16, 16, 16]  # three good steps since the rescale: not yet more than 3
    expected += [8, 4, 2, 1, 1, 1]  # inf, nan, inf, inf, inf, inf: floor at 1
    expected += [1, 1, 1, 2]
    assert _drive(scaler, pattern) == expected


def test_overflow_tolerance_allows_a_fraction_of_overflow_steps() -> None:
    scaler = GradScaler(
        loss_scale="dynamic", init_scale=8.0, steps_per_increase=100, overflow_tolerance=0.25
    )
    # step 4: 1 overflow in 4 steps = 0.25, not above the tolerance; step 5: 2 in 5 = 0.4 > 0.25
    # halves and resets; step 6: 1 in 1 halves again.
    assert _drive(scaler, "...ii" + "i" + "...") == [8, 8, 8, 8, 4, 2, 2, 2, 2]


def test_defaults_follow_cstorch() -> None:
    scaler = GradScaler(loss_scale="dynamic")
    assert float(scaler.get_scale()) == 2.0**15
    assert (scaler.steps_per_increase, scaler.min_loss_scale, scaler.max_loss_scale) == (
        2000,
        2.0**-14,
        2.0**15,
    )
    assert GradScaler("dynamic", init_scale=2.0**20).get_scale().item() == 2.0**15  # capped


def test_an_overflow_step_leaves_parameters_and_optimizer_state_untouched() -> None:
    torch.manual_seed(0)
    model = nn.Linear(4, 2)
    reference = copy.deepcopy(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    ref_optimizer = torch.optim.SGD(reference.parameters(), lr=0.1, momentum=0.9)
    scaler = GradScaler(loss_scale="dynamic", init_scale=4.0)
    grads = [torch.randn(2, 4), torch.randn(2)]
    bad = [torch.full((2, 4), float("inf")), torch.randn(2)]
    for step_grads in (grads, bad, grads):
        for p, g in zip(model.parameters(), step_grads):
            p.grad = g * scaler.get_scale()
        scaler.step(optimizer)
        scaler.update()
    # the oracle: the same optimizer never shown the bad step
    for _ in range(2):
        for p, g in zip(reference.parameters(), grads):
            p.grad = g.clone()
        ref_optimizer.step()
    for p, q in zip(model.parameters(), reference.parameters()):
        torch.testing.assert_close(p, q)
        torch.testing.assert_close(
            optimizer.state[p]["momentum_buffer"], ref_optimizer.state[q]["momentum_buffer"]
        )


def test_a_first_step_overflow_leaves_fresh_adam_state() -> None:
    torch.manual_seed(1)
    model = nn.Linear(3, 1)
    reference = copy.deepcopy(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    ref_optimizer = torch.optim.Adam(reference.parameters(), lr=0.01)
    scaler = GradScaler(loss_scale="dynamic", init_scale=2.0)
    good = [torch.randn(1, 3), torch.randn(1)]
    for step_grads in ([torch.full((1, 3), float("nan")), torch.zeros(1)], good):
        for p, g in zip(model.parameters(), step_grads):
            p.grad = g * scaler.get_scale()
        scaler.step(optimizer)
        scaler.update()
    for p, g in zip(reference.parameters(), good):
        p.grad = g.clone()
    ref_optimizer.step()  # Adam's first step: what the skipped step must not have disturbed
    for p, q in zip(model.parameters(), reference.parameters()):
        torch.testing.assert_close(p, q)
        for key in ("step", "exp_avg", "exp_avg_sq"):
            torch.testing.assert_close(optimizer.state[p][key], ref_optimizer.state[q][key])


def test_scale_and_unscale_round_trip_the_gradients() -> None:
    torch.manual_seed(2)
    model = nn.Linear(5, 1)
    reference = copy.deepcopy(model)
    x = torch.randn(8, 5)
    scaler = GradScaler(loss_scale="dynamic", init_scale=1024.0)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss = model(x).pow(2).mean()
    scaled = scaler.scale(loss)
    assert scaled.item() == pytest.approx(loss.item() * 1024.0)
    scaled.backward()
    scaler.unscale_(optimizer)
    scaler.unscale_(optimizer)  # a second call is a no-op
    reference(x).pow(2).mean().backward()
    for p, q in zip(model.parameters(), reference.parameters()):
        torch.testing.assert_close(p.grad, q.grad)


def test_static_scaling_scales_by_a_fixed_value() -> None:
    scaler = GradScaler(loss_scale=128.0)
    assert scaler.is_enabled() and not scaler.dynamic
    assert scaler.scale(torch.tensor(0.5)).item() == 64.0
    assert _drive(scaler, ".i.") == [128.0, 128.0, 128.0]
    for off in (None, 0.0):
        noop = GradScaler(loss_scale=off)
        loss = torch.tensor(3.0)
        assert not noop.is_enabled() and noop.scale(loss) is loss


def test_state_dict_round_trip() -> None:
    scaler = GradScaler(loss_scale="dynamic", init_scale=8.0, steps_per_increase=5)
    _drive(scaler, "..i..")
    state = scaler.state_dict()
    assert {k: v.item() for k, v in state.items()} == {
        "loss_scale": 4.0,
        "steps_since_rescale": 2,
        "overflows_since_rescale": 0,
        "num_skipped_steps": 1,
    }
    restored = GradScaler(loss_scale="dynamic", init_scale=8.0, steps_per_increase=5)
    restored.load_state_dict(state)
    assert _drive(restored, "....") == _drive(scaler, "....") == [4.0, 4.0, 4.0, 8.0]
    assert int(restored.get_num_skipped_steps()) == 1


def test_misuse_and_bad_arguments_raise() -> None:
    param = nn.Parameter(torch.zeros(1))
    param.grad = torch.ones(1)
    optimizer = torch.optim.SGD([param], lr=0.1)
    scaler = GradScaler(loss_scale="dynamic")
    scaler.step(optimizer)
    with pytest.raises(RuntimeError, match="already called"):
        scaler.step(optimizer)
    with pytest.raises(RuntimeError, match=r"unscale_\(\) was called after step\(\)"):
        scaler.unscale_(optimizer)
    with pytest.raises(ValueError, match="Argument `new_scale` is not supported"):
        scaler.update(new_scale=2.0)
    with pytest.raises(ValueError, match="Argument `loss_scale` must be 'dynamic'"):
        GradScaler(loss_scale="auto")
    with pytest.raises(ValueError, match="Argument `min_loss_scale` must be <= max_loss_scale"):
        GradScaler(loss_scale="dynamic", min_loss_scale=4.0, max_loss_scale=2.0)
    with pytest.raises(ValueError, match=r"Argument `overflow_tolerance` must be a number in"):
        GradScaler(loss_scale="dynamic", overflow_tolerance=1.5)
    with pytest.raises(ValueError, match="Argument `steps_per_increase` must be an integer >= 1"):
        GradScaler(loss_scale="dynamic", steps_per_increase=0)
    with pytest.raises(ValueError, match="Argument `init_scale` must be a number > 0"):
        GradScaler(loss_scale="dynamic", init_scale=-1.0)
