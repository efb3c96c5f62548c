"""The README's learner setup, run by test_dashboard_readme_pty.py under a pseudo-terminal.

Usage: python _readme_child.py LOGDIR

It builds the learner exactly as the README's "Learner, dashboard, loggers, plots" example
does (`make_renderer()` without a stop callback), on random 10-class data, for far more epochs
than the test waits for, then prints what the run left: EPOCHS_DONE=<n>, STOP_REQUESTED=<bool>
and CHECKPOINT=<file name>. Exit code 0 when `fit` returned, 4 when it ran out of time.
"""

from __future__ import annotations

import contextlib
import fcntl
import sys
import termios
import threading
import time

MAX_SECONDS = 120.0


def main(logdir: str) -> int:
    with contextlib.suppress(OSError):  # take the pty as controlling terminal
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    import torch
    from torch import nn

    import torchtally as cstorch
    from torchtally.learn import FileLogger, Learner, SummaryTable, make_renderer
    from torchtally.metrics import AccuracyMetric, AUROCMetric, LearningRateMetric, MeanMetric
    from torchtally.metrics.system import SystemMonitor

    torch.manual_seed(0)
    inputs = torch.randn(640, 16)
    labels = torch.randint(0, 10, (640,))
    data = torch.utils.data.TensorDataset(inputs, labels)
    train_loader = torch.utils.data.DataLoader(data, batch_size=16, shuffle=True)
    valid_loader = torch.utils.data.DataLoader(data, batch_size=64)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 10))

    learner = Learner(
        model,
        cstorch.optim.Adam(model.parameters(), lr=3e-3),
        metrics={
            "train": [MeanMetric("loss"), AccuracyMetric(), LearningRateMetric()],
            "valid": [MeanMetric("loss"), AccuracyMetric(), AUROCMetric(10, capacity=4096)],
        },
        num_epochs=500,
        logdir=logdir,
        monitor=SystemMonitor(interval_s=1.0),
        observers=[make_renderer(), FileLogger(logdir), SummaryTable()],
    )
    timer = threading.Timer(MAX_SECONDS, learner.request_stop)
    timer.daemon = True
    started = time.monotonic()
    timer.start()
    learner.fit(train_loader, valid_loader, resume=True)
    timer.cancel()
    print(f"EPOCHS_DONE={learner.epochs_done}")
    print(f"STOP_REQUESTED={learner.stop_requested}")
    last = learner.last_checkpoint
    print(f"CHECKPOINT={last.name if last is not None else None}")
    return 4 if time.monotonic() - started >= MAX_SECONDS else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
