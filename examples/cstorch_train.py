"""The cstorch porting guide's "Full Example (Training)", filled in and runnable on CPU.

The body of `main` is the guide's skeleton with its blanks filled: a two-layer MLP, Gaussian
blobs made here as data, SGD with momentum, dynamic loss scaling. A cstorch script differs only
in its import line (`import cerebras_pytorch.experimental as cstorch`) and backend ("CSX").
Three slips in the guide's skeleton are corrected: the step is given the `batch` (the guide
passes `dataloader`), the executor argument is `checkpoint_steps` (misspelt `chekpoint_steps`),
and `training_step` advances the learning-rate scheduler as the guide's step section shows.

Run:
    python examples/cstorch_train.py --out-dir runs/cstorch --num-steps 200

It prints one "Loss: ..." line per step (from a step closure) and writes `checkpoint_{step}.mdl`
files on checkpoint steps.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence

import torch

import torchtally as cstorch

NUM_FEATURES = 8
NUM_CLASSES = 3
HIDDEN = 32


class MLP(torch.nn.Module):
    """Two linear layers with a ReLU between them."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(NUM_FEATURES, HIDDEN)
        self.fc2 = torch.nn.Linear(HIDDEN, NUM_CLASSES)

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(inputs)))


def make_dataset(num_samples: int, seed: int) -> torch.utils.data.TensorDataset:
    """Gaussian blobs: one fixed centre per class (the same for every seed), unit noise."""
    centres = 0.6 * torch.randn(
        NUM_CLASSES, NUM_FEATURES, generator=torch.Generator().manual_seed(0)
    )
    generator = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, NUM_CLASSES, (num_samples,), generator=generator)
    inputs = centres[labels] + torch.randn(num_samples, NUM_FEATURES, generator=generator)
    return torch.utils.data.TensorDataset(inputs, labels)


def train_dataloader_fn(batch_size: int, num_samples: int = 512) -> torch.utils.data.DataLoader:
    """The input function: each worker (and rank) builds its own loader from it."""
    dataset = make_dataset(num_samples, seed=1)
    return torch.utils.data.DataLoader(
        dataset,
        batch_size=batch_size,
        shuffle=True,
        drop_last=True,
        generator=torch.Generator().manual_seed(2),
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", default="cstorch_checkpoints")
    parser.add_argument("--num-steps", type=int, default=200)
    parser.add_argument("--checkpoint-steps", type=int, default=50)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--checkpoint-path", default=None, help="resume from this checkpoint")
    args = parser.parse_args(argv)
    os.makedirs(args.out_dir, exist_ok=True)
    torch.manual_seed(0)
    checkpoint_path = args.checkpoint_path
    loss_scale = "dynamic"

    backend = cstorch.backend("CPU", max_checkpoints=3)

    with backend.device:
        # user defined model
        model: torch.nn.Module = MLP()

    compiled_model = cstorch.compile(model, backend)

    loss_fn: torch.nn.Module = torch.nn.CrossEntropyLoss()

    optimizer: cstorch.optim.Optimizer = cstorch.optim.configure_optimizer(
        optimizer_type="SGD",
        params=model.parameters(),
        lr=0.05,
        momentum=0.9,
    )
    lr_scheduler: cstorch.optim.lr_scheduler.LRScheduler = cstorch.optim.configure_lr_scheduler(
        optimizer,
        learning_rate=0.05,
    )

    grad_scaler = None
    if loss_scale != 0.0:
        grad_scaler = cstorch.amp.GradScaler(loss_scale=loss_scale, steps_per_increase=100)

    @cstorch.checkpoint_closure
    def save_checkpoint(step):
        checkpoint_file = os.path.join(args.out_dir, f"checkpoint_{step}.mdl")

        state_dict = {
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
        }
        if lr_scheduler:
            state_dict["lr_scheduler"] = lr_scheduler.state_dict()
        if grad_scaler:
            state_dict["grad_scaler"] = grad_scaler.state_dict()

        state_dict["global_step"] = step

        cstorch.save(state_dict, checkpoint_file)

    global_step = 0

    # Load checkpoint if provided
    if checkpoint_path is not None:
        state_dict = cstorch.load(checkpoint_path)

        model.load_state_dict(state_dict["model"])
        optimizer.load_state_dict(state_dict["optimizer"])
        if lr_scheduler:
            lr_scheduler.load_state_dict(state_dict["lr_scheduler"])
        if grad_scaler:
            grad_scaler.load_state_dict(state_dict["grad_scaler"])

        global_step = state_dict.get("global_step", 0)

    @cstorch.compile_step
    def training_step(batch):
        inputs, targets = batch
        outputs = compiled_model(inputs)
        loss = loss_fn(outputs, targets)

        cstorch.amp.optimizer_step(loss, optimizer, grad_scaler, max_gradient_norm=1.0)

        if lr_scheduler:
            lr_scheduler.step()

        return loss

    @cstorch.step_closure
    def post_training_step(loss: torch.Tensor):
        print("Loss: ", loss.item())

    dataloader = cstorch.utils.data.DataLoader(
        train_dataloader_fn,
        args.batch_size,
    )
    executor = cstorch.utils.data.DataExecutor(
        dataloader=dataloader,
        num_steps=args.num_steps,
        checkpoint_steps=args.checkpoint_steps,
        cs_config=cstorch.utils.CSConfig(),
    )

    for i, batch in enumerate(executor):
        loss = training_step(batch)

        post_training_step(loss)

        # Always call save_checkpoint, but is only truly
        # run every checkpoint_steps steps
        save_checkpoint(global_step + i)

    print(f"Global rate: {executor.profiler.global_rate():.1f} samples/s")


if __name__ == "__main__":
    main()
