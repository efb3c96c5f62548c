"""The `Optimizer` base class: all state allocated up front, a step that never syncs the host.

This is the cstorch optimizer contract on stock PyTorch. `preinitialize` creates every state
tensor when the optimizer is built, so a traced step (torch.compile, CUDA graphs) only updates
tensors in place and never branches on a tensor's value. Each parameter group's learning rate
is a 0-dim float32 tensor on the parameters' device: a scheduler writes it in place, and the
compiled step reads it as an input, so changing the rate never recompiles or re-records.
(Not float64, even for double parameters: torch 2.13's compiler drops in-place writes to 0-dim
float64 CPU tensors, taking them for Python scalars.)
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from typing import Any, cast

import torch
from torch import Tensor
from torch.optim.optimizer import ParamsT

from torchtally.optim._checks import check_bool, check_lr

__all__ = ["SCALAR_DTYPE", "Optimizer", "one_scalar"]

# Steps and learning rates: every accelerator has float32, it counts steps exactly to 2**24, and
# torch.compile keeps in-place writes to it (see the module docstring).
SCALAR_DTYPE = torch.float32


class Optimizer(torch.optim.Optimizer, ABC):
    """Base class of torchtally's optimizers (`cstorch.optim.Optimizer`).

    Subclasses implement three methods:

    - `preinitialize()` creates the state tensors. It is called at the end of `__init__`, and
      again after `add_param_group` or `load_state_dict`, so it must only create the entries a
      parameter does not have yet (`self.init_state(p, name, factory)` does that).
    - `step(closure=None)` updates parameters and state with tensor operations only: no Python
      `if` on a tensor's value (use `torch.where`). Loops over the parameters are static, and so
      is a test of `p.grad is None`.
    - `state_names_to_sparsify()` lists the state entries shaped like their parameter, which a
      sparsity method must mask together with the weights.

    Args:
        params: Parameters or parameter groups, as for `torch.optim.Optimizer`.
        defaults: Default hyperparameters of each group; must contain `lr`.
        enable_global_step: Keep a float32 step counter `state[p]["step"]` per parameter,
            advanced by `increment_global_step(p)`.

    Example:
        >>> class PlainSGD(Optimizer):
        ...     def __init__(self, params, lr=0.1):
        ...         super().__init__(params, {"lr": lr})
        ...     def preinitialize(self):
        ...         pass
        ...     def state_names_to_sparsify(self):
        ...         return []
        ...     @torch.no_grad()
        ...     def step(self, closure=None):
        ...         for group, p, grad in self.params_with_grad():
        ...             p.sub_(group["lr"] * grad)
        >>> w = torch.ones(2, requires_grad=True)
        >>> opt = PlainSGD([w])
        >>> w.sum().backward()
        >>> opt.step()
        >>> w
        tensor([0.9000, 0.9000], requires_grad=True)
    """

    def __init__(
        self, params: ParamsT, defaults: dict[str, Any], enable_global_step: bool = False
    ) -> None:
        if "lr" not in defaults:
            raise ValueError(
                f"Argument `defaults` must contain the key 'lr'. Received keys: {sorted(defaults)}"
            )
        self.enable_global_step = check_bool("enable_global_step", enable_global_step)
        self._preinitialized = False
        super().__init__(params, defaults)
        self._finish_state(range(len(self.param_groups)))
        self._preinitialized = True

    @abstractmethod
    def preinitialize(self) -> None:
        """Create every state tensor a parameter does not have yet."""

    @abstractmethod
    def step(self, closure: Callable[[], float] | None = None) -> float | None:  # type: ignore[override]
        """Update every parameter that has a gradient, with tensor operations only.

        Args:
            closure: Optional function that re-evaluates the model and returns the loss.

        Returns:
            The closure's loss, or None.
        """

    @abstractmethod
    def state_names_to_sparsify(self) -> list[str]:
        """Names of the state entries shaped like their parameter."""

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a parameter group, and create its learning-rate tensor and state at once.

        Args:
            param_group: The group: `params` and any hyperparameters overriding the defaults.
        """
        params = param_group["params"]
        # Listed here (a generator can be read once) so a bad group is refused before torch
        # appends it; a set is left for torch to refuse (its order is not reproducible).
        if isinstance(params, Tensor):
            params = [params]
        elif not isinstance(params, set):
            params = list(params)
        for p in params:
            if isinstance(p, Tensor) and not p.is_floating_point():
                raise ValueError(
                    "Argument `params` must hold real floating-point tensors. "
                    f"Received: a tensor of dtype {p.dtype}"
                )
        super().add_param_group({**param_group, "params": params})
        if self._preinitialized:
            self._finish_state([len(self.param_groups) - 1])

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a state dict (ours or the matching `torch.optim` class's): state tensors are
        copied onto their parameter's device in the dtype `preinitialize` gave them, and missing
        hyperparameters and state entries are created.

        Args:
            state_dict: As returned by `state_dict()`.
        """
        dtypes = {
            (p, name): value.dtype
            for p, state in self.state.items()
            for name, value in state.items()
            if isinstance(value, Tensor)
        }
        super().load_state_dict(state_dict)
        for group in self.param_groups:
            # A torch.optim checkpoint lacks our extra hyperparameters (correct_bias, ...).
            for key, default in self.defaults.items():
                group.setdefault(key, default)
            # A scheduled weight decay is a tensor that its scheduler rewrites in place: never
            # alias the loaded dict's (the rate's tensor is renewed in `_finish_state`).
            for key in _SCHEDULED_KEYS[1:]:
                decay = group.get(key)
                if isinstance(decay, Tensor):
                    device = group["params"][0].device if group["params"] else decay.device
                    group[key] = decay.detach().to(device, SCALAR_DTYPE).reshape(()).clone()
        for p, state in self.state.items():
            for name, value in state.items():
                if isinstance(value, Tensor):
                    # Copied: torch would alias the dict's tensors, and two optimizers loaded
                    # from one dict in memory would then share their state. Cast back: torch
                    # casts float32 scalars (ASGD's eta) to the parameter's dtype.
                    dtype = dtypes.get((p, name), value.dtype)
                    state[name] = value.to(p.device, dtype=dtype, copy=True)
        self._finish_state(range(len(self.param_groups)))

    def state_dict(self) -> dict[str, Any]:
        """The state dict of `torch.optim.Optimizer`, with each learning-rate tensor copied so
        that later steps do not change a saved dict.

        Returns:
            A dict with keys `state` and `param_groups`.
        """
        saved = super().state_dict()
        for group in saved["param_groups"]:
            for key in _SCHEDULED_KEYS:
                if isinstance(group.get(key), Tensor):
                    group[key] = group[key].detach().clone()
        return saved

    def weight_decay_key(self, group: dict[str, Any]) -> str:
        """The group entry a weight-decay scheduler sets: `"weight_decay"`, unless the
        optimizer keeps its scheduled decay apart (Adam with an L2 `weight_decay`).

        Args:
            group: A parameter group.

        Returns:
            The key.
        """
        return "weight_decay"

    def init_zero_states(self, *names: str) -> None:
        """Create zero state entries `names`, shaped like their parameter, for every parameter
        (the usual `preinitialize`).

        Args:
            *names: The state entries' names.
        """
        for group in self.param_groups:
            for p in group["params"]:
                for name in names:
                    self.init_state(p, name, torch.zeros_like)

    def init_state(self, p: Tensor, name: str, factory: Callable[[Tensor], Tensor]) -> Tensor:
        """Create `state[p][name]` as `factory(p)` unless it exists; return the entry.

        Args:
            p: The parameter.
            name: The state entry's name.
            factory: Builds the initial tensor from the parameter (e.g. `torch.zeros_like`).

        Returns:
            The state tensor.
        """
        state = self.state[p]
        if name not in state:
            state[name] = factory(p)
        return cast(Tensor, state[name])

    def increment_global_step(self, p: Tensor) -> Tensor:
        """Add one to `state[p]["step"]` in place and return it (needs `enable_global_step`).

        Args:
            p: The parameter.

        Returns:
            The step counter after the increment.
        """
        step = self.state[p]["step"]
        step.add_(1)
        return cast(Tensor, step)

    def params_with_grad(self) -> list[tuple[dict[str, Any], Tensor, Tensor]]:
        """The `(group, parameter, gradient)` triples of the parameters that have a gradient.

        The gradient is negated for groups with `maximize=True`. This reads no tensor value, so
        it is safe in a traced step.

        Returns:
            One triple per parameter with a gradient, in parameter-group order.
        """
        triples = []
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if p.grad.is_sparse:
                    raise RuntimeError(f"{type(self).__name__} does not support sparse gradients.")
                if torch.compiler.is_compiling() and _is_cpu_double_scalar(p):
                    raise RuntimeError(_CPU_DOUBLE_SCALAR)
                grad = -p.grad if group.get("maximize", False) else p.grad
                triples.append((group, p, grad))
        return triples

    @staticmethod
    def scalar_dtype(p: Tensor) -> torch.dtype:
        """The dtype for a parameter's scalar factors (rate, bias corrections): float64 for
        float64 parameters, else float32. Forming `1 - lr * weight_decay` in float32 for a double
        parameter would cost it seven digits a step.

        Args:
            p: The parameter.

        Returns:
            The dtype.
        """
        return torch.float64 if p.dtype == torch.float64 else SCALAR_DTYPE

    def lr_for(self, group: dict[str, Any], p: Tensor) -> Tensor:
        """The group's learning rate in `scalar_dtype(p)` (a no-op cast for float32).

        Args:
            group: The parameter group.
            p: The parameter.

        Returns:
            A 0-dim tensor.
        """
        return torch.as_tensor(group["lr"], dtype=self.scalar_dtype(p), device=p.device)

    def step_for(self, p: Tensor) -> Tensor:
        """Advance `state[p]["step"]` and return it in `scalar_dtype(p)`.

        Args:
            p: The parameter.

        Returns:
            A 0-dim tensor: the step count after the increment.
        """
        return self.increment_global_step(p).to(self.scalar_dtype(p))

    @staticmethod
    def evaluate_closure(closure: Callable[[], float] | None) -> float | None:
        """Run `closure` with gradients enabled, as `torch.optim` does.

        Args:
            closure: The closure, or None.

        Returns:
            Its loss, or None.
        """
        if closure is None:
            return None
        with torch.enable_grad():
            return closure()

    def _finish_state(self, new_groups: Iterable[int]) -> None:
        """Fresh learning-rate tensors for the new groups, global steps, then the subclass's
        state. Fresh tensors: never alias a caller's tensor or a loaded state dict's."""
        for index in new_groups:
            group = self.param_groups[index]
            params = group["params"]
            device = params[0].device if params else torch.device("cpu")
            group["lr"] = _lr_tensor(group["lr"], device, index)
        if self.enable_global_step:
            for group in self.param_groups:
                for p in group["params"]:
                    self.init_state(p, "step", _zero_scalar)
        self.preinitialize()


# Group entries a scheduler rewrites in place (tensors once scheduled).
_SCHEDULED_KEYS = ("lr", "weight_decay", "scheduled_weight_decay")

_CPU_DOUBLE_SCALAR = (
    "Argument `params` holds a 0-dim float64 CPU tensor, which torch.compile (torch 2.13) takes "
    "for a Python float: its in-place update would be silently dropped. Give the parameter "
    "shape (1,), make it float32, or step this optimizer outside torch.compile."
)


def _is_cpu_double_scalar(p: Tensor) -> bool:
    return p.dim() == 0 and p.dtype == torch.float64 and p.device.type == "cpu"


def _zero_scalar(p: Tensor) -> Tensor:
    return torch.zeros((), dtype=SCALAR_DTYPE, device=p.device)


def one_scalar(p: Tensor) -> Tensor:
    """A 0-dim float32 one on `p`'s device (initial state of step-size style entries).

    Args:
        p: The parameter.

    Returns:
        The tensor.

    Example:
        >>> one_scalar(torch.zeros(3))
        tensor(1.)
    """
    return torch.ones((), dtype=SCALAR_DTYPE, device=p.device)


def _lr_tensor(lr: Any, device: torch.device, group_index: int) -> Tensor:
    """A fresh 0-dim float32 tensor holding a group's learning rate (checked once, eagerly)."""
    value = check_lr(lr, f"param_groups[{group_index}]['lr']" if group_index else "lr")
    if isinstance(lr, Tensor):
        return lr.detach().to(device=device, dtype=SCALAR_DTYPE).reshape(()).clone()
    return torch.tensor(value, dtype=SCALAR_DTYPE, device=device)
