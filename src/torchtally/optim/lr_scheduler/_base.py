"""The `LRScheduler` base class: learning rates in closed form of a step-count tensor.

A torch scheduler keeps its epoch as a Python int and often updates the rate recursively, so a
traced step would either bake in one value or recompile every step. Here the step count is a
0-dim int64 tensor on the optimizer's device, the schedule is a formula of it written with
tensor operations (`_get_closed_form_lr`), and `step()` writes the result into the
optimizer's learning-rate tensors in place. Inside a compiled step nothing is read back to
the host, and a CUDA graph replays with the rate it computes on the device.
"""

from __future__ import annotations

import functools
import weakref
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, cast

import torch
from torch import Tensor

from torchtally._errors import check_int
from torchtally.optim._base import SCALAR_DTYPE, Optimizer
from torchtally.optim.lr_scheduler._checks import check_rate

__all__ = ["LRScheduler", "scheduler_device"]

# The constructors `LRScheduler.__init_subclass__` has given the `param_group_tags` keyword
# (a class may reuse another's constructor, already given it).
_TAKES_PARAM_GROUP_TAGS: weakref.WeakSet[Callable[..., None]] = weakref.WeakSet()


def scheduler_device(optimizer: torch.optim.Optimizer) -> torch.device:
    """The device of the optimizer's learning rates (or first parameter): where a scheduler
    keeps its step count and constants. Raises unless `optimizer` is an optimizer."""
    if not isinstance(optimizer, torch.optim.Optimizer):
        raise ValueError(
            "Argument `optimizer` must be a torch.optim.Optimizer. "
            f"Received: optimizer={optimizer!r}"
        )
    for group in optimizer.param_groups:
        if isinstance(group["lr"], Tensor):
            return group["lr"].device
        if group["params"]:
            return cast(torch.device, group["params"][0].device)
    return torch.device("cpu")


