"""`configure_optimizer` refuses keys an optimizer does not take, so it must take every key the
real Cerebras class (cstorch 2.10.0) takes: each class's own argument names and defaults, read
from its signature, configure ours without error and reach its parameter groups; every
scheduler argument Cerebras' classes take is a key `configure_lr_scheduler` accepts."""

from __future__ import annotations

import inspect
import types
from typing import Any

import pytest
import torch

from torchtally import optim
from torchtally.optim.lr_scheduler._configure import SCHEDULERS

OPTIMIZER_NAMES = sorted(optim.OPTIMIZERS)


def _arguments(cls: type, skip: tuple[str, ...]) -> dict[str, Any]:
    return {
        name: p.default
        for name, p in inspect.signature(cls.__init__).parameters.items()
        if name not in skip and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    }


@pytest.mark.parametrize("name", OPTIMIZER_NAMES)
def test_every_argument_of_the_cerebras_optimizer_is_taken(
    cs_optim: types.ModuleType, name: str
) -> None:
    real = getattr(cs_optim, name)
    kwargs = _arguments(real, ("self", "params"))
    kwargs = {k: (0.01 if v is inspect.Parameter.empty else v) for k, v in kwargs.items()}
    opt = optim.configure_optimizer(name, [torch.zeros(2, 2, requires_grad=True)], **kwargs)
    group = opt.param_groups[0]
    for key, value in kwargs.items():
        assert key in group, key
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            assert float(group[key]) == pytest.approx(value), key
        else:
            assert group[key] == value, key


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_every_argument_of_the_cerebras_scheduler_is_a_key(
    cs_optim: types.ModuleType, name: str
) -> None:
    real = getattr(cs_optim.lr_scheduler, name, None)
    if real is None:
        pytest.skip(f"cstorch 2.10 has no {name}")  # ours only; nothing to mirror
    keys = set(_arguments(real, ("self", "optimizer")))
    accepted = set(_arguments(SCHEDULERS[name], ("self", "optimizer"))) | {"param_group_tags"}
    assert keys <= accepted, sorted(keys - accepted)
