"""`SystemMonitor`: sampling thread, records, epochs, failures and shutdown."""

from __future__ import annotations

import importlib.util
import itertools
import logging
import statistics
import subprocess
import sys
import threading
import time

import pytest

from torchtally._records import SYSTEM_SPLIT, MetricRecord, Observer
from torchtally.metrics.system import (
    CPUMemoryUsage,
    CPUUsage,
    Reading,
    Sensor,
    SensorUnavailable,
    SystemMonitor,
)

LOGGER = "torchtally.metrics.system"
WAIT_S = 5.0  # bound on every wait; the samples come far sooner


class Counter(Sensor):
    """A test sensor: reads 1, 2, 3, ... and raises from read number `fail_at` on."""

    def __init__(self, name: str = "count", fail_at: int | None = None) -> None:
        super().__init__(name)
        self.reads = 0
        self.fail_at = fail_at

    def _probe(self) -> None:
        return None

    def _read(self) -> list[Reading]:
        self.reads += 1
        if self.fail_at is not None and self.reads >= self.fail_at:
            raise RuntimeError("sensor broke")
        return [Reading(self.name, float(self.reads), "")]


class Missing(Sensor):
    """A test sensor that does not exist on this machine."""

    def _probe(self) -> None:
        raise SensorUnavailable("no such device here")

    def _read(self) -> list[Reading]:
        raise AssertionError("an unavailable sensor is never read")


class Collector:
    """An observer that keeps the records and signals once it has `wanted` samples."""

    def __init__(self, wanted: int) -> None:
        self.records: list[MetricRecord] = []
        self.batches = 0
        self.wanted = wanted
        self.done = threading.Event()
        self.lock = threading.Lock()

    def on_records(self, records: list[MetricRecord]) -> None:
        with self.lock:
            self.records.extend(records)
            self.batches += 1
            if self.batches >= self.wanted:
                self.done.set()


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == LOGGER and r.levelname == "WARNING"]


def test_samples_at_the_interval_and_stops() -> None:
    interval = 0.05
    sink = Collector(wanted=6)
    monitor = SystemMonitor([Counter()], interval_s=interval, observers=[sink])
    started = time.monotonic()
    monitor.start()
    assert monitor.running
    assert sink.done.wait(WAIT_S)
    elapsed = time.monotonic() - started
    monitor.stop()
    assert not monitor.running
    assert not any(t.name == "torchtally-system-monitor" for t in threading.enumerate())
    with sink.lock:
        records = list(sink.records)
    assert elapsed >= 6 * interval * 0.9  # the first sample waits one interval
    steps = [r.step for r in records]
    assert steps == list(range(len(records)))
    # the counter's first read was the warm-up, not recorded
    assert [r.value for r in records] == [float(i + 2) for i in range(len(records))]
    assert {(r.split, r.epoch, r.name, r.unit) for r in records} == {(SYSTEM_SPLIT, 0, "count", "")}
    gaps = [b.wall_time - a.wall_time for a, b in itertools.pairwise(records)]
    assert interval * 0.5 <= statistics.median(gaps) <= interval * 3
    count = len(sink.records)
    time.sleep(3 * interval)
    assert len(sink.records) == count  # nothing after stop()


def test_epoch_is_stamped_and_real_sensors_record() -> None:
    sink = Collector(wanted=2)
    monitor = SystemMonitor([CPUUsage(), CPUMemoryUsage()], interval_s=0.05, observers=[sink])
    monitor.set_epoch(3)
    with monitor:
        assert sink.done.wait(WAIT_S)
        monitor.set_epoch(4)
        sink.done.clear()
        sink.wanted = sink.batches + 2
        assert sink.done.wait(WAIT_S)
    assert not monitor.running
    epochs = [r.epoch for r in sink.records]
    assert epochs[0] == 3 and epochs[-1] == 4 and epochs == sorted(epochs)
    first_step = [r for r in sink.records if r.step == 0]
    assert {r.name for r in first_step} == {"cpu_usage", "cpu_memory", "cpu_memory_used"}
    for record in sink.records:
        assert record.split == SYSTEM_SPLIT
        if record.unit == "%":
            assert 0.0 <= record.value <= 1.0


def test_failing_sensor_is_disabled_and_others_continue(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger=LOGGER)
    broken = Counter("broken", fail_at=3)  # warm-up, sample 0, then it raises
    sink = Collector(wanted=5)
    with SystemMonitor([broken, Counter("ok")], interval_s=0.02, observers=[sink]) as monitor:
        assert sink.done.wait(WAIT_S)
        assert monitor.running
    assert [r.step for r in sink.records if r.name == "broken"] == [0]
    assert [r.step for r in sink.records if r.name == "ok"][:5] == [0, 1, 2, 3, 4]
    assert broken.reads == 3
    (message,) = warnings_of(caplog)
    assert "broken" in message and "RuntimeError: sensor broke" in message


