"""`GradScaler`'s dynamic loss scale follows the real `cerebras.pytorch.amp.GradScaler` (2.10.0,
run on CPU tensors as on a CSX backend) step for step under injected inf/NaN/huge gradients."""

from __future__ import annotations

from typing import Any

import _oracle
import pytest
import torch

from torchtally import amp, optim

STEPS = 60


def _faults(seed: int) -> list[float | None]:
    """Per step: None (clean) or the value written into one gradient element."""
    g = torch.Generator().manual_seed(seed)
    kinds = [None, None, None, float("inf"), float("nan"), -float("inf"), 3e38, 1e20]
    return [kinds[int(i)] for i in torch.randint(0, len(kinds), (STEPS,), generator=g)]


def _run(scaler: Any, opt: Any, params: list[torch.Tensor], faults: list[float | None]) -> list:
    trajectory = []
    for step, fault in enumerate(faults):
        opt.zero_grad()
        loss = sum(((p - 0.1 * step) ** 2).sum() for p in params)
        scaler.scale(loss).backward()
        if fault is not None:
            params[step % len(params)].grad.view(-1)[0] = fault
        scaler.unscale_(opt)
        scaler.step(opt)
        scaler.update()
        trajectory.append(
            (
                float(scaler.get_scale()),
                int(scaler._steps_since_rescale),
                int(scaler._overflows_since_rescale),
                int(scaler.get_num_skipped_steps()),
                [p.detach().clone() for p in params],
            )
        )
    return trajectory


def _params(seed: int) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return [torch.nn.Parameter(torch.randn(shape, generator=g)) for shape in ((3, 2), (4,))]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize(
    "config",
    [
        {"init_scale": 2.0**10, "steps_per_increase": 3, "max_loss_scale": 2.0**12},
        {"steps_per_increase": 2, "overflow_tolerance": 0.3, "min_loss_scale": 1.0},
        {"init_scale": 4.0, "steps_per_increase": 1, "min_loss_scale": 2.0, "max_loss_scale": 64.0},
    ],
)
def test_loss_scale_trajectory_equals_cerebras(
    config: dict[str, Any], seed: int, cs_amp: Any, cs_optim: Any
) -> None:
    faults = _faults(seed)
    theirs_params = _params(seed)
    with _oracle.as_csx():
        theirs_opt = cs_optim.SGD(theirs_params, lr=0.05, momentum=0.5)
        theirs = cs_amp.GradScaler(loss_scale="dynamic", **config)
        expected = _run(theirs, theirs_opt, theirs_params, faults)
    ours_params = _params(seed)
    ours_opt = optim.SGD(ours_params, lr=0.05, momentum=0.5)
    ours = amp.GradScaler(loss_scale="dynamic", **config)
    got = _run(ours, ours_opt, ours_params, faults)
    assert any(f is None for f in faults) and any(f is not None for f in faults)
    for step, (e, o) in enumerate(zip(expected, got)):
        assert o[:4] == e[:4], f"step {step}: ours {o[:4]} != Cerebras {e[:4]}"
        for p, q in zip(o[4], e[4]):
            torch.testing.assert_close(p, q, atol=1e-6, rtol=1e-6, msg=f"step {step}")


def test_huge_finite_gradient_is_an_overflow_as_in_cerebras() -> None:
    # 3e38 is finite, but its square is not: the global norm overflows and the step is skipped.
    w = torch.nn.Parameter(torch.ones(2))
    opt = optim.SGD([w], lr=0.1)
    scaler = amp.GradScaler(loss_scale="dynamic", init_scale=8.0)
    scaler.scale(w.sum()).backward()
    w.grad[0] = 3e38
    scaler.step(opt)
    scaler.update()
    assert float(scaler.get_scale()) == 4.0
    assert int(scaler.num_skipped_steps) == 1
    torch.testing.assert_close(w.detach(), torch.ones(2))


def test_defaults_are_cerebras_defaults(cs_amp: Any) -> None:
    with _oracle.as_csx():
        theirs = cs_amp.GradScaler(loss_scale="dynamic")
    ours = amp.GradScaler(loss_scale="dynamic")
    assert float(ours.get_scale()) == float(theirs.get_scale()) == 2.0**15
    assert ours.steps_per_increase == theirs._steps_per_increase
    assert ours.min_loss_scale == theirs._min_loss_scale
    assert ours.max_loss_scale == theirs._max_loss_scale
    assert int(ours.get_num_skipped_steps()) == int(theirs.get_num_skipped_steps()) == 0


def test_half_dtype_functions_match_cerebras(cs_amp: Any) -> None:
    for value in ("float16", "bfloat16", "cbfloat16", torch.float16, torch.bfloat16):
        assert amp.set_half_dtype(value) == cs_amp.set_half_dtype(value)
        assert amp.get_half_dtype() == cs_amp.get_half_dtype()
        assert amp.get_half_dtype_str() == cs_amp.get_half_dtype_str()
        assert amp.get_floating_point_dtype_str() == cs_amp.get_floating_point_dtype_str()
        assert amp.get_floating_point_dtype() == cs_amp.get_floating_point_dtype()
        for t in (torch.zeros(1, dtype=torch.float16), torch.zeros(1)):
            assert amp.is_cbfloat16_tensor(t) == cs_amp.is_cbfloat16_tensor(t)
    try:
        amp.set_half_dtype("cbfloat16")
        cs_amp.set_half_dtype("cbfloat16")
        with _oracle.as_csx():
            theirs = cs_amp.GradScaler(loss_scale="dynamic")
        ours = amp.GradScaler(loss_scale="dynamic")
        assert float(ours.get_scale()) == float(theirs.get_scale()) == 2.0**31
    finally:
        amp.set_half_dtype("float16")
        cs_amp.set_half_dtype("float16")
        amp.enable_mixed_precision(False)
        cs_amp.enable_mixed_precision(False)
    assert amp.get_floating_point_dtype_str() == cs_amp.get_floating_point_dtype_str() == "float32"
    with pytest.raises(ValueError, match="Argument `value`"):
        amp.set_half_dtype("float8")
