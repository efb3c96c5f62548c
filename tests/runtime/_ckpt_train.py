"""Kill-and-resume helper: a seeded tiny training run that checkpoints every `every` steps.

Imported by test_checkpoint.py for the in-process reference and resumed runs. Run as a script
it trains in a child process and, with --pause-step, stops inside that step's save at --stage
("partial": some tensors written to the temporary file; "written": temporary file complete but
not renamed), writes the temporary file's path to --ready, and sleeps until it is killed.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from torchtally.runtime._checkpoint import checkpoint as _checkpoint
from torchtally.runtime._checkpoint.checkpoint import load, save

VOCAB, DIM, BATCH, SEQ = 16, 8, 4, 6


class TinyLM(nn.Module):
    """Embedding -> tanh(Linear) -> head whose weight is the embedding's (tied)."""

    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(VOCAB, DIM)
        self.hidden = nn.Linear(DIM, DIM)
        self.head = nn.Linear(DIM, VOCAB, bias=False)
        self.head.weight = self.emb.weight

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.head(torch.tanh(self.hidden(self.emb(tokens))))


Run = tuple[TinyLM, torch.optim.SGD, torch.optim.lr_scheduler.StepLR]


def make_run(seed: int = 0) -> Run:
    torch.manual_seed(seed)
    model = TinyLM()
    opt = torch.optim.SGD(
        model.parameters(), lr=0.5, momentum=0.9, nesterov=True, weight_decay=1e-3
    )
    return model, opt, torch.optim.lr_scheduler.StepLR(opt, step_size=4, gamma=0.5)


def make_data(steps: int, seed: int = 1) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return torch.randint(0, VOCAB, (steps, BATCH, SEQ + 1), generator=gen)


def state_of(run: Run, step: int) -> dict[str, Any]:
    model, opt, sched = run
    return {
        "model": model.state_dict(),
        "optimizer": opt.state_dict(),
        "scheduler": sched.state_dict(),
        "step": step,
    }


def ckpt_path(directory: str | os.PathLike[str], step: int) -> Path:
    return Path(directory) / f"step_{step}.h5"


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """Bitwise-reproducible CPU math across processes: same kernels, one thread."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def train(
    run: Run,
    data: torch.Tensor,
    start: int,
    stop: int,
    ckpt_dir: str | os.PathLike[str] | None = None,
    every: int = 0,
    on_step: Callable[[int, Run], None] | None = None,
) -> None:
    model, opt, sched = run
    with one_thread():
        for step in range(start, stop):
            tokens = data[step]
            logits = model(tokens[:, :-1])
            loss = F.cross_entropy(logits.reshape(-1, VOCAB), tokens[:, 1:].reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            done = step + 1
            if on_step is not None:
                on_step(done, run)
            if ckpt_dir is not None and done % every == 0:
                save(state_of(run, done), ckpt_path(ckpt_dir, done))


def resume(path: str | os.PathLike[str], data: torch.Tensor, stop: int) -> Run:
    run = make_run(seed=123)  # a different init: everything must come from the checkpoint
    state = load(path)
    run[0].load_state_dict(state["model"])
    run[1].load_state_dict(state["optimizer"])
    run[2].load_state_dict(state["scheduler"])
    train(run, data, state["step"], stop)
    return run


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", required=True)
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--every", type=int, required=True)
    parser.add_argument("--pause-step", type=int, required=True)
    parser.add_argument("--stage", choices=["partial", "written"], required=True)
    parser.add_argument("--ready", required=True)
    args = parser.parse_args()
    marker = f".{ckpt_path(args.dir, args.pause_step).name}."

    def pause(stage: str, temp: str) -> None:
        if stage == args.stage and os.path.basename(temp).startswith(marker):
            part = args.ready + ".part"
            Path(part).write_text(temp)
            os.replace(part, args.ready)  # the test never sees a half-written ready file
            time.sleep(600)  # wait here, mid-save, for SIGKILL

    _checkpoint._pause_hook = pause
    train(make_run(), make_data(args.steps), 0, args.steps, args.dir, args.every)


if __name__ == "__main__":
    main()