def test_unavailable_sensors_are_announced_once_together(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger=LOGGER)
    sink = Collector(wanted=3)
    sensors = [Missing("gpu0_power"), Missing("gpu0_temperature"), Counter()]
    with SystemMonitor(sensors, interval_s=0.02, observers=[sink]):
        assert sink.done.wait(WAIT_S)
    assert {r.name for r in sink.records} == {"count"}
    assert warnings_of(caplog) == [
        "torchtally system metrics gpu0_power, gpu0_temperature unavailable, recording nothing: "
        "no such device here"
    ]
    assert [s.available for s in sensors] == [False, False, True]


def test_failing_observer_is_reported_once_and_kept(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR, logger=LOGGER)
    calls = []

    class Broken:
        def on_records(self, records: list[MetricRecord]) -> None:
            calls.append(len(records))
            raise ValueError("observer bug")

    sink = Collector(wanted=4)
    with SystemMonitor([Counter()], interval_s=0.02, observers=[Broken(), sink]) as monitor:
        assert sink.done.wait(WAIT_S)
        assert monitor.running
    assert len(calls) >= 4
    errors = [r for r in caplog.records if r.name == LOGGER and r.levelname == "ERROR"]
    assert len(errors) == 1 and "on_records" in errors[0].getMessage()


def test_restart_context_and_concurrent_samples() -> None:
    sink = Collector(wanted=2)
    monitor = SystemMonitor([Counter()], interval_s=0.02, observers=[sink])
    monitor.stop()  # not running: nothing to do
    with monitor:
        with pytest.raises(RuntimeError, match="already running"):
            monitor.start()
        assert sink.done.wait(WAIT_S)
    sink.done.clear()
    sink.wanted = sink.batches + 2
    threads = [threading.Thread(target=monitor.sample) for _ in range(4)]
    with monitor:  # restarts
        for thread in threads:
            thread.start()
        assert sink.done.wait(WAIT_S)
    for thread in threads:
        thread.join(WAIT_S)
    steps = [r.step for r in sink.records]
    assert sorted(steps) == list(range(len(steps)))  # unique, gap-free across threads and restart


def test_default_monitor_on_this_machine() -> None:
    sink = Collector(wanted=2)
    with SystemMonitor(interval_s=0.05, observers=[sink]) as monitor:
        assert sink.done.wait(WAIT_S)
    names = {r.name for r in sink.records}
    available = {s.name for s in monitor.sensors if s.available}
    assert {"cpu_usage", "cpu_memory", "cpu_memory_used"} <= names
    assert ("cpu_temperature" in names) == ("cpu_temperature" in available)
    if importlib.util.find_spec("pynvml") is None:  # this machine: no nvidia-ml-py, no GPU
        assert not any(name.startswith("gpu") for name in names)


@pytest.mark.parametrize("interval", [0, -1.0, float("nan"), float("inf"), True, "1"])
def test_interval_is_checked(interval: object) -> None:
    with pytest.raises(ValueError, match=r"`interval_s` must be a finite number of seconds > 0"):
        SystemMonitor([Counter()], interval_s=interval)  # type: ignore[arg-type]


def test_arguments_are_checked() -> None:
    with pytest.raises(TypeError, match=r"`sensors` must hold `Sensor` instances.*'cpu'"):
        SystemMonitor(["cpu"])  # type: ignore[list-item]
    with pytest.raises(TypeError, match=r"`observer` must have an `on_records"):
        SystemMonitor([Counter()], observers=[object()])  # type: ignore[list-item]
    with pytest.raises(ValueError, match=r"`epoch` must be an integer >= 0.*epoch=-1"):
        SystemMonitor([Counter()]).set_epoch(-1)


def test_observer_subclasses_and_objects_with_on_records_are_accepted() -> None:
    class Records:  # duck-typed: adapted once, when added
        def __init__(self) -> None:
            self.values: list[float] = []

        def on_records(self, records: list[MetricRecord]) -> None:
            self.values += [r.value for r in records]

    class Quiet(Observer):  # inherits a no-op on_records
        pass

    class Keep(Observer):
        def __init__(self) -> None:
            self.steps: list[int] = []

        def on_records(self, records: list[MetricRecord]) -> None:
            self.steps += [r.step for r in records]

    duck, keep = Records(), Keep()
    monitor = SystemMonitor([Counter()], interval_s=60.0, observers=[duck, Quiet()])
    monitor.add_observer(keep)
    monitor.sample()
    monitor.sample()
    assert duck.values == [1.0, 2.0]
    assert keep.steps == [0, 1]

    class OnlyEpochs:
        def on_epoch_end(self, split: str, epoch: int) -> None: ...

    with pytest.raises(TypeError, match=r"`observer` must have an `on_records` method.*OnlyEp"):
        monitor.add_observer(OnlyEpochs())


def test_optional_packages_are_imported_lazily() -> None:
    # torch itself imports pynvml when nvidia-ml-py is installed, so measure what torchtally
    # adds on top of `import torch`: none of its optional packages
    code = (
        "import sys; optional = ('psutil', 'pynvml', 'matplotlib'); import torch; "
        "before = {m for m in optional if m in sys.modules}; "
        "import torchtally.metrics.system, torchtally.learn._plots.plots; "
        "print(sorted(m for m in optional if m in sys.modules and m not in before))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
