"""cstorch surface model-zoo flows touch: executor, profiler, loader, backend type, tensorboard.

Oracles: cstorch 2.10's documented rules, computed by hand here (activation steps reduced to
the gcd with every checkpoint step number; `is_activation_step` on multiples and the last
step; `RateTrackerActivity`'s fields), and TensorBoard's own event reader for the writer.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

import torchtally as cstorch


def _loader(n: int = 4, batch: int = 2) -> cstorch.utils.data.DataLoader:
    def input_fn() -> torch.utils.data.DataLoader:
        data = torch.utils.data.TensorDataset(torch.arange(float(n * batch)).reshape(-1, 1))
        return torch.utils.data.DataLoader(data, batch_size=batch)

    return cstorch.utils.data.DataLoader(input_fn)


def test_backend_type_is_an_enum_that_still_equals_its_name() -> None:
    b = cstorch.backend("cpu")
    assert isinstance(b.backend_type, cstorch.BackendType)
    assert b.backend_type.name == "CPU" and b.backend_type == "CPU"
    assert (b.backend_type.is_cpu, b.backend_type.is_gpu, b.backend_type.is_csx) == (
        True,
        False,
        False,
    )
    assert str(b.backend_type) == "CPU" and f"{b.backend_type}" == "CPU"
    assert cstorch.BackendType.from_str("gpu") is cstorch.BackendType.GPU
    with pytest.raises(ValueError, match="backend_type"):
        cstorch.BackendType.from_str("tpu")
    assert cstorch.current_torch_device() == torch.device("cpu")


@pytest.mark.parametrize(
    ("num_steps", "checkpoint_steps", "activation_steps"),
    [(10, None, None), (10, None, 4), (10, 4, 6), (12, 4, 8), (7, 3, 2), (5, None, 9), (9, 2, 3)],
)
def test_activation_steps_follow_cstorch(
    num_steps: int, checkpoint_steps: int | None, activation_steps: int | None
) -> None:
    executor = cstorch.utils.data.DataExecutor(
        _loader(),
        num_steps=num_steps,
        checkpoint_steps=checkpoint_steps,
        activation_steps=activation_steps,
    )
    expected = min(activation_steps or 1, num_steps)
    if checkpoint_steps:
        marks = [s + 1 for s in range(num_steps) if (s + 1) % checkpoint_steps == 0] + [num_steps]
        expected = math.gcd(expected, *marks)
    assert executor.activation_steps == expected
    flags = []
    for _ in executor:
        flags.append(executor.is_activation_step)
    assert flags == [(s + 1) % expected == 0 or s == num_steps - 1 for s in range(num_steps)]
    assert executor.iteration == num_steps - 1 and executor.user_iteration == num_steps


def test_current_executor_and_listeners() -> None:
    first = cstorch.utils.data.DataExecutor(_loader(), num_steps=2, listeners=[])
    assert cstorch.current_executor() is first
    second = cstorch.utils.data.DataExecutor(_loader(), num_steps=2)
    for _ in first:
        assert cstorch.current_executor() is first  # the one being iterated
    assert second.listeners == []
    with pytest.raises(TypeError, match="listeners"):
        cstorch.utils.data.DataExecutor(_loader(), num_steps=2, listeners=object())
    with pytest.raises(ValueError, match="activation_steps"):
        cstorch.utils.data.DataExecutor(_loader(), num_steps=2, activation_steps=0)


def test_rate_tracker_has_cstorch_fields() -> None:
    now = [0.0]
    executor = cstorch.utils.data.DataExecutor(
        _loader(n=4, batch=2), num_steps=4, clock=lambda: now[0]
    )
    for _ in executor:
        now[0] += 0.5
    tracker = executor.profiler.rate_tracker
    assert tracker.total_samples == 8
    assert tracker.total_time == pytest.approx(2.0)
    assert (
        tracker.global_rate == pytest.approx(4.0) and tracker.samples_per_sec == tracker.global_rate
    )
    assert tracker.rate == pytest.approx(4.0)  # one interval: nothing to smooth yet
    assert tracker.flops_utilization is None
    assert set(tracker()) == {
        "total_samples",
        "total_time",
        "rate",
        "global_rate",
        "samples_per_sec",
        "flops_utilization",
    }


class _Restartable:
    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter([torch.ones(1)])

    def __len__(self) -> int:
        return 1

    def state_dict(self) -> dict:  # type: ignore[type-arg]
        return {}

    def load_state_dict(self, state: dict) -> None:  # type: ignore[type-arg]
        pass

    def aggregate_state_dict(self, states: list) -> dict:  # type: ignore[type-arg]
        return {}

    def deaggregate_state_dict(self, state: dict) -> dict:  # type: ignore[type-arg]
        return {}


def test_dataloader_is_restartable() -> None:
    assert _loader().is_restartable is False
    assert cstorch.utils.data.DataLoader(_Restartable).is_restartable is True


def test_name_scope_nests_and_checks() -> None:
    with cstorch.name_scope("block"):
        with cstorch.name_scope("attn"):
            assert cstorch.runtime.current_name_scope() == "block.attn"
        assert cstorch.runtime.current_name_scope() == "block"
    assert cstorch.runtime.current_name_scope() == ""
    with pytest.raises(ValueError, match="name"), cstorch.name_scope(""):
        pass


def test_tensorboard_writer_and_reader(tmp_path: Path) -> None:
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from torchtally.utils.tensorboard import SummaryReader, SummaryWriter

    assert cstorch.utils.tensorboard.SummaryWriter is SummaryWriter
    writer = SummaryWriter(log_dir=str(tmp_path), base_step=5)
    assert writer.base_step == 5
    for step, value in [(1, 0.5), (2, 0.25), (3, 0.125)]:
        writer.add_scalar("train/loss", value, step)
    writer.add_tensor("weights", torch.arange(3.0), 2)
    writer.add_tensor("weights", torch.arange(3.0) * 2, 2)
    writer.close()

    oracle = EventAccumulator(str(tmp_path))
    oracle.Reload()
    expected = [(e.step, e.value) for e in oracle.Scalars("train/loss")]

    reader = SummaryReader(tmp_path)
    assert [(e.step, e.value) for e in reader.read_scalar("train/loss")] == expected
    assert reader.read_scalar("train/loss", step=2).value == 0.25
    assert reader.scalar_names() == {"train/loss"}
    assert SummaryReader(tmp_path, filter="train").scalar_names() == {"train/loss"}
    with pytest.raises(KeyError):
        reader.read_scalar("train/loss", step=9)
    with pytest.raises(RuntimeError, match="Could not find scalar"):
        reader.read_scalar("nope")
    assert reader.tensor_names() == {"weights"}
    latest = reader.read_tensor("weights", step=2)
    assert torch.equal(latest.tensor, torch.arange(3.0) * 2)
    both = reader.read_tensor("weights", step=2, latest_only=False)
    assert [torch.equal(d.tensor, torch.arange(3.0) * k) for d, k in zip(both, (1, 2))] == [
        True,
        True,
    ]
    assert reader.read_tensor("missing") is None
    with pytest.raises(RuntimeError, match="No event files"):
        SummaryReader(tmp_path / "empty")


def test_backend_call_forms_of_the_model_zoo(tmp_path: Path) -> None:
    made = cstorch.backend("CPU", tmp_path)  # artifact_dir positionally, as the model zoo calls it
    assert made.artifact_dir == tmp_path
    assert cstorch.backend() is made  # no arguments: the current backend
    assert cstorch.current_backend(raise_exception=False, raise_warning=False) is made
    with pytest.raises(TypeError, match="backend_type"):
        cstorch.backend(None, max_checkpoints=2)  # type: ignore[call-overload]
    assert cstorch.backend(cstorch.BackendType.CPU).backend_type is cstorch.BackendType.CPU


def test_executor_artifact_dirs_are_numbered_per_backend(tmp_path: Path) -> None:
    cstorch.backend("CPU", artifact_dir=tmp_path)
    first = cstorch.utils.data.DataExecutor(_loader(), num_steps=1)
    with pytest.raises(RuntimeError, match="iterated"):
        _ = first.artifact_dir
    for _ in first:
        pass
    second = cstorch.utils.data.DataExecutor(_loader(), num_steps=1, profiler_activities=[])
    for _ in second:
        pass
    assert first.artifact_dir == tmp_path / "executors" / "000001"
    assert second.artifact_dir == tmp_path / "executors" / "000002"
    assert second.artifact_dir.is_dir()


def test_backends_flags_and_pol() -> None:
    flags = cstorch.backends
    try:
        assert flags.csx.precision.optimization_level == 1  # cstorch's default
        assert cstorch.current_pol() == 1
        flags.csx.precision.optimization_level = 2
        assert cstorch.current_pol() == 2
        with pytest.raises(ValueError, match="optimization_level"):
            flags.csx.precision.optimization_level = 3
        with pytest.raises(AttributeError):
            flags.csx.performance.no_such_flag = 1  # type: ignore[attr-defined]
        flags.csx.performance.transfer_processes = 8
        with cstorch.pol(level=0):
            assert cstorch.current_pol() == 0
            with cstorch.pol(bwd_level=2):  # no forward level: the enclosing one stays
                assert cstorch.current_pol() == 0

        @cstorch.pol(level=1)
        def inner() -> int:
            return cstorch.current_pol()

        assert inner() == 1 and cstorch.current_pol() == 2
        with pytest.raises(ValueError, match="level"):
            cstorch.pol(level=5)
    finally:
        flags.reset()
    assert flags.csx.performance.transfer_processes == 5
