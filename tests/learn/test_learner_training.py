"""A non-finite loss is reported at the step it happened ("raise", "stop", "skip"), gradient
accumulation and mixed precision: each against a hand-written torch loop (torch.optim.SGD,
F.cross_entropy, torch.autocast) over the same batches."""

from __future__ import annotations

import math
from typing import Any

import pytest
import torch
import torch.nn.functional as F

import torchtally as cstorch
from torchtally.amp import get_half_dtype
from torchtally.learn import NonFiniteLossError
from torchtally.learn._learner.learner import Learner
from torchtally.learn._outputs import ClassificationOutput
from torchtally.metrics import MeanMetric

SAMPLES, BATCH = 96, 16  # 6 train steps per epoch


def data(poison_batch: int | None = None) -> torch.utils.data.TensorDataset:
    """Blobs plus a column that is NaN for the samples of batch `poison_batch` (1-based)."""
    gen = torch.Generator().manual_seed(5)
    labels = torch.arange(SAMPLES) % 3
    centres = torch.tensor([[2.0, 0.0], [-2.0, 1.0], [0.0, -2.0]])
    inputs = centres[labels] + torch.randn(SAMPLES, 2, generator=gen)
    poison = torch.zeros(SAMPLES)
    if poison_batch is not None:
        poison[(poison_batch - 1) * BATCH : poison_batch * BATCH] = math.nan
    return torch.utils.data.TensorDataset(inputs, labels, poison)


def step(model: Any, batch: Any) -> ClassificationOutput:
    inputs, labels, poison = batch
    logits = model(inputs)
    return ClassificationOutput(F.cross_entropy(logits, labels) + poison.sum(), logits, labels)


def learner_for(model: torch.nn.Module, **kwargs: Any) -> Learner:
    return Learner(
        model,
        cstorch.optim.SGD(model.parameters(), lr=0.3),
        train_step=step,
        metrics={"train": [MeanMetric("loss")]},
        log_every=1,
        **kwargs,
    )


def loader(dataset: torch.utils.data.Dataset) -> torch.utils.data.DataLoader:
    return torch.utils.data.DataLoader(dataset, batch_size=BATCH)


def reference(
    model: torch.nn.Module, epochs: int, skip: set[int] = frozenset(), accumulate: int = 1
) -> list[torch.Tensor]:
    """torch.optim.SGD over the clean batches, skipping global steps `skip`."""
    optimizer = torch.optim.SGD(model.parameters(), lr=0.3)
    batches = list(loader(data()))
    global_step = 0
    for _ in range(epochs):
        for index, (inputs, labels, _) in enumerate(batches, 1):
            global_step += 1
            if global_step not in skip:
                (F.cross_entropy(model(inputs), labels) / accumulate).backward()
            if index % accumulate == 0 or index == len(batches):
                optimizer.step()
                optimizer.zero_grad()
    return [p.detach().clone() for p in model.parameters()]


def fresh_model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Linear(2, 3)


def test_nan_loss_raises_at_its_step_naming_it(tmp_path):
    learner = learner_for(fresh_model(), num_epochs=2, logdir=tmp_path)
    learner.fit(loader(data()))  # epoch 1 clean, checkpointed
    learner.num_epochs = 3
    with pytest.raises(NonFiniteLossError, match=r"at train step 16 \(epoch 3, step 4 of"):
        learner.fit(loader(data(poison_batch=4)), resume=True)


def test_nan_loss_raise_stops_before_the_next_step():
    dataset = data(poison_batch=3)
    learner = learner_for(fresh_model(), num_epochs=3)
    with pytest.raises(NonFiniteLossError) as caught:
        learner.fit(loader(dataset))
    error = caught.value
    assert (error.epoch, error.step, error.global_step) == (1, 3, 3)
    assert math.isnan(error.value)
    assert learner.global_step == 3  # step 4 never ran
    assert max(r.step for r in learner.history) <= 3
    assert learner.non_finite is not None and learner.non_finite[:3] == (1, 3, 3)


def test_nan_loss_stop_ends_the_run_there_without_checkpointing_it(tmp_path):
    learner = learner_for(fresh_model(), num_epochs=3, logdir=tmp_path, on_nan="stop")
    stopped = learner.fit(loader(data(poison_batch=2)))
    assert stopped is not None
    assert learner.global_step == 2 and learner.stop_requested
    assert learner.non_finite is not None and learner.non_finite[:3] == (1, 2, 2)
    folder = tmp_path / "checkpoints"
    assert not folder.exists() or not any(folder.iterdir())


def test_nan_loss_skip_undoes_that_steps_updates():
    model = fresh_model()
    learner = learner_for(model, num_epochs=2, on_nan="skip")
    learner.fit(loader(data(poison_batch=5)))
    assert learner.skipped_steps == [5, 11]
    expected = reference(fresh_model(), 2, skip={5, 11})
    for got, want in zip(model.parameters(), expected):
        torch.testing.assert_close(got.detach(), want, rtol=1e-5, atol=1e-6)
    # The epoch's loss is the mean over the 5 finite batches (equal sizes), by hand.
    check = fresh_model()
    optimizer = torch.optim.SGD(check.parameters(), lr=0.3)
    losses = []
    for index, (inputs, labels, _) in enumerate(loader(data()), 1):
        if index == 5:
            continue
        loss = F.cross_entropy(check(inputs), labels)
        losses.append(loss.item())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    epoch_1 = [r for r in learner.history if r.epoch == 1 and r.name == "loss"][-1]
    assert epoch_1.value == pytest.approx(sum(losses) / len(losses), rel=1e-5)


@pytest.mark.parametrize("accumulate", [2, 4])
def test_gradient_accumulation_equals_the_summed_gradients(accumulate):
    model = fresh_model()
    learner = learner_for(model, num_epochs=2, accumulation_steps=accumulate)
    learner.fit(loader(data()))
    expected = reference(fresh_model(), 2, accumulate=accumulate)
    for got, want in zip(model.parameters(), expected):
        torch.testing.assert_close(got.detach(), want, rtol=1e-5, atol=1e-6)


def test_mixed_precision_runs_the_step_under_autocast():
    model = fresh_model()
    seen: list[torch.dtype] = []

    def spy(model: Any, batch: Any) -> ClassificationOutput:
        out = step(model, batch)
        seen.append(out.output.dtype)
        return out

    learner = Learner(
        model,
        cstorch.optim.SGD(model.parameters(), lr=0.3),
        train_step=spy,
        metrics={"train": [MeanMetric("loss")]},
        num_epochs=1,
        mixed_precision=True,
    )
    learner.fit(loader(data()))
    assert set(seen) == {get_half_dtype()}
    check = fresh_model()
    optimizer = torch.optim.SGD(check.parameters(), lr=0.3)
    for inputs, labels, _ in loader(data()):
        with torch.autocast("cpu", dtype=get_half_dtype()):
            loss = F.cross_entropy(check(inputs), labels)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    for got, want in zip(model.parameters(), check.parameters()):
        torch.testing.assert_close(got.detach(), want.detach(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"on_nan": "ignore"}, ValueError, "`on_nan` must be one of 'raise', 'stop', 'skip'"),
        ({"accumulation_steps": 0}, ValueError, "accumulation_steps"),
        ({"mixed_precision": "yes"}, TypeError, "`mixed_precision` must be a bool"),
    ],
)
def test_bad_training_options_are_named(kwargs, error, match):
    with pytest.raises(error, match=match):
        learner_for(fresh_model(), **kwargs)
