"""A model-zoo-style train-then-eval flow, driven by a config dict, as a Cerebras user writes it.

The structure follows the Cerebras model zoo's cstorch flows: a `params` dict (what its YAML
files hold) with `train_input`, `eval_input`, `model`, `optimizer` and `runconfig` sections; a
model whose forward returns the loss and updates eval metrics when not training;
`configure_optimizer` and `configure_lr_scheduler` built from the optimizer section (a list
of schedules, dynamic loss scaling, gradient clipping); a `DataExecutor` whose step count comes
from `compute_num_steps`; step closures that log to TensorBoard every `log_steps`; checkpoint
closures on `checkpoint_steps`; and an eval run that loads the last checkpoint and reports
metrics. Only the import line differs from a cstorch script (`import cerebras.pytorch as
cstorch`).

Run:
    python examples/modelzoo_flow.py --model-dir runs/modelzoo

The flow prints `train/loss <step> <value>` lines and one `eval/<metric> <value>` line per
metric, and writes `checkpoint_<step>.mdl` and TensorBoard logs under the model dir.
"""

from __future__ import annotations

import argparse
import copy
import os
from collections.abc import Sequence
from typing import Any

import torch

import torchtally as cstorch

PARAMS: dict[str, Any] = {
    "train_input": {"batch_size": 16, "num_samples": 512, "seed": 1, "shuffle": True},
    "eval_input": {"batch_size": 32, "num_samples": 256, "seed": 2, "shuffle": False},
    "model": {"num_features": 8, "hidden_size": 32, "num_classes": 4, "compute_eval_metrics": True},
    "optimizer": {
        "optimizer_type": "AdamW",
        "weight_decay": 0.01,
        "betas": [0.9, 0.98],
        "learning_rate": [
            {
                "scheduler": "Linear",
                "initial_learning_rate": 0.0,
                "end_learning_rate": 0.01,
                "total_iters": 8,
            },
            {
                "scheduler": "CosineDecay",
                "initial_learning_rate": 0.01,
                "end_learning_rate": 0.001,
                "total_iters": 40,
            },
        ],
        "loss_scaling_factor": "dynamic",
        "initial_loss_scale": 2.0**15,
        "steps_per_increase": 20,
        "max_gradient_norm": 1.0,
    },
    "runconfig": {
        "target_device": "CPU",
        "mode": "train_and_eval",
        "model_dir": "model_dir",
        "max_steps": 48,
        "checkpoint_steps": 16,
        "log_steps": 8,
        "eval_steps": None,
        "checkpoint_path": None,
        "seed": 0,
    },
}


# ------------------------------------------------------------------------------- data and model


def _blobs(
    num_samples: int, num_features: int, num_classes: int, seed: int
) -> torch.utils.data.TensorDataset:
    centres = torch.randn(num_classes, num_features, generator=torch.Generator().manual_seed(0))
    generator = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, num_classes, (num_samples,), generator=generator)
    inputs = centres[labels] + 0.8 * torch.randn(num_samples, num_features, generator=generator)
    return torch.utils.data.TensorDataset(inputs, labels)


def input_fn(params: dict[str, Any], split: str) -> torch.utils.data.DataLoader:
    """The data function the model zoo passes to `cstorch.utils.data.DataLoader`."""
    section, model = params[f"{split}_input"], params["model"]
    dataset = _blobs(
        section["num_samples"], model["num_features"], model["num_classes"], section["seed"]
    )
    return torch.utils.data.DataLoader(
        dataset,
        batch_size=section["batch_size"],
        shuffle=section["shuffle"],
        drop_last=True,
        generator=torch.Generator().manual_seed(section["seed"]),
    )


def train_input_fn(params: dict[str, Any]) -> torch.utils.data.DataLoader:
    return input_fn(params, "train")


def eval_input_fn(params: dict[str, Any]) -> torch.utils.data.DataLoader:
    return input_fn(params, "eval")


