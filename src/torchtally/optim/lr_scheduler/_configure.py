"""`configure_lr_scheduler`: build a scheduler from a number, a dict or a list of dicts."""

from __future__ import annotations

import contextlib
import copy
import inspect
from typing import Any

import torch

from torchtally.optim.lr_scheduler._base import LRScheduler
from torchtally.optim.lr_scheduler._composite import ChainedScheduler, SequentialLR
from torchtally.optim.lr_scheduler._constant import ConstantLR
from torchtally.optim.lr_scheduler._cosine import CosineAnnealingLR, CosineDecayLR
from torchtally.optim.lr_scheduler._cyclic import CyclicLR
from torchtally.optim.lr_scheduler._exponential import ExponentialLR
from torchtally.optim.lr_scheduler._inverse_time import (
    InverseExponentialTimeDecayLR,
    InverseSquareRootDecayLR,
)
from torchtally.optim.lr_scheduler._lambda import LambdaLR, MultiplicativeLR
from torchtally.optim.lr_scheduler._one_cycle import OneCycleLR
from torchtally.optim.lr_scheduler._polynomial import LinearLR, PolynomialLR
from torchtally.optim.lr_scheduler._scale_per_param import ScalePerParamLR
from torchtally.optim.lr_scheduler._step import MultiStepLR, PiecewiseConstantLR, StepLR
from torchtally.optim.lr_scheduler._warm_restarts import CosineAnnealingWarmRestarts

__all__ = ["SCHEDULERS", "configure_lr_scheduler"]

#: The schedulers a config dict can name, by class name. The composites take schedulers,
#: so a config builds them from a list instead.
SCHEDULERS: dict[str, type[LRScheduler]] = {
    cls.__name__: cls
    for cls in (
        ConstantLR,
        CosineAnnealingLR,
        CosineAnnealingWarmRestarts,
        CosineDecayLR,
        CyclicLR,
        ExponentialLR,
        InverseExponentialTimeDecayLR,
        InverseSquareRootDecayLR,
        LambdaLR,
        LinearLR,
        MultiStepLR,
        MultiplicativeLR,
        OneCycleLR,
        PiecewiseConstantLR,
        PolynomialLR,
        StepLR,
    )
}
_CHAINED = ("chainedlr", "chainedscheduler", "chained")
_SEQUENTIAL = ("sequentiallr", "sequential")


def _scheduler_class(name: Any) -> type[LRScheduler]:
    """Look a name up case-insensitively, with or without the "LR" suffix ("Linear")."""
    if isinstance(name, str):
        wanted = name.lower()
        for cls_name, cls in SCHEDULERS.items():
            if wanted in (cls_name.lower(), cls_name.lower().removesuffix("lr")):
                return cls
    valid = ", ".join(sorted(SCHEDULERS, key=str.lower))
    raise ValueError(
        "Key `scheduler` must name one of: "
        f"{valid} (case-insensitive, the 'LR' suffix optional). Received: scheduler={name!r}"
    )


def _accepted(cls: type[LRScheduler]) -> list[str]:
    names = [
        n for n in inspect.signature(cls.__init__).parameters if n not in ("self", "optimizer")
    ]
    return [*names, "param_group_tags"]


def _split(config: Any, where: str) -> tuple[type[LRScheduler], dict[str, Any]]:
    """The class a dict `{"scheduler": name, **kwargs}` names, and a copy of its kwargs."""
    if not isinstance(config, dict) or "scheduler" not in config:
        raise ValueError(
            f"Argument `{where}` must be a dict with the key 'scheduler'. Received: {config!r}"
        )
    kwargs = dict(config)
    return _scheduler_class(kwargs.pop("scheduler")), kwargs


#: Old cstorch schedule spellings, for each argument that replaced them; cstorch refuses them
#: ("no longer supported"), and so do we, naming the replacement.
RENAMED: dict[str, tuple[str, ...]] = {
    "total_iters": ("steps", "decay_steps"),
    "initial_learning_rate": ("learning_rate", "base_lr"),
    "base_lr": ("learning_rate", "initial_learning_rate"),
    "learning_rates": ("values",),
    "milestones": ("boundaries",),
}


def _renamed(key: str, accepted: list[str]) -> str | None:
    for name in accepted:
        if key in RENAMED.get(name, ()) or (key == name.lower() and key != name):
            return name
    return None


def _construct(
    optimizer: torch.optim.Optimizer, cls: type[LRScheduler], kwargs: dict[str, Any], where: str
) -> LRScheduler:
    accepted = _accepted(cls)
    unknown = sorted(set(kwargs) - set(accepted))
    if unknown:
        hints = "".join(
            f"; give `{new}` instead of `{key}`"
            for key in unknown
            if (new := _renamed(key, accepted)) is not None
        )
        raise ValueError(
            f"Argument `{where}` has keys {cls.__name__} does not take: {unknown}{hints}. "
            f"Accepted: {', '.join(accepted)}"
        )
    parameters = inspect.signature(cls.__init__).parameters
    missing = [
        n
        for n, p in parameters.items()
        if n not in ("self", "optimizer")
        and p.default is inspect.Parameter.empty
        and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        and n not in kwargs
    ]
    if missing:
        raise ValueError(
            f"Argument `{where}` lacks keys {cls.__name__} needs: {missing}. "
            f"Received keys: {sorted(kwargs)}"
        )
    return cls(optimizer, **kwargs)


