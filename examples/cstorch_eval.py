"""The cstorch porting guide's "Full Example (Evaluation)", filled in and runnable on CPU.

It evaluates a checkpoint written by `cstorch_train.py` on held-out blobs, accumulating
`cstorch.metrics.AccuracyMetric` inside the traced step. A cstorch script differs only in its
import lines (`cerebras_pytorch.experimental` for `torchtally`) and backend ("CSX"). Slips in
the guide's skeleton are corrected: the executor is a `DataExecutor` (the guide builds a second
`DataLoader`), the closure declares both counters it updates, and `AccuracyMetric` takes just
its name (as in the guide's metrics page).

Run:
    python examples/cstorch_eval.py --checkpoint runs/cstorch/checkpoint_199.mdl

It prints "Eval Loss: ..." and "Eval Accuracy: ...".
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import torch
from cstorch_train import MLP, make_dataset

import torchtally as cstorch
import torchtally.metrics as metrics


def eval_dataloader_fn(batch_size: int, num_samples: int = 300) -> torch.utils.data.DataLoader:
    """The input function of the held-out data (a seed the training data does not use)."""
    dataset = make_dataset(num_samples, seed=3)
    return torch.utils.data.DataLoader(dataset, batch_size=batch_size, shuffle=False)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--num-steps", type=int, default=None, help="default: one pass")
    args = parser.parse_args(argv)

    backend = cstorch.backend("CPU")

    with backend.device:
        model: torch.nn.Module = MLP()

    compiled_model = cstorch.compile(model, backend)
    compiled_model.eval()

    loss_fn: torch.nn.Module = torch.nn.CrossEntropyLoss()

    accuracy = metrics.AccuracyMetric("accuracy")

    state_dict = cstorch.load(args.checkpoint)
    model.load_state_dict(state_dict["model"])

    dataloader = cstorch.utils.data.DataLoader(
        eval_dataloader_fn,
        args.batch_size,
    )
    executor = cstorch.utils.data.DataExecutor(
        dataloader,
        num_steps=args.num_steps,
        cs_config=cstorch.utils.CSConfig(),
    )

    @cstorch.compile_step
    def evaluation_step(batch):
        inputs, targets = batch
        outputs = compiled_model(inputs)
        loss = loss_fn(outputs, targets)

        accuracy(
            labels=targets.clone(),
            predictions=outputs.argmax(-1).int(),
        )

        return loss

    total_loss = 0
    total_steps = 0

    @cstorch.step_closure
    def post_eval_step(loss: torch.Tensor):
        nonlocal total_loss, total_steps

        total_loss += loss.item()
        total_steps += 1

    with torch.no_grad():
        for batch in executor:
            loss = evaluation_step(batch)

            post_eval_step(loss)

    print(f"Eval Loss: {total_loss / total_steps}")
    print(f"Eval Accuracy: {float(accuracy)}")


if __name__ == "__main__":
    main()
