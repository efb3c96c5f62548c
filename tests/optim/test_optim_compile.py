"""`optimizer.step()` and `scheduler.step()` trace into one graph under
`torch.compile(fullgraph=True)`, with no graph break and no recompilation as the rate changes.

The `aot_eager` backend runs AOTAutograd's functionalization (what inductor and CUDA graphs
see) without paying for code generation. The models are float32: torch 2.13 drops in-place
writes to 0-dim float64 CPU tensors under compile (see the last test)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
import torch._dynamo
from _optim_support import TinyModel, batches, paired_params
from torch._dynamo.eval_frame import _debug_get_cache_entry_list
from torch._dynamo.testing import CompileCounterWithBackend
from torch._dynamo.utils import counters

from torchtally import optim
from torchtally.optim import lr_scheduler

STEPS = 6


def _run(
    model: TinyModel, step_fn: Callable[[], None], optimizer: torch.optim.Optimizer
) -> list[float]:
    rates = []
    for x, y in batches(STEPS, torch.float32):
        optimizer.zero_grad()
        ((model(x) - y) ** 2).mean().backward()
        step_fn()
        rates.append(float(optimizer.param_groups[0]["lr"]))
    return rates


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [
        ("SGD", {"momentum": 0.9, "dampening": 0.1, "weight_decay": 0.01}),
        ("Adam", {"amsgrad": True}),
    ],
)
def test_step_and_schedule_compile_to_one_graph(name: str, kwargs: dict[str, object]) -> None:
    def build(model: TinyModel) -> tuple[optim.Optimizer, lr_scheduler.LRScheduler]:
        opt = optim.OPTIMIZERS[name](model.parameters(), lr=0.05, **kwargs)
        warmup = lr_scheduler.LinearLR(opt, 0.01, 0.05, total_iters=3)
        decay = lr_scheduler.CosineDecayLR(opt, 0.05, 0.0, total_iters=10)
        return opt, lr_scheduler.SequentialLR(opt, [warmup, decay], milestones=[3])

    eager_model, compiled_model = TinyModel(torch.float32), TinyModel(torch.float32)
    eager_opt, eager_schedule = build(eager_model)
    compiled_opt, compiled_schedule = build(compiled_model)

    def train_step() -> None:
        compiled_opt.step()
        compiled_schedule.step()

    def eager_step() -> None:
        eager_opt.step()
        eager_schedule.step()

    torch._dynamo.reset()
    counters.clear()
    counter = CompileCounterWithBackend("aot_eager")
    compiled = torch.compile(train_step, backend=counter, fullgraph=True)
    compiles_after_step: list[int] = []

    def counted_step() -> None:
        compiled()
        compiles_after_step.append(counter.frame_count)

    eager_rates = _run(eager_model, eager_step, eager_opt)
    compiled_rates = _run(compiled_model, counted_step, compiled_opt)

    # Dynamo may trace the frame twice on its first call (it restarts once to specialize the
    # float hyperparameters); what matters is one graph, kept for every later step.
    assert counters["stats"]["unique_graphs"] == 1
    assert len(_debug_get_cache_entry_list(train_step.__code__)) == 1
    assert len(set(compiles_after_step)) == 1, "recompiled as the rate changed"
    assert dict(counters["graph_break"]) == {}
    assert len(set(eager_rates)) == STEPS, "the schedule should change the rate every step"
    assert compiled_rates == pytest.approx(eager_rates, abs=1e-7)
    for _, p, q in paired_params(compiled_model, eager_model):
        torch.testing.assert_close(p, q, atol=1e-6, rtol=1e-6)


def test_compiled_step_refuses_a_0_dim_float64_cpu_parameter() -> None:
    # torch 2.13 treats such a tensor as a Python float and drops its in-place update; the
    # optimizer raises instead of leaving the parameter silently unchanged.
    w = torch.tensor(1.0, dtype=torch.float64, requires_grad=True)
    opt = optim.SGD([w], lr=0.1)
    w.backward()
    torch._dynamo.reset()
    with pytest.raises(Exception, match="0-dim float64 CPU tensor"):
        torch.compile(opt.step, backend="aot_eager", fullgraph=True)()
    opt.step()  # eager is fine
    assert float(w.detach()) == pytest.approx(0.9)


@pytest.mark.slow
def test_every_other_optimizer_compiles_to_one_graph_and_matches_eager() -> None:
    for name, cls in optim.OPTIMIZERS.items():
        if name in ("SGD", "Adam"):
            continue  # covered above, with a scheduler
        torch._dynamo.reset()
        counters.clear()
        eager_model, compiled_model = TinyModel(torch.float32), TinyModel(torch.float32)
        # Muon takes matrices only.
        keep = (lambda p: p.dim() >= 2) if name == "Muon" else (lambda p: True)
        eager_opt = cls([p for p in eager_model.parameters() if keep(p)], lr=0.01)
        compiled_opt = cls([p for p in compiled_model.parameters() if keep(p)], lr=0.01)
        compiled = torch.compile(compiled_opt.step, backend="aot_eager", fullgraph=True)
        for model, opt, step in (
            (eager_model, eager_opt, eager_opt.step),
            (compiled_model, compiled_opt, compiled),
        ):
            for x, y in batches(3, torch.float32):
                opt.zero_grad()
                ((model(x) - y) ** 2).mean().backward()
                step()
        assert counters["stats"]["unique_graphs"] == 1, name
        assert dict(counters["graph_break"]) == {}, name
        for _, p, q in paired_params(compiled_model, eager_model):
            torch.testing.assert_close(p, q, atol=1e-6, rtol=1e-6, msg=name)


def _weight_decay_run(
    name: str, compile_step: bool
) -> tuple[TinyModel, list[float], CompileCounterWithBackend | None]:
    from torchtally.optim import weight_decay_scheduler

    model = TinyModel(torch.float32)
    keep = (lambda p: p.dim() >= 2) if name == "Muon" else (lambda p: True)
    opt = optim.OPTIMIZERS[name]([p for p in model.parameters() if keep(p)], lr=0.05)
    # Reaches 0 at step 3 and stays there: neither the change nor the zero may recompile.
    schedule = weight_decay_scheduler.LinearWD(opt, 0.3, 0.0, total_iters=3)

    def train_step() -> None:
        opt.step()
        schedule.step()

    counter = None
    step_fn: Callable[[], None] = train_step
    if compile_step:
        counter = CompileCounterWithBackend("aot_eager")
        step_fn = torch.compile(train_step, backend=counter, fullgraph=True)
    decays = []
    for x, y in batches(STEPS, torch.float32):
        opt.zero_grad()
        ((model(x) - y) ** 2).mean().backward()
        step_fn()
        decays.append(float(opt.param_groups[0]["weight_decay"]))
    return model, decays, counter


@pytest.mark.parametrize("name", ["SGD", "AdamW"])
def test_scheduled_weight_decay_compiles_to_one_graph(name: str) -> None:
    torch._dynamo.reset()
    counters.clear()
    eager_model, eager_decays, _ = _weight_decay_run(name, compile_step=False)
    compiled_model, compiled_decays, counter = _weight_decay_run(name, compile_step=True)
    assert counter is not None
    assert counters["stats"]["unique_graphs"] == 1
    assert dict(counters["graph_break"]) == {}
    assert eager_decays == pytest.approx([0.2, 0.1, 0.0, 0.0, 0.0, 0.0], abs=1e-7)
    assert compiled_decays == pytest.approx(eager_decays, abs=1e-7)
    for _, p, q in paired_params(compiled_model, eager_model):
        torch.testing.assert_close(p, q, atol=1e-6, rtol=1e-6)


@pytest.mark.slow
def test_every_optimizer_with_scheduled_weight_decay_compiles_to_one_graph() -> None:
    for name in optim.OPTIMIZERS:
        if name in ("SGD", "AdamW", "Rprop"):
            continue  # covered above; Rprop has no weight decay
        torch._dynamo.reset()
        counters.clear()
        eager_model, _, _ = _weight_decay_run(name, compile_step=False)
        compiled_model, _, _ = _weight_decay_run(name, compile_step=True)
        assert counters["stats"]["unique_graphs"] == 1, name
        assert dict(counters["graph_break"]) == {}, name
        for _, p, q in paired_params(compiled_model, eager_model):
            torch.testing.assert_close(p, q, atol=1e-6, rtol=1e-6, msg=name)
