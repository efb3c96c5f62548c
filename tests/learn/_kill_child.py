"""A small learner run for the SIGKILL trials of test_learner_kill.py.

Usage: python _kill_child.py LOGDIR — prints READY once torch is imported and the learner is
built, then runs `fit(resume=True)` to the end (the test kills it somewhere on the way).
`build` is imported by the test for the uninterrupted reference and the resumes.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import torch

NUM_EPOCHS = 3
STEP_SLEEP_S = 0.01


def _collate(items: list[Any]) -> Any:
    time.sleep(STEP_SLEEP_S)  # spread the run out, so a random kill lands anywhere in it
    return torch.utils.data.default_collate(items)


def build(logdir: str) -> tuple[Any, Any, Any]:
    import torchtally as cstorch
    from torchtally.learn import FileLogger, Learner
    from torchtally.metrics import AccuracyMetric, LearningRateMetric, MeanMetric

    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1)
    labels = torch.arange(320) % 4
    inputs = torch.randn(320, 8, generator=gen) + labels[:, None].float()
    data = torch.utils.data.TensorDataset(inputs, labels)
    train = torch.utils.data.DataLoader(data, batch_size=16, shuffle=True, collate_fn=_collate)
    valid = torch.utils.data.DataLoader(data, batch_size=80, collate_fn=_collate)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4))
    learner = Learner(
        model,
        cstorch.optim.Adam(model.parameters(), lr=1e-2),
        metrics={
            "train": [MeanMetric("loss"), AccuracyMetric(), LearningRateMetric()],
            "valid": [MeanMetric("loss"), AccuracyMetric()],
        },
        num_epochs=NUM_EPOCHS,
        log_every=3,
        logdir=logdir,
        keep_checkpoints=2,
        observers=[FileLogger(logdir)],
        handle_sigint=False,
    )
    return learner, train, valid


if __name__ == "__main__":
    learner, train, valid = build(sys.argv[1])
    print("READY", flush=True)
    learner.fit(train, valid, resume=True)
    print("DONE", flush=True)