class LRScheduler(torch.optim.lr_scheduler.LRScheduler, ABC):
    """Base class of torchtally's schedulers (`cstorch.optim.lr_scheduler.LRScheduler`).

    Subclasses set their hyperparameters, call `super().__init__`, and implement
    `_get_closed_form_lr()`: the rate at step `self.last_epoch` (a 0-dim int64 tensor) as a 0-dim
    tensor, with tensor operations only (`torch.where`, not `if`). Every parameter group gets
    the same rate. Construction takes the first step, so the rate of step 0 is set at once; call
    `step()` after each `optimizer.step()`, inside the compiled step or outside it.

    With an optimizer whose rates are Python floats (a `torch.optim` one), `step()` writes a
    float, which reads the value back to the host; torchtally's optimizers hold tensors.

    Args:
        optimizer: The optimizer whose learning rates are scheduled.
        total_iters: How many steps the schedule spans (None: unbounded). `SequentialLR` and
            `configure_lr_scheduler` read it.
        last_epoch: The step count before construction; -1 starts a new schedule.

    Example:
        >>> class Halving(LRScheduler):
        ...     def __init__(self, optimizer, initial_learning_rate):
        ...         self.initial_learning_rate = initial_learning_rate
        ...         super().__init__(optimizer)
        ...     def _get_closed_form_lr(self):
        ...         return self.initial_learning_rate * 0.5 ** self.last_epoch.float()
        >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
        >>> scheduler = Halving(opt, 1.0)
        >>> scheduler.step()
        >>> scheduler.get_last_lr()
        [tensor(0.5000)]
    """

    #: The rate the schedule starts from, set by subclasses; None for one that does not say (a
    #: custom schedule): it then cannot scale a `ChainedScheduler`, and a composite that starts
    #: with it says None too. The built-in schedules always set it, and narrow it to `float`.
    initial_learning_rate: float | None = None
    #: The parameter-group entry the schedule sets (cstorch's name): "lr" here,
    #: "weight_decay" for the schedulers of `torchtally.optim.weight_decay_scheduler`.
    param_group_key: str = "lr"
    #: The tags of the parameter groups this scheduler sets (cstorch's `param_group_tags`,
    #: a keyword of every subclass's constructor); None: every group.
    param_group_tags: set[Any] | None = None
    last_epoch: Tensor  # type: ignore[assignment]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # Every scheduler takes cstorch's `param_group_tags` keyword without repeating it in
        # each constructor: the subclass's own arguments stay as they are.
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        if init is None or init in _TAKES_PARAM_GROUP_TAGS:
            return

        @functools.wraps(init)
        def wrapped(self: LRScheduler, *args: Any, param_group_tags: Any = None, **kw: Any) -> None:
            # A subclass's constructor calls its parent's, which is wrapped too and passes no
            # tags: only the outermost call, the caller's, sets them.
            if param_group_tags is not None:
                self.param_group_tags = _tag_set(param_group_tags)
            init(self, *args, **kw)

        _TAKES_PARAM_GROUP_TAGS.add(wrapped)
        cls.__init__ = wrapped  # type: ignore[method-assign]

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        total_iters: int | None = None,
        last_epoch: int = -1,
    ) -> None:
        self.device = scheduler_device(optimizer)
        check_int("total_iters", total_iters, 1, allow_none=True)
        check_int("last_epoch", last_epoch, -1)
        self.optimizer = optimizer
        if self.param_group_tags is not None and not any(
            self.applies_to(group) for group in optimizer.param_groups
        ):
            raise ValueError(
                f"Argument `param_group_tags` matches no parameter group's `tags`. "
                f"Received: param_group_tags={sorted(map(str, self.param_group_tags))}"
            )
        self.total_iters = total_iters
        self.last_epoch = torch.tensor(last_epoch, dtype=torch.int64, device=self.device)
        self._last_lr: list[float | Tensor] = []
        self.step()

    @property
    def span(self) -> int:
        """`total_iters` of a schedule that has a length (every schedule that divides by it).

        Raises:
            ValueError: The schedule is unbounded (`total_iters=None`).
        """
        if self.total_iters is None:
            raise ValueError(f"{type(self).__name__} is unbounded: it has no total_iters")
        return self.total_iters

    @abstractmethod
    def _get_closed_form_lr(self) -> Tensor:
        """The learning rate at step `self.last_epoch`, as a 0-dim tensor."""

    def step(self, epoch: int | None = None) -> None:
        """Advance the step count by one (or set it to `epoch`) and set the optimizer's rates.

        Args:
            epoch: Jump to this step count instead of advancing (torch's deprecated form).
        """
        if epoch is None:
            self.last_epoch.add_(1)
        else:
            check_int("epoch", epoch, 0)
            self.last_epoch.fill_(epoch)
        self._apply_lr()

    def get_last_lr(self) -> list[float | Tensor]:
        """The rates set by the latest `step()`, one 0-dim tensor per parameter group.

        Returns:
            The learning rates (not the optimizer's tensors: writing to them changes nothing
            there).
        """
        return self._last_lr

    def get_last_value(self) -> list[float | Tensor]:
        """cstorch's name of `get_last_lr()`: the values set by the latest `step()`.

        Returns:
            One 0-dim tensor per parameter group.
        """
        return self._last_lr

    def get_lr(self) -> list[float | Tensor]:
        """The rates at the current step count, one per parameter group.

        Returns:
            The learning rates.
        """
        lr = self._closed_form_checked()
        return [lr for _ in self.optimizer.param_groups]

    def state_dict(self) -> dict[str, Any]:
        """The step count, which with the constructor's arguments fixes the schedule.

        Returns:
            `{"last_epoch": int}` (a host read: call it outside the step).
        """
        return {"last_epoch": int(self.last_epoch)}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the step count and set the optimizer's rates to match it.

        Args:
            state_dict: As returned by `state_dict()`.
        """
        if "last_epoch" not in state_dict:
            raise ValueError(
                "Argument `state_dict` must contain the key 'last_epoch'. "
                f"Received keys: {sorted(state_dict)}"
            )
        last_epoch = state_dict["last_epoch"]
        # Cerebras saves its whole __dict__ with `last_epoch` a 0-dim integer tensor; the
        # other entries are its constructor arguments, which ours already has.
        if (
            isinstance(last_epoch, Tensor)
            and last_epoch.numel() == 1
            and not last_epoch.dtype.is_floating_point
            and last_epoch.dtype != torch.bool
        ):
            last_epoch = int(last_epoch)
        check_int("state_dict['last_epoch']", last_epoch, 0)
        self.last_epoch.fill_(last_epoch)
        self._apply_lr()

    def _float_epoch(self) -> Tensor:
        """The step count as a float32 tensor, for the formulas."""
        return self.last_epoch.to(SCALAR_DTYPE)

    def _full(self, value: float) -> Tensor:
        """A 0-dim float32 tensor on the device, filled by a kernel (no host-to-device copy)."""
        return torch.full((), value, dtype=SCALAR_DTYPE, device=self.device)

    def _closed_form_checked(self) -> Tensor:
        lr = self._get_closed_form_lr()
        if not isinstance(lr, Tensor):
            raise TypeError(
                f"{type(self).__name__}._get_closed_form_lr must return a tensor. Received: {lr!r}"
            )
        return lr.detach().to(SCALAR_DTYPE).reshape(())

    def applies_to(self, group: dict[str, Any]) -> bool:
        """Whether this scheduler sets `group`'s rate: always without `param_group_tags`, else
        when the group's `tags` share one with them (an untagged group has the tag None), as
        cstorch decides.

        Args:
            group: A parameter group of the optimizer.
        """
        if self.param_group_tags is None:
            return True
        return bool(self.param_group_tags & (_tag_set(group.get("tags")) or {None}))

    def _apply_lr(self) -> None:
        lr = self._closed_form_checked()
        for group in self.optimizer.param_groups:
            if self.applies_to(group):
                self._write(group, lr)
        self._last_lr = [lr for _ in self.optimizer.param_groups]

    def _write(self, group: dict[str, Any], value: Tensor) -> None:
        """Set `group[self.param_group_key]` to `value`: in place when it is a tensor, so a
        compiled step that reads it sees the new value without recompiling."""
        key = self.param_group_key
        if key == "weight_decay" and isinstance(self.optimizer, Optimizer):
            key = self.optimizer.weight_decay_key(group)
        current = group.get(key)
        if isinstance(current, Tensor):
            current.copy_(value)
        elif key == "lr":
            group[key] = float(value)
        else:
            # The first scheduled write turns the Python number into the tensor that later
            # steps update in place (an optimizer then applies it without reading it).
            group[key] = value.detach().clone()


def _tag_set(tags: Any) -> set[Any] | None:
    """cstorch's tag forms: None, one tag, or a list/tuple/set of tags."""
    if tags is None:
        return None
    if isinstance(tags, (list, tuple, set, frozenset)):
        return set(tags)
    return {tags}


class StartEndLR(LRScheduler):
    """Base of the schedules that go from `initial_learning_rate` to `end_learning_rate` over
    `total_iters` steps, then hold (abstract: subclasses add `_get_closed_form_lr`, and set
    their own attributes before calling this constructor, which takes the first step)."""

    initial_learning_rate: float

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        initial_learning_rate: float,
        end_learning_rate: float,
        total_iters: int,
    ) -> None:
        self.initial_learning_rate = check_rate("initial_learning_rate", initial_learning_rate)
        self.end_learning_rate = check_rate("end_learning_rate", end_learning_rate)
        check_int("total_iters", total_iters, 1)
        super().__init__(optimizer, total_iters=total_iters)
