"""The update count kept on the host in plain eager code (issue 26: no `add_` per update into
`_num_updates`, a kernel launch on a GPU): every reader sees the exact count, and traced or
inspected runs still record the `add_` so that a replay counts too."""

from __future__ import annotations

import copy
import pickle

import pytest
import torch
from torch.fx.experimental.proxy_tensor import make_fx
from torch.utils._python_dispatch import TorchDispatchMode

from torchtally.metrics import AccuracyMetric, MeanMetric, MSEMetric, Running


def _count_buffer(metric: MeanMetric) -> torch.Tensor:
    # The tensor itself, past the read hook that adds the host count.
    return dict.__getitem__(metric._buffers, "_num_updates")


class _Recorder(TorchDispatchMode):
    """Records op names; not an observer, so torchtally treats it as a tracing mode."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        self.ops.append(func.__name__)
        return func(*args, **(kwargs or {}))


class _Observer(_Recorder):
    torchtally_observer = True


def _metric(device: str = "cpu") -> MeanMetric:
    metric = MeanMetric().coalesce_updates(False).to(device)
    return metric


def test_eager_updates_add_no_kernel_to_the_count_and_every_read_sees_it() -> None:
    # On meta, the branches a GPU takes: the count's tensor is not written (its version
    # counter, bumped by every in-place op, stays), under an observing mode too.
    metric = _metric("meta")
    x = torch.ones(8, device="meta")
    metric.update(x)
    version = _count_buffer(metric)._version
    observer = _Observer()
    with observer:
        metric.update(x)
    metric.update(x)
    assert observer.ops  # the mean's own work was seen
    assert _count_buffer(metric)._version == version
    cpu = _metric()
    for _ in range(5):
        cpu.update(torch.ones(3))
    assert int(_count_buffer(cpu)) == 0  # held on the host so far
    assert cpu.num_updates == 5
    assert int(_count_buffer(cpu)) == 5


@pytest.mark.parametrize(
    "read",
    [
        pytest.param(lambda m: pickle.loads(pickle.dumps(m)).num_updates, id="pickle"),
        pytest.param(lambda m: copy.deepcopy(m).num_updates, id="deepcopy"),
        pytest.param(lambda m: int(m.update_counter), id="update_counter"),
        pytest.param(lambda m: int({n: t for n, t, _ in m.states()}["_num_updates"]), id="states"),
        pytest.param(lambda m: int(m.state_dict_all()["_num_updates"]), id="state_dict_all"),
        pytest.param(lambda m: m.to(torch.float64).num_updates, id="to"),
        pytest.param(
            lambda m: _metric().merge_state([m]).num_updates, id="merge_state (into a fresh one)"
        ),
        pytest.param(lambda m: int(dict(m.named_buffers())["_num_updates"]), id="named_buffers"),
    ],
)
def test_each_reader_sees_the_host_count(read) -> None:  # type: ignore[no-untyped-def]
    metric = _metric()
    for _ in range(4):
        metric.update(torch.arange(3.0))
    assert read(metric) == 4


def test_reset_forgets_the_host_count_and_counting_resumes() -> None:
    metric = _metric()
    for _ in range(3):
        metric.update(torch.ones(2))
    metric.reset()
    assert metric.num_updates == 0
    metric.update(torch.ones(2))
    assert metric.num_updates == 1


def test_a_tracing_mode_records_the_count_so_a_replay_counts() -> None:
    metric = _metric()
    x = torch.ones(4)
    recorder = _Recorder()
    with recorder:
        metric.update(x)
    assert int(_count_buffer(metric)) == 1  # written by the recorded add_, not held
    assert any(op.startswith("add_") for op in recorder.ops)
    graph = make_fx(lambda v: metric.update(v))(x)
    before = metric.num_updates
    graph(x)
    graph(x)
    assert metric.num_updates == before + 2


def test_compiled_updates_and_eager_updates_count_together() -> None:
    metric = _metric()
    x = torch.ones(4)

    @torch.compile(fullgraph=True, backend="eager")
    def step(v: torch.Tensor) -> None:
        metric.update(v)

    for i in range(6):
        if i % 2:
            step(x)
        else:
            metric.update(x)
    assert metric.num_updates == 6
    assert float(metric.compute()) == 1.0


def test_a_metric_reading_its_count_inside_update_sees_every_earlier_update() -> None:
    # Running's window slot is the update count: a stale count would overwrite a slot.
    running = Running(MSEMetric(), window=3)
    for value in (1.0, 2.0, 3.0, 4.0):
        running.update(torch.tensor([0.0]), torch.tensor([value]))
    # The last three squared errors: 4, 9, 16.
    assert float(running.compute()) == pytest.approx(29 / 3)


def test_a_collection_member_and_its_collection_count_alike() -> None:
    from torchtally.metrics import MetricCollection

    collection = MetricCollection({"acc": AccuracyMetric(), "mean_acc": AccuracyMetric()})
    labels = torch.tensor([0, 1, 1])
    scores = torch.tensor([0.2, 0.8, 0.4])
    for _ in range(3):
        collection.update(labels, scores)
    assert [m.num_updates for m in collection.values()] == [3, 3]
