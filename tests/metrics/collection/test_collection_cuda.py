"""A model's evaluation and training steps on CUDA with six metrics in them: the evaluation loop
makes no host sync, a training step captured whole in a CUDA graph (forward, loss, backward,
a capturable optimizer step, the metric updates) replays to the metrics' eager values, and so
does a step compiled with `mode="reduce-overhead"` (Inductor's CUDA graphs), in one graph.

Skipped without CUDA (CI has none).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
from benchmarks.bench_gpu_step import CLASSES, six_torchtally
from torch import Tensor, nn

import torchtally.metrics as tt

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

CUDA = torch.device("cuda")
FEATURES, ROWS, STEPS = 32, 64, 6


def six_metrics() -> tt.MetricCollection:
    """The GPU step benchmark's six metrics (accuracy, macro P/R/F1, top-3, binned AUROC)."""
    return six_torchtally(torch.device("cpu"))


def model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(FEATURES, 64), nn.ReLU(), nn.Linear(64, CLASSES))


def data() -> list[tuple[Tensor, Tensor]]:
    g = torch.Generator().manual_seed(1)
    return [
        (
            torch.randn(ROWS, FEATURES, generator=g).to(CUDA),
            torch.randint(0, CLASSES, (ROWS,), generator=g).to(CUDA),
        )
        for _ in range(STEPS)
    ]


def assert_same_values(got: dict[str, Tensor], want: dict[str, Tensor]) -> None:
    assert got.keys() == want.keys()
    for name in want:
        torch.testing.assert_close(got[name], want[name], msg=f"metric {name}")


def test_an_eval_loop_with_a_model_and_six_metrics_makes_no_host_sync() -> None:
    net, metrics, batches = model().to(CUDA).eval(), six_metrics().to(CUDA), data()
    with torch.no_grad():
        metrics.update(batches[0][1], net(batches[0][0]).softmax(-1))  # lazy scratch, if any
        torch.cuda.synchronize()
        torch.cuda.set_sync_debug_mode("error")
        try:
            for inputs, labels in batches[1:]:
                metrics.update(labels, net(inputs).softmax(-1))
        finally:
            torch.cuda.set_sync_debug_mode("default")
    expected = six_metrics()
    with torch.no_grad():
        cpu_net = model()
        for inputs, labels in batches:
            expected.update(labels.cpu(), cpu_net(inputs.cpu()).softmax(-1))
    got = {k: v.cpu() for k, v in metrics.compute().items()}
    for name, want in expected.compute().items():
        torch.testing.assert_close(got[name], want, rtol=1e-5, atol=1e-6, msg=f"metric {name}")


def _train_step(
    net: nn.Module, optimizer: torch.optim.Optimizer, metrics: tt.MetricCollection
) -> Callable[[Tensor, Tensor], Tensor]:
    def step(inputs: Tensor, labels: Tensor) -> Tensor:
        logits = net(inputs)
        metrics.update(labels, logits.detach().softmax(-1))
        loss = nn.functional.cross_entropy(logits, labels)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=False)
        return loss.detach()

    return step


def _eager_reference(batches: list[tuple[Tensor, Tensor]]) -> tuple[dict[str, Tensor], Tensor]:
    net = model().to(CUDA)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    metrics = six_metrics().to(CUDA)
    step = _train_step(net, optimizer, metrics)
    losses = torch.stack([step(inputs, labels) for inputs, labels in batches])
    return metrics.compute(), losses


def test_a_training_step_captured_in_a_cuda_graph_replays_to_the_eager_metrics() -> None:
    batches = data()
    want, want_losses = _eager_reference(batches)

    net = model().to(CUDA)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    metrics = six_metrics().to(CUDA)
    step = _train_step(net, optimizer, metrics)
    static_inputs, static_labels = batches[0][0].clone(), batches[0][1].clone()
    # Warm-up on a side stream (gradients allocated), then back to the initial weights and
    # empty metrics so the replays repeat the eager run step for step.
    initial = {k: v.clone() for k, v in net.state_dict().items()}
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        step(static_inputs, static_labels)
    torch.cuda.current_stream().wait_stream(side)
    with torch.no_grad():
        for name, value in net.state_dict().items():
            value.copy_(initial[name])
    metrics.reset()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_loss = step(static_inputs, static_labels)
    losses = []
    for inputs, labels in batches:
        static_inputs.copy_(inputs)
        static_labels.copy_(labels)
        graph.replay()
        losses.append(static_loss.clone())
    torch.testing.assert_close(torch.stack(losses), want_losses)
    assert_same_values(metrics.compute(), want)


def test_a_step_compiled_with_cuda_graphs_is_one_graph_and_matches_eager() -> None:
    from torch._dynamo.utils import counters

    batches = data()
    net = model().to(CUDA)
    metrics = six_metrics().to(CUDA)

    def forward(inputs: Tensor, labels: Tensor) -> Tensor:
        logits = net(inputs)
        metrics.update(labels, logits.detach().softmax(-1))
        return nn.functional.cross_entropy(logits, labels)

    torch._dynamo.reset()
    counters.clear()
    compiled = torch.compile(forward, mode="reduce-overhead", fullgraph=True)
    with torch.no_grad():
        for inputs, labels in batches:
            compiled(inputs, labels)
    # One graph for every step (a recompile would add one), and Inductor ran it as a CUDA
    # graph: it skips graphing with a reason counted here (a mutated non-static input, a CPU
    # tensor, a sync).
    assert counters["stats"]["unique_graphs"] == 1
    assert counters["inductor"]["cudagraph_skips"] == 0
    expected = six_metrics().to(CUDA)
    eager_net = model().to(CUDA)
    with torch.no_grad():
        for inputs, labels in batches:
            expected.update(labels, eager_net(inputs).softmax(-1))
    assert_same_values(metrics.compute(), expected.compute())
