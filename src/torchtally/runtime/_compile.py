"""`compile(model, backend)`: prepare a module for traced steps (it compiles nothing yet).

As in cstorch (and like `torch.compile`), the call only prepares: it moves the parameters to
the backend's device, wraps the module in DistributedDataParallel when the backend is
distributed, and freezes the parameter set: after it, assigning or registering a parameter on
the module raises, because traced steps and optimizers hold on to the parameters that exist now.
Values may still change in place (optimizer steps, `load_state_dict`).
"""

from __future__ import annotations

import weakref
from typing import Any, final

from torch import nn

from torchtally.runtime._backend import Backend, current_backend, set_current_backend
from torchtally.runtime._backend import backend as make_backend

__all__ = ["CompiledModel", "compile"]

# Frozen modules and their qualified names in the compiled model, for error messages.
_frozen: weakref.WeakKeyDictionary[nn.Module, str] = weakref.WeakKeyDictionary()
_hook_installed = [False]


@final
class CompiledModel:
    """A compiled module: call it like the module; other attributes are the module's.

    Args:
        module: The original module (its parameters are frozen).
        forward: What a call runs: the module, or its DistributedDataParallel wrapper.
        backend: The backend it was compiled for.

    Example:
        >>> compiled = compile(torch.nn.Linear(4, 2), "CPU")
        >>> compiled(torch.ones(1, 4)).shape
        torch.Size([1, 2])
        >>> compiled.eval() is compiled.module
        True
    """

    def __init__(self, module: nn.Module, forward: nn.Module, backend: Backend) -> None:
        self.module = module
        self.backend = backend
        self._forward = forward

    @property
    def device(self) -> Any:
        """The device the parameters live on."""
        return self.backend.device

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not self.backend.mixed_precision:
            return self._forward(*args, **kwargs)
        from torchtally.amp._precision import autocast

        with autocast(device_type=self.backend.device.type):
            return self._forward(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        # only reached for names the wrapper lacks: eval(), train(), state_dict(), ...
        if name.startswith("__") or name in ("module", "backend", "_forward"):
            raise AttributeError(name)  # no recursion while copy/pickle rebuild the wrapper
        return getattr(self.module, name)

    def __repr__(self) -> str:
        return f"CompiledModel({self.module!r}, backend={str(self.backend.backend_type)!r})"


def compile(model: nn.Module, backend: str | Backend | None = None) -> CompiledModel:
    """Prepare `model` for traced steps on `backend`.

    Args:
        model: The module, with its weights initialised (they are frozen from here on).
        backend: A `Backend`, a backend type ("CPU", "GPU") to create one, or None for the
            current backend (a CPU backend is created if there is none).

    Returns:
        A `CompiledModel`: callable like the module; it also forwards attribute access.

    Example:
        >>> from torchtally.runtime import backend
        >>> cpu = backend("CPU")
        >>> with cpu.device:
        ...     model = torch.nn.Linear(4, 2)
        >>> compiled_model = compile(model, cpu)
        >>> compiled_model(torch.ones(3, 4)).shape
        torch.Size([3, 2])
    """
    if not isinstance(model, nn.Module):
        raise TypeError(
            f"Argument `model` must be a torch.nn.Module. Received: model={type(model).__name__}"
        )
    target = _resolve(backend)
    model.to(target.device)
    forward = _distributed_wrapper(model, target) if target.is_distributed else model
    _freeze(model)
    set_current_backend(target)
    return CompiledModel(model, forward, target)


def _resolve(value: str | Backend | None) -> Backend:
    if isinstance(value, Backend):
        return value
    if isinstance(value, str):
        return make_backend(value)
    if value is None:
        return current_backend() or make_backend("CPU")
    raise TypeError(
        "Argument `backend` must be a Backend, a backend type string ('CPU', 'GPU') or None. "
        f"Received: backend={value!r}"
    )


def _distributed_wrapper(model: nn.Module, target: Backend) -> nn.Module:
    from torch.nn.parallel import DistributedDataParallel

    device_ids = [target.device.index] if target.device.type == "cuda" else None
    return DistributedDataParallel(model, device_ids=device_ids)


def _freeze(model: nn.Module) -> None:
    if not _hook_installed[0]:
        nn.modules.module.register_module_parameter_registration_hook(_refuse_registration)
        _hook_installed[0] = True
    for name, module in model.named_modules():
        _frozen[module] = name


def _refuse_registration(module: nn.Module, name: str, param: Any) -> None:
    prefix = _frozen.get(module)
    if prefix is None:
        return
    qualified = f"{prefix}.{name}" if prefix else name
    raise RuntimeError(
        f"Parameter `{qualified}` cannot be assigned or registered after `compile`: compiling "
        "a model freezes its parameters. Initialise the weights before calling compile, or "
        "change values in place (e.g. `with torch.no_grad(): param.copy_(new_value)`). "
        f"Received: a new parameter for `{qualified}` on {type(module).__name__}"
    )
