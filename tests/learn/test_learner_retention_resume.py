"""Issue 13, retention across restarts: a run killed after writing its last checkpoint but
before pruning the older ones leaves one file too many; the resumed `fit` prunes it even when
no epoch is left to train (a flaky SIGKILL trial of test_learner_kill.py found this)."""

from __future__ import annotations

from pathlib import Path

from _kill_child import NUM_EPOCHS, build


def _checkpoints(logdir: Path) -> list[str]:
    return sorted(p.name for p in (logdir / "checkpoints").glob("*.h5"))


def test_a_resumed_fit_with_nothing_left_to_train_still_applies_keep_checkpoints(
    tmp_path: Path,
) -> None:
    learner, train, valid = build(str(tmp_path))
    learner.keep_checkpoints = None  # as if killed before each pruning
    learner.fit(train, valid)
    assert _checkpoints(tmp_path) == [f"epoch-{e}.h5" for e in range(1, NUM_EPOCHS + 1)]
    resumed, train, valid = build(str(tmp_path))  # keep_checkpoints=2
    resumed.fit(train, valid, resume=True)
    assert resumed.epochs_done == NUM_EPOCHS  # nothing trained, nothing saved
    assert _checkpoints(tmp_path) == [f"epoch-{e}.h5" for e in (NUM_EPOCHS - 1, NUM_EPOCHS)]
