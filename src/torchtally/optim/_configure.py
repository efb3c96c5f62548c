"""`configure_optimizer`: build an optimizer from its name and keyword arguments (a config)."""

from __future__ import annotations

import inspect
from typing import Any

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
from torchtally.optim._radam import RAdam
from torchtally.optim._rmsprop import RMSprop
from torchtally.optim._rprop import Rprop
from torchtally.optim._sgd import SGD

__all__ = ["OPTIMIZERS", "configure_optimizer"]

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


def _check_kwargs(cls: type[Optimizer], kwargs: dict[str, Any]) -> None:
    accepted = [
        n for n in inspect.signature(cls.__init__).parameters if n not in ("self", "params")
    ]
    unknown = sorted(set(kwargs) - set(accepted))
    if unknown:
        raise ValueError(
            f"{cls.__name__} got unexpected arguments {unknown}. Accepted: {', '.join(accepted)}"
        )


def configure_optimizer(optimizer_type: str, params: ParamsT, **kwargs: Any) -> Optimizer:
    """Build an optimizer from its name, as `cstorch.optim.configure_optimizer` does.

    `learning_rate` is accepted as another name for `lr` when it is a number; a schedule
    belongs in `configure_lr_scheduler`.

    Args:
        optimizer_type: The class name, any case: "sgd", "AdamW", ...
        params: The model parameters or parameter groups.
        **kwargs: The optimizer's arguments.

    Returns:
        The optimizer.

    Example:
        >>> import torch
        >>> model = torch.nn.Linear(2, 1)
        >>> opt = configure_optimizer("sgd", model.parameters(), lr=0.1, momentum=0.9)
        >>> type(opt).__name__
        'SGD'
    """
    cls = _optimizer_class(optimizer_type)
    if "learning_rate" in kwargs:
        learning_rate = kwargs.pop("learning_rate")
        if "lr" in kwargs:
            raise ValueError(
                "Arguments `lr` and `learning_rate` name the same thing; pass only one. "
                f"Received: lr={kwargs['lr']!r}, learning_rate={learning_rate!r}"
            )
        if isinstance(learning_rate, (dict, list, tuple)):
            raise ValueError(
                "Argument `learning_rate` must be a number here; pass a schedule to "
                f"configure_lr_scheduler instead. Received: learning_rate={learning_rate!r}"
            )
        kwargs["lr"] = learning_rate
    _check_kwargs(cls, kwargs)
    return cls(params, **kwargs)
