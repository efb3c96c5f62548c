"""The observer interface: every observer torchtally ships is an `Observer`, the base class does
nothing on every event, and objects that only define some event methods (duck-typed observers)
are adapted once, when given, not probed on every event."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import pytest
import torch

import torchtally as cstorch
from torchtally._records import MetricRecord, Observer, Progress, RunInfo, adapt_observer
from torchtally.learn import (
    Dashboard,
    FileLogger,
    Learner,
    PlainRenderer,
    SummaryTable,
    TensorBoardLogger,
)
from torchtally.learn._learner.observers import Broadcast

INFO = RunInfo(("train",), 1, {"train": ("loss",)})
PROGRESS = Progress("train", 1, 1, 1, 1, 1)
RECORD = MetricRecord("train", 1, 1, "loss", 0.5, 0.0)


def test_every_shipped_observer_subclasses_observer() -> None:
    for cls in (FileLogger, TensorBoardLogger, SummaryTable, Dashboard, PlainRenderer, Broadcast):
        assert issubclass(cls, Observer), cls.__name__


def test_the_base_class_ignores_every_event_and_the_stop_request() -> None:
    observer = Observer()
    assert observer.on_run_start(INFO) is None
    assert observer.on_progress(PROGRESS) is None
    assert observer.on_records([RECORD]) is None
    assert observer.on_epoch_end("train", 1) is None
    assert observer.on_run_end(stopped_early=False) is None
    assert observer.bind_stop(lambda: None) is False


class Counting:
    """A duck-typed observer that counts how often its attributes are looked up."""

    lookups = 0

    def __init__(self) -> None:
        self.seen: list[str] = []

    def __getattribute__(self, name: str) -> Any:
        if name.startswith("on_") or name == "bind_stop":
            type(self).lookups += 1
        return super().__getattribute__(name)

    def on_records(self, records: list[MetricRecord]) -> None:
        self.seen.append(f"records {len(records)}")

    def on_epoch_end(self, split: str, epoch: int) -> None:
        self.seen.append(f"epoch_end {split} {epoch}")


def test_a_duck_typed_observer_is_resolved_once_not_probed_per_event() -> None:
    Counting.lookups = 0
    duck = Counting()
    broadcast = Broadcast([duck])
    after_construction = Counting.lookups
    assert after_construction > 0  # the one lookup of each method, at the boundary
    for _ in range(5):
        broadcast.on_run_start(INFO)  # not defined by the duck: ignored
        broadcast.on_progress(PROGRESS)
        broadcast.on_records([RECORD, RECORD])
        broadcast.on_epoch_end("train", 1)
        broadcast.on_run_end(stopped_early=True)
    assert duck.seen == ["records 2", "epoch_end train 1"] * 5
    assert Counting.lookups == after_construction
    assert broadcast.observers == (duck,)  # the objects as given, not their adapters


def test_observer_subclasses_are_called_directly() -> None:
    class Mine(Observer):
        def __init__(self) -> None:
            self.progress: list[Progress] = []

        def on_progress(self, progress: Progress) -> None:
            self.progress.append(progress)

    mine = Mine()
    assert adapt_observer(mine, "observers") is mine
    broadcast = Broadcast([mine])
    broadcast.on_run_start(INFO)  # inherited no-op
    broadcast.on_progress(PROGRESS)
    assert mine.progress == [PROGRESS]


def test_each_observer_gets_its_own_list_of_records() -> None:
    lists: list[list[MetricRecord]] = []

    class Keep(Observer):
        def on_records(self, records: list[MetricRecord]) -> None:
            lists.append(records)
            records.clear()  # cannot empty the next observer's list

    Broadcast([Keep(), Keep()]).on_records([RECORD])
    assert len(lists) == 2 and lists[0] is not lists[1]
    assert lists[1] == []  # cleared by its own observer, after receiving [RECORD]


def test_add_adapts_like_the_constructor() -> None:
    broadcast = Broadcast([])
    duck = Counting()
    broadcast.add(duck)
    broadcast.on_epoch_end("valid", 3)
    assert duck.seen == ["epoch_end valid 3"]
    assert broadcast.observers == (duck,)
    with pytest.raises(TypeError, match=r"`observers` must hold observers.*object at"):
        broadcast.add(object())
    assert broadcast.observers == (duck,)  # the rejected object was not added


@pytest.mark.parametrize("bad", [object(), 3, "loss"])
def test_an_object_with_no_event_method_is_a_type_error(bad: object) -> None:
    with pytest.raises(TypeError, match=r"Argument `observers` must hold observers.*Received"):
        Broadcast([bad])
    model = torch.nn.Linear(2, 2)
    with pytest.raises(TypeError, match=r"Argument `observers` must hold observers"):
        Learner(model, cstorch.optim.SGD(model.parameters(), lr=0.1), observers=[bad])


def test_the_learner_offers_its_stop_to_observers_and_duck_typed_ones() -> None:
    offered: list[Callable[[], None]] = []

    class Stopper(Observer):
        def bind_stop(self, request_stop: Callable[[], None]) -> bool:
            offered.append(request_stop)
            return True

    class DuckStopper:
        def on_run_end(self, stopped_early: bool) -> None: ...

        def bind_stop(self, request_stop: Callable[[], None]) -> bool:
            offered.append(request_stop)
            return True

    model = torch.nn.Linear(2, 2)
    learner = Learner(
        model,
        cstorch.optim.SGD(model.parameters(), lr=0.1),
        observers=[Stopper(), DuckStopper(), PlainRenderer(io.StringIO())],
    )
    assert offered == [learner.request_stop, learner.request_stop]
    offered[1]()
    assert learner.stop_requested


def test_a_class_instead_of_an_instance_is_a_type_error() -> None:
    with pytest.raises(TypeError, match=r"`observers` must hold observer instances.*SummaryTable"):
        Broadcast([SummaryTable])
    with pytest.raises(TypeError, match=r"instances, not classes.*Counting\(\.\.\.\)"):
        Broadcast([Counting])
