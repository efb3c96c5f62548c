"""The run ETA comes from a rate smoothed over the whole run (epochs left × steps), so once
warm it stays within ±20% of the truth, through each epoch's slow first step (loader start,
compilation) and step jitter. A scripted clock plays a known schedule."""

from __future__ import annotations

from torchtally._records import Progress, RunInfo
from torchtally.learn._dashboard.state import RunState

EPOCHS, TRAIN, VALID = 6, 40, 8


def schedule() -> list[tuple[float, Progress]]:
    """(time after the step, its progress): slow first steps, every 7th step slower."""
    now, events, global_step = 0.0, [], 0
    for epoch in range(1, EPOCHS + 1):
        for step in range(1, TRAIN + 1):
            now += 2.0 if step == 1 else (0.3 if step % 7 == 0 else 0.1)
            global_step += 1
            events.append((now, Progress("train", epoch, EPOCHS, step, TRAIN, global_step)))
        for step in range(1, VALID + 1):
            now += 1.0 if step == 1 else 0.05
            events.append((now, Progress("valid", epoch, EPOCHS, step, VALID, global_step)))
    return events


def test_run_eta_is_stable_within_20_percent_once_warm() -> None:
    events = schedule()
    total = events[-1][0]
    clock = [0.0]
    state = RunState(clock=lambda: clock[0])
    state.start(RunInfo(("train", "valid"), EPOCHS, {"train": (), "valid": ()}))
    errors = []
    for now, progress in events:
        clock[0] = now
        state.progress(progress)
        if progress.epoch == 1:
            continue  # warming up: the first epoch's rates are still being learnt
        snapshot = state.snapshot()
        assert snapshot.run_eta is not None
        errors.append((snapshot.elapsed + snapshot.run_eta) / total - 1.0)
        if progress.split == "valid" and progress.step == VALID:
            state.epoch_end("train", progress.epoch)
    assert len(errors) == (EPOCHS - 1) * (TRAIN + VALID)
    print(f"run ETA error once warm: {min(errors):+.3f} .. {max(errors):+.3f}")
    assert max(abs(e) for e in errors) <= 0.2, (min(errors), max(errors))