class ClassifierModel(torch.nn.Module):
    """An MLP classifier whose forward returns the loss, updating eval metrics when not training."""

    def __init__(self, params: dict[str, Any]) -> None:
        super().__init__()
        model = params["model"]
        self.num_classes = model["num_classes"]
        self.net = torch.nn.Sequential(
            torch.nn.Linear(model["num_features"], model["hidden_size"]),
            torch.nn.ReLU(),
            torch.nn.Linear(model["hidden_size"], self.num_classes),
        )
        self.loss_fn = torch.nn.CrossEntropyLoss()
        self.compute_eval_metrics = model["compute_eval_metrics"]
        if self.compute_eval_metrics:
            self.accuracy_metric = cstorch.metrics.AccuracyMetric(name="eval/accuracy")
            self.f1_metric = cstorch.metrics.FBetaScoreMetric(
                num_classes=self.num_classes, beta=1.0, average_type="macro", name="eval/macro_f1"
            )
            self.loss_metric = cstorch.metrics.MeanMetric(name="eval/loss")

    def forward(self, batch: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        inputs, labels = batch
        logits = self.net(inputs)
        loss = self.loss_fn(logits, labels)
        if not self.training and self.compute_eval_metrics:
            predictions = logits.argmax(dim=-1)
            self.accuracy_metric(labels=labels, predictions=predictions)
            self.f1_metric(labels=labels, predictions=predictions)
            self.loss_metric(loss)
        return loss

    def eval_metrics(self) -> dict[str, Any]:
        return {m.name: m for m in (self.accuracy_metric, self.f1_metric, self.loss_metric)}


def model_fn(params: dict[str, Any]) -> ClassifierModel:
    return ClassifierModel(params)


# ------------------------------------------------------------------------------------ training


def run_train(params: dict[str, Any]) -> str:
    """Train as the config says; returns the path of the last checkpoint."""
    runconfig = params["runconfig"]
    model_dir = runconfig["model_dir"]
    os.makedirs(model_dir, exist_ok=True)
    torch.manual_seed(runconfig["seed"])

    backend = cstorch.backend(runconfig["target_device"], artifact_dir=model_dir)
    with backend.device:
        model = model_fn(params)
    compiled_model = cstorch.compile(model, backend)
    compiled_model.train()

    optimizer_params = copy.deepcopy(params["optimizer"])
    optimizer_type = optimizer_params.pop("optimizer_type")
    learning_rate = optimizer_params.pop("learning_rate")
    loss_scaling_factor = optimizer_params.pop("loss_scaling_factor", 1.0)
    initial_loss_scale = optimizer_params.pop("initial_loss_scale", None)
    steps_per_increase = optimizer_params.pop("steps_per_increase", None)
    max_gradient_norm = optimizer_params.pop("max_gradient_norm", None)

    optimizer = cstorch.optim.configure_optimizer(
        optimizer_type=optimizer_type,
        params=model.parameters(),
        lr=learning_rate[0]["initial_learning_rate"]
        if isinstance(learning_rate, list)
        else learning_rate,
        **optimizer_params,
    )
    lr_scheduler = cstorch.optim.configure_lr_scheduler(optimizer, learning_rate)

    grad_scaler = None
    if loss_scaling_factor == "dynamic":
        grad_scaler = cstorch.amp.GradScaler(
            loss_scale="dynamic",
            init_scale=initial_loss_scale,
            steps_per_increase=steps_per_increase,
        )
    elif loss_scaling_factor != 1.0:
        grad_scaler = cstorch.amp.GradScaler(loss_scale=loss_scaling_factor)

    global_step = 0
    if runconfig["checkpoint_path"] is not None:
        state_dict = cstorch.load(runconfig["checkpoint_path"])
        model.load_state_dict(state_dict["model"])
        optimizer.load_state_dict(state_dict["optimizer"])
        lr_scheduler.load_state_dict(state_dict["lr_scheduler"])
        if grad_scaler is not None and "grad_scaler" in state_dict:
            grad_scaler.load_state_dict(state_dict["grad_scaler"])
        global_step = state_dict["global_step"]

    writer = cstorch.utils.tensorboard.SummaryWriter(log_dir=os.path.join(model_dir, "train"))

    @cstorch.trace
    def training_step(batch: Any) -> torch.Tensor:
        loss = compiled_model(batch)
        cstorch.amp.optimizer_step(
            loss, optimizer, grad_scaler, max_gradient_norm=max_gradient_norm
        )
        lr_scheduler.step()
        return loss

    @cstorch.step_closure
    def post_training_step(loss: torch.Tensor, step: int) -> None:
        executor = cstorch.current_executor()
        if step % runconfig["log_steps"] == 0 or executor.on_final_iteration:
            rate = executor.profiler.rate_tracker
            print(f"train/loss {step} {loss.item():.6f}")
            writer.add_scalar("loss", loss.item(), step)
            writer.add_scalar("lr", optimizer.param_groups[0]["lr"], step)
            writer.add_scalar("global_samples_per_sec", rate.global_rate, step)

    checkpoints: list[str] = []

    @cstorch.checkpoint_closure
    def save_checkpoint(step: int) -> None:
        state_dict = {
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "lr_scheduler": lr_scheduler.state_dict(),
            "global_step": step,
        }
        if grad_scaler is not None:
            state_dict["grad_scaler"] = grad_scaler.state_dict()
        path = os.path.join(model_dir, f"checkpoint_{step}.mdl")
        cstorch.save(state_dict, path)
        checkpoints.append(path)

    dataloader = cstorch.utils.data.DataLoader(train_input_fn, params)
    num_steps = cstorch.utils.data.compute_num_steps(
        dataloader, initial_step=global_step, max_steps=runconfig["max_steps"]
    )
    executor = cstorch.utils.data.DataExecutor(
        dataloader,
        num_steps=num_steps,
        checkpoint_steps=runconfig["checkpoint_steps"],
        activation_steps=runconfig["log_steps"],
        writer=writer,
    )
    for step, batch in enumerate(executor, start=global_step + 1):
        loss = training_step(batch)
        post_training_step(loss, step)
        save_checkpoint(step)
    writer.close()
    return checkpoints[-1]


# ---------------------------------------------------------------------------------- evaluation


def run_eval(params: dict[str, Any], checkpoint_path: str) -> dict[str, float]:
    """Evaluate the checkpoint on the eval data; returns {metric name: value}."""
    runconfig = params["runconfig"]
    backend = cstorch.backend(runconfig["target_device"], artifact_dir=runconfig["model_dir"])
    with backend.device:
        model = model_fn(params)
    state_dict = cstorch.load(checkpoint_path)
    model.load_state_dict(state_dict["model"])
    compiled_model = cstorch.compile(model, backend)
    compiled_model.eval()
    writer = cstorch.utils.tensorboard.SummaryWriter(
        log_dir=os.path.join(runconfig["model_dir"], "eval")
    )

    @cstorch.trace
    @torch.no_grad()
    def eval_step(batch: Any) -> torch.Tensor:
        return compiled_model(batch)

    dataloader = cstorch.utils.data.DataLoader(eval_input_fn, params)
    num_steps = cstorch.utils.data.compute_num_steps(
        dataloader, num_steps=runconfig["eval_steps"], num_epochs=1
    )
    executor = cstorch.utils.data.DataExecutor(dataloader, num_steps=num_steps, writer=writer)
    for batch in executor:
        eval_step(batch)

    results = {}
    for name, metric in model.eval_metrics().items():
        value = float(metric)
        results[name] = value
        writer.add_scalar(name, value, state_dict["global_step"])
        print(f"{name} {value:.6f}")
    writer.close()
    return results


def run(params: dict[str, Any]) -> dict[str, Any]:
    """The model zoo's entry point: train and/or eval as `runconfig.mode` says."""
    runconfig = params["runconfig"]
    mode = runconfig["mode"]
    if mode not in ("train", "eval", "train_and_eval"):
        raise ValueError(
            f"runconfig.mode must be train, eval or train_and_eval. Received: {mode!r}"
        )
    out: dict[str, Any] = {}
    checkpoint = runconfig["checkpoint_path"]
    if mode in ("train", "train_and_eval"):
        checkpoint = out["checkpoint"] = run_train(params)
    if mode in ("eval", "train_and_eval"):
        if checkpoint is None:
            raise ValueError("runconfig.checkpoint_path is required to evaluate.")
        out["metrics"] = run_eval(params, checkpoint)
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-dir", default=PARAMS["runconfig"]["model_dir"])
    parser.add_argument("--mode", default=PARAMS["runconfig"]["mode"])
    parser.add_argument("--checkpoint-path", default=None)
    parser.add_argument("--max-steps", type=int, default=PARAMS["runconfig"]["max_steps"])
    args = parser.parse_args(argv)
    params = copy.deepcopy(PARAMS)
    params["runconfig"].update(
        model_dir=args.model_dir,
        mode=args.mode,
        checkpoint_path=args.checkpoint_path,
        max_steps=args.max_steps,
    )
    run(params)


if __name__ == "__main__":
    main()
