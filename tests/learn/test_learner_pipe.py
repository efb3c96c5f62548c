"""Training whose output goes to a pipe that the reader closes (`| head -1`) runs to the end:
the plain renderer and the summary table stop writing, the learner does not stop."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
CHILD = r"""
import json, sys, torch
import torchtally as cstorch
from torchtally.learn import FileLogger, Learner, SummaryTable, make_renderer
from torchtally.metrics import AccuracyMetric, MeanMetric
logdir, result = sys.argv[1], sys.argv[2]
torch.manual_seed(0)
data = torch.utils.data.TensorDataset(torch.randn(256, 4), torch.arange(256) % 3)
loader = torch.utils.data.DataLoader(data, batch_size=8)
model = torch.nn.Linear(4, 3)
learner = Learner(model, cstorch.optim.SGD(model.parameters(), lr=0.1),
                  metrics={"train": [MeanMetric("loss"), AccuracyMetric()]},
                  num_epochs=4, log_every=1, logdir=logdir,
                  observers=[make_renderer(), FileLogger(logdir), SummaryTable()])
print("started", flush=True)
learner.fit(loader)
with open(result, "w") as f:
    json.dump({"epochs": learner.epochs_done, "steps": learner.global_step}, f)
"""


def test_training_survives_its_output_pipe_being_closed(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]))
    result = tmp_path / "result.json"
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(tmp_path / "run"), str(result)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == b"started"
    child.stdout.close()  # like `| head -1`: every later write hits a broken pipe
    child.wait(timeout=120)
    assert json.loads(result.read_text()) == {"epochs": 4, "steps": 128}
    assert (tmp_path / "run" / "checkpoints" / "epoch-4.h5").is_file()