def _build(optimizer: torch.optim.Optimizer, config: Any, where: str) -> LRScheduler:
    """One scheduler from a dict `{"scheduler": name, **kwargs}`."""
    cls, kwargs = _split(config, where)
    return _construct(optimizer, cls, kwargs, where)


def _main_scheduler(configs: list[Any]) -> str:
    """Pop every `main_scheduler` key; they must agree. Default: SequentialLR."""
    names = {
        c.pop("main_scheduler") for c in configs if isinstance(c, dict) and "main_scheduler" in c
    }
    if len(names) > 1:
        raise ValueError(
            f"Key `main_scheduler` must have one value across the list. Received: {sorted(names)}"
        )
    name = names.pop() if names else "SequentialLR"
    if not isinstance(name, str) or name.lower() not in _CHAINED + _SEQUENTIAL:
        raise ValueError(
            "Key `main_scheduler` must be 'SequentialLR' or 'ChainedLR'. "
            f"Received: main_scheduler={name!r}"
        )
    return name


def _sequential(optimizer: torch.optim.Optimizer, configs: list[Any]) -> SequentialLR:
    """Each entry runs for its `total_iters` steps; the last may omit it."""
    schedulers, milestones, start = [], [], 0
    for index, config in enumerate(configs):
        where = f"learning_rate[{index}]"
        cls, kwargs = _split(config, where)
        # A schedule without a length of its own (StepLR) still has one in the sequence.
        span = (
            kwargs.get("total_iters")
            if "total_iters" in _accepted(cls)
            else kwargs.pop("total_iters", None)
        )
        schedulers.append(_construct(optimizer, cls, kwargs, where))
        if index < len(configs) - 1:
            if not isinstance(span, int) or isinstance(span, bool) or span < 1:
                raise ValueError(
                    f"Argument `{where}` must have the key 'total_iters', an integer >= 1 (how "
                    f"long it runs in the sequence). Received: total_iters={span!r}"
                )
            start += span
            milestones.append(start)
    return SequentialLR(optimizer, schedulers, milestones)


def configure_lr_scheduler(
    optimizer: torch.optim.Optimizer, learning_rate: Any, adjust_learning_rate: Any = None
) -> LRScheduler:
    """Build a scheduler from a learning-rate config, as `cstorch.optim.configure_lr_scheduler`.

    - A number: `ConstantLR` at that rate.
    - A dict: `{"scheduler": name, **kwargs}`, the name case-insensitive with the "LR" suffix
      optional ("Linear", "CosineDecay"); the other keys are the scheduler's arguments.
    - A list of such dicts: a `SequentialLR`, each entry running for its `total_iters` steps
      (the last may omit it), unless an entry has `"main_scheduler": "ChainedLR"`, which gives a
      `ChainedScheduler`. A list of one dict is that scheduler alone.

    The config is copied, never modified. With `adjust_learning_rate` (cstorch's per-layer
    scaling config), the scheduler is wrapped in `ScalePerParamLR`, which scales each
    parameter group's rate by the group's `adjust_learning_rate` entry.

    Args:
        optimizer: The optimizer whose learning rates are scheduled.
        learning_rate: The config.
        adjust_learning_rate: cstorch's per-parameter scaling config; when given (truthy),
            the groups' `adjust_learning_rate` factors apply.

    Returns:
        The scheduler.

    Example:
        >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
        >>> warmup = {"scheduler": "Linear", "initial_learning_rate": 0.0,
        ...           "end_learning_rate": 0.1, "total_iters": 10}
        >>> decay = {"scheduler": "CosineDecay", "initial_learning_rate": 0.1,
        ...          "end_learning_rate": 0.0, "total_iters": 90}
        >>> type(configure_lr_scheduler(opt, [warmup, decay])).__name__
        'SequentialLR'
    """
    scheduler = _configure(optimizer, learning_rate)
    if adjust_learning_rate:
        return ScalePerParamLR(optimizer, scheduler)
    return scheduler


def _configure(optimizer: torch.optim.Optimizer, learning_rate: Any) -> LRScheduler:
    config = copy.deepcopy(learning_rate)
    if isinstance(config, str):
        with contextlib.suppress(ValueError):
            config = float(config)  # a numeric string, as YAML 1.1 reads "1e-3"
    if isinstance(config, (int, float)) and not isinstance(config, bool):
        return ConstantLR(optimizer, float(config))
    if isinstance(config, dict):
        return _build(optimizer, config, "learning_rate")
    if isinstance(config, (list, tuple)) and config:
        configs = list(config)
        main = _main_scheduler(configs)
        if main.lower() in _CHAINED:
            schedulers = [
                _build(optimizer, c, f"learning_rate[{i}]") for i, c in enumerate(configs)
            ]
            return schedulers[0] if len(schedulers) == 1 else ChainedScheduler(schedulers)
        if len(configs) == 1:
            return _build(optimizer, configs[0], "learning_rate[0]")
        return _sequential(optimizer, configs)
    raise ValueError(
        "Argument `learning_rate` must be a number, a dict with the key 'scheduler', or a "
        f"non-empty list of such dicts. Received: learning_rate={learning_rate!r}"
    )
