"""Seed 001's "Writing Custom Metrics" example, run as written with only the import changed.

The seed's placeholders (`...`) are filled with a metric that tracks the largest absolute error;
its `reset` re-registers the state, the cstorch way, which torchtally turns into an in-place copy.
"""

from __future__ import annotations

import pytest
import torch

import torchtally as cstorch


class CustomMetric(cstorch.metrics.Metric):
    def __init__(self, name: str):
        super().__init__(name)

    def reset(self):
        self.register_state("max_error", torch.tensor(0.0))
        self.register_state("count", torch.tensor(0.0))

    def update(self, *args, **kwargs):
        labels, predictions = args
        self.max_error.copy_(torch.maximum(self.max_error, (labels - predictions).abs().max()))
        self.count.add_(labels.numel())

    def compute(self):
        return self.max_error.clone()


def test_custom_metric_from_the_seed_runs_as_written() -> None:
    metric = CustomMetric("max_abs_error")
    assert metric.name == "max_abs_error"
    metric(torch.tensor([1.0, 2.0]), torch.tensor([1.5, 2.0]))
    metric.update(torch.tensor([0.0]), torch.tensor([-2.0]))
    assert float(metric) == 2.0
    assert float(metric.count) == 3.0


def test_reset_that_re_registers_keeps_state_addresses() -> None:
    metric = CustomMetric("m")
    addresses = [b.data_ptr() for b in metric.buffers()]
    metric.update(torch.tensor([3.0]), torch.tensor([0.0]))
    metric.reset()
    assert [b.data_ptr() for b in metric.buffers()] == addresses
    assert float(metric) == 0.0 and int(metric.num_updates) == 0


def test_custom_metric_is_traceable() -> None:
    report = cstorch.testing.assert_traceable(
        CustomMetric("m"), torch.tensor([1.0, 2.0]), torch.tensor([0.0, 4.0])
    )
    assert report.graphs == 1


def test_accuracy_usage_from_the_seed_runs_as_written() -> None:
    """Seed 001's evaluation snippet; the `...` are a linear model and generated batches."""
    torch.manual_seed(0)
    inputs = torch.randn(96, 6)
    targets = (inputs[:, 0] > 0).long() + (inputs[:, 1] > 0).long()
    loader_fn = lambda: torch.utils.data.DataLoader(  # noqa: E731
        torch.utils.data.TensorDataset(inputs, targets), batch_size=32
    )
    model = torch.nn.Linear(6, 3)
    backend = cstorch.backend("CPU")

    # --- the seed, as written ---
    compiled_model = cstorch.compile(model, backend)

    accuracy = cstorch.metrics.AccuracyMetric("accuracy")

    @cstorch.trace
    def eval_step(batch):
        inputs, targets = batch
        outputs = compiled_model(inputs)

        accuracy(
            labels=targets.clone(),
            predictions=outputs.argmax(-1).int(),
        )

    executor = cstorch.utils.data.DataExecutor(
        cstorch.utils.data.DataLoader(loader_fn), num_steps=3
    )
    for batch in executor:
        eval_step(batch)

    # Log accumulated eval metric
    print(f"Accuracy: {float(accuracy)}")
    # --- end of the seed ---

    with torch.no_grad():
        expected = (model(inputs).argmax(-1) == targets).double().mean().item()
    assert float(accuracy) == pytest.approx(expected, rel=1e-7)  # float32, as cstorch
    assert int(accuracy.num_updates) == 3
