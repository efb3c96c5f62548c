"""`configure_optimizer`: build an optimizer from its name and keyword arguments (a config)."""

from __future__ import annotations

import inspect
from typing import Any

from torch import nn
from torch.optim.optimizer import ParamsT

from torchtally.optim._adadelta import Adadelta
from torchtally.optim._adafactor import Adafactor
from torchtally.optim._adagrad import Adagrad
from torchtally.optim._adam import Adam, AdamW
from torchtally.optim._adamax import Adamax
from torchtally.optim._asgd import ASGD
from torchtally.optim._base import Optimizer
from torchtally.optim._lamb import Lamb
from torchtally.optim._lion import Lion
from torchtally.optim._muon import Muon
from torchtally.optim._nadam import NAdam
from torchtally.optim._param_groups import configure_param_groups
from torchtally.optim._radam import RAdam
from torchtally.optim._rmsprop import RMSprop
from torchtally.optim._rprop import Rprop
from torchtally.optim._sgd import SGD

__all__ = ["OPTIMIZERS", "RENAMED", "configure_optimizer"]

#: Every built-in optimizer, by its class name.
OPTIMIZERS: dict[str, type[Optimizer]] = {
    cls.__name__: cls
    for cls in (
        Adadelta,
        Adafactor,
        Adagrad,
        Adam,
        AdamW,
        Adamax,
        ASGD,
        Lamb,
        Lion,
        Muon,
        NAdam,
        RAdam,
        RMSprop,
        Rprop,
        SGD,
    )
}


def _optimizer_class(optimizer_type: Any) -> type[Optimizer]:
    if isinstance(optimizer_type, str):
        for name, cls in OPTIMIZERS.items():
            if name.lower() == optimizer_type.lower():
                return cls
    valid = ", ".join(sorted(OPTIMIZERS, key=str.lower))
    raise ValueError(
        f"Argument `optimizer_type` must name one of: {valid} (case-insensitive). "
        f"Received: optimizer_type={optimizer_type!r}"
    )


#: Old cstorch config spellings and the argument that replaced each; cstorch refuses them
#: ("no longer supported") rather than passing them on, and so do we.
RENAMED: dict[str, str] = {
    "weight_decay_rate": "weight_decay",
    "beta1": "betas",
    "beta2": "betas",
    "eps1": "eps",
    "eps2": "eps",
    "eta1": "etas",
    "eta2": "etas",
    "step_size_min": "step_sizes",
    "step_size_max": "step_sizes",
}


def _check_kwargs(cls: type[Optimizer], kwargs: dict[str, Any]) -> None:
    """Refuse an argument `cls` does not take: dropping it would train with the default in its
    place (Adam given `beta1`/`beta2` would run with betas (0.9, 0.999))."""
    accepted = [
        n for n in inspect.signature(cls.__init__).parameters if n not in ("self", "params")
    ]
    unknown = sorted(set(kwargs) - set(accepted))
    if not unknown:
        return
    renamed = sorted({RENAMED[k] for k in unknown if RENAMED.get(k) in accepted})
    hint = "".join(
        f"; give `{new}` instead of "
        + " and ".join(f"`{k}`" for k in unknown if RENAMED.get(k) == new)
        + (" (one pair)" if new in ("betas", "etas", "step_sizes") else "")
        for new in renamed
    )
    raise ValueError(
        f"Optimizer {cls.__name__} takes no argument{'s' * (len(unknown) > 1)} "
        f"{', '.join(repr(k) for k in unknown)}{hint}. Accepted: {', '.join(accepted)} (and "
        "`learning_rate` for lr, `optim_params`, `adjust_learning_rate`). Remove the other "
        "keys of a model-zoo optimizer section (loss scaling, gradient clipping) before "
        f"calling. Received: {sorted(kwargs)}"
    )


def _number(name: str, value: Any) -> float:
    """A rate given as a number or as a numeric string ("1e-3", as YAML 1.1 reads it)."""
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            pass
        raise ValueError(
            f"Argument `{name}` must be a number, a numeric string, or a schedule. "
            f"Received: {name}={value!r}"
        )
    return value  # type: ignore[no-any-return]


def configure_optimizer(
    optimizer_type: str, params: ParamsT | nn.Module, **kwargs: Any
) -> Optimizer:
    """Build an optimizer from its name, as `cstorch.optim.configure_optimizer` does.

    As cstorch: `learning_rate` is another name for `lr`, a number or a numeric string
    ("1e-3", as YAML gives it); when it is a schedule (a dict or list for
    `configure_lr_scheduler`), the optimizer starts at the schedule's first rate and the
    schedule is checked (build the scheduler itself with `configure_lr_scheduler`). Keys in a
    nested `optim_params` dict are arguments too. An argument the optimizer does not take is
    an error (as cstorch refuses its old spellings `beta1`/`beta2`, `weight_decay_rate`, ...,
    naming the new one): dropped, it would leave the default in its place. Given a model instead of parameters, its parameters are grouped
    by `configure_param_groups(model, kwargs)` first (weight decay off for biases and norms,
    `adjust_learning_rate` factors), as the model-zoo flows do; `adjust_learning_rate` is
    consumed there, not passed to the optimizer.

    Args:
        optimizer_type: The class name, any case: "sgd", "AdamW", ...
        params: The model parameters or parameter groups, or the model itself.
        **kwargs: The optimizer's arguments.

    Returns:
        The optimizer.

    Raises:
        ValueError: An unknown optimizer name, an argument the optimizer does not take, or a
            learning rate that is neither a number nor a schedule.

    Example:
        >>> import torch
        >>> model = torch.nn.Linear(2, 1)
        >>> opt = configure_optimizer("sgd", model.parameters(), lr=0.1, momentum=0.9)
        >>> type(opt).__name__
        'SGD'
    """
    cls = _optimizer_class(optimizer_type)
    kwargs = dict(kwargs)
    nested = kwargs.pop("optim_params", None)
    if nested is not None:
        if not isinstance(nested, dict):
            raise ValueError(
                f"Argument `optim_params` must be a dict. Received: optim_params={nested!r}"
            )
        clash = sorted(set(nested) & set(kwargs))
        if clash:
            raise ValueError(
                f"Arguments {clash} are given both in `optim_params` and directly; give each once."
            )
        kwargs.update(nested)
    if isinstance(params, nn.Module):
        params = configure_param_groups(params, kwargs)
    # Read by configure_param_groups (the model zoo removes it before building the optimizer).
    kwargs.pop("adjust_learning_rate", None)
    schedule = None
    if "learning_rate" in kwargs:
        learning_rate = kwargs.pop("learning_rate")
        if "lr" in kwargs:
            raise ValueError(
                "Arguments `lr` and `learning_rate` name the same thing; pass only one. "
                f"Received: lr={kwargs['lr']!r}, learning_rate={learning_rate!r}"
            )
        if isinstance(learning_rate, (dict, list, tuple)):
            schedule = learning_rate
            kwargs["lr"] = 0.0  # set from the schedule's step 0 below
        else:
            kwargs["lr"] = _number("learning_rate", learning_rate)
    if "lr" in kwargs:
        kwargs["lr"] = _number("lr", kwargs["lr"])
    _check_kwargs(cls, kwargs)
    optimizer = cls(params, **kwargs)
    if schedule is not None:
        # Built once so that a bad schedule fails here and the optimizer starts at the
        # schedule's first rate; the training loop builds its own with configure_lr_scheduler.
        from torchtally.optim.lr_scheduler import configure_lr_scheduler

        configure_lr_scheduler(optimizer, schedule)
    return optimizer
