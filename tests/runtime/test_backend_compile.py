"""`backend(...)` and `compile(model, backend)`: devices, options, frozen parameters, DDP."""

from __future__ import annotations

import copy
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
import torch.distributed as dist
from torch import nn

from torchtally.runtime import Backend, CompiledModel, backend, compile, current_backend, trace
from torchtally.runtime._backend import set_current_backend


@pytest.fixture(autouse=True)
def _no_backend() -> Iterator[None]:
    set_current_backend(None)
    yield
    set_current_backend(None)


def test_cpu_backend_becomes_current_and_keeps_its_options() -> None:
    cpu = backend("cpu", max_checkpoints=3, artifact_dir="artifacts")
    assert isinstance(cpu, Backend) and current_backend() is cpu
    assert (cpu.backend_type, cpu.device, cpu.max_checkpoints) == ("CPU", torch.device("cpu"), 3)
    assert cpu.artifact_dir == Path("artifacts") and cpu.is_cpu and not cpu.is_csx
    assert cpu.compile_options is None
    assert backend("CPU", compile=True).compile_options == {}
    options = {"mode": "reduce-overhead", "fullgraph": True}
    assert backend("CPU", compile=options).compile_options == options


def test_backend_device_is_a_context_that_places_new_parameters() -> None:
    cpu = backend("CPU")
    with cpu.device:
        layer = nn.Linear(2, 2)
        assert torch.get_default_device() == cpu.device
    assert layer.weight.device == cpu.device


def test_backend_arguments_are_checked() -> None:
    with pytest.raises(
        ValueError,
        match=r"^Argument `backend_type` must be one of 'CPU', 'GPU'\. Received: backend_type='TPU'$",
    ):
        backend("TPU")
    with pytest.raises(ValueError, match="requires a Cerebras Wafer-Scale Cluster"):
        backend("CSX")
    with pytest.raises(TypeError, match="Argument `backend_type` must be a string"):
        backend(3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Argument `max_checkpoints` must be an integer >= 1"):
        backend("CPU", max_checkpoints=0)
    with pytest.raises(ValueError, match=r"Argument `compile` may only hold the torch\.compile"):
        backend("CPU", compile={"modes": "max-autotune"})
    with pytest.raises(ValueError, match="Argument `device_index` applies to the 'GPU' backend"):
        backend("CPU", device_index=0)
    assert current_backend() is None  # a failed call leaves no backend behind
    with pytest.raises(RuntimeError, match="No backend is current"):
        current_backend(raise_exception=True)


def test_gpu_backend_needs_cuda() -> None:
    if torch.cuda.is_available():
        gpu = backend("GPU", device_index=0)
        assert gpu.device == torch.device("cuda", 0) and gpu.is_gpu
    else:
        with pytest.raises(RuntimeError, match=r"'GPU' needs CUDA"):
            backend("GPU")


def test_compiled_model_calls_like_the_module_and_forwards_attributes() -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    x = torch.randn(5, 3)
    expected = model(x)
    cpu = backend("CPU")
    compiled = compile(model, cpu)
    assert isinstance(compiled, CompiledModel) and compiled.module is model
    torch.testing.assert_close(compiled(x), expected)
    assert compiled.eval() is model and not model.training
    assert list(compiled.state_dict()) == list(model.state_dict())
    assert compiled.device == cpu.device and current_backend() is cpu
    torch.testing.assert_close(copy.deepcopy(compiled)(x), expected)  # copies like a module


def test_compile_resolves_strings_and_the_current_backend() -> None:
    compile(nn.Linear(1, 1), "cpu")
    created = current_backend()
    assert created is not None and created.backend_type == "CPU"
    compile(nn.Linear(1, 1))
    assert current_backend() is created  # None means the current backend
    set_current_backend(None)
    compile(nn.Linear(1, 1))
    assert current_backend() is not None  # and a CPU backend when there is none
    with pytest.raises(TypeError, match="Argument `backend` must be a Backend"):
        compile(nn.Linear(1, 1), 5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"Argument `model` must be a torch\.nn\.Module"):
        compile(lambda x: x)  # type: ignore[arg-type]


def test_compiled_parameters_are_frozen_but_values_may_change_in_place() -> None:
    model = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))
    compile(model, backend("CPU"))
    with pytest.raises(RuntimeError, match=r"Parameter `1\.weight` cannot be assigned"):
        model[1].weight = nn.Parameter(torch.zeros(1, 2))
    with pytest.raises(RuntimeError, match=r"Parameter `extra` cannot be assigned"):
        model.register_parameter("extra", nn.Parameter(torch.zeros(1)))
    with torch.no_grad():
        model[1].weight.copy_(torch.ones(1, 2))
    model.load_state_dict({k: torch.zeros_like(v) for k, v in model.state_dict().items()})
    assert not model[1].weight.any()
    other = nn.Linear(2, 2)  # modules that were never compiled are unaffected
    other.weight = nn.Parameter(torch.zeros(2, 2))


@pytest.fixture
def _single_process_group(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for name, value in {
        "RANK": "0",
        "WORLD_SIZE": "1",
        "LOCAL_RANK": "0",
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": str(port),
    }.items():
        monkeypatch.setenv(name, value)
    yield
    if dist.is_initialized():
        dist.destroy_process_group()


@pytest.mark.usefixtures("_single_process_group")
def test_distributed_backend_wraps_the_model_in_ddp() -> None:
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    reference = nn.Linear(3, 1)
    reference.load_state_dict(model.state_dict())
    cpu = backend("CPU", enable_distributed=True)
    assert dist.is_initialized() and dist.get_backend() == "gloo" and cpu.is_distributed
    compiled = compile(model, cpu)
    x = torch.randn(4, 3)

    @trace  # DDP's forward and gradient hooks read no tensor values
    def step() -> None:
        compiled(x).pow(2).sum().backward()

    step()
    reference(x).pow(2).sum().backward()
    for p, q in zip(model.parameters(), reference.parameters()):
        torch.testing.assert_close(p.grad, q.grad)  # one rank: the all-reduce is the identity


def test_distributed_backend_names_the_missing_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(name, raising=False)
    assert not dist.is_initialized()
    with pytest.raises(RuntimeError, match="missing: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT"):
        backend("CPU", enable_distributed=True)
