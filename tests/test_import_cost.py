"""`import torchtally` adds little to `import torch` (issue 16).

The compiler stack (torch._dynamo, torch._inductor, sympy: about 1,400 modules) and the periphery
(learner, NeuroBench harness, TorchMetrics layer) load only when first used. Counted in a fresh
interpreter, because this test session has long since imported all of them. Timings live in
`benchmarks/bench_import.py`; the module count is the stable proxy checked here.
"""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import json, sys
import torch
before = set(sys.modules)
import torchtally
import torchtally.metrics, torchtally.functional
from torchtally.metrics import AccuracyMetric
AccuracyMetric()(torch.tensor([0, 1]), torch.tensor([0, 1]))
added = sorted(set(sys.modules) - before)
print(json.dumps(added))
"""

HEAVY = ("torch._dynamo", "torch._inductor", "sympy", "torch._functorch.aot_autograd")
LAZY = ("torchtally.testing", "torchtally.learn", "torchtally.bench", "torchtally.compat")


def _added_modules() -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=300
    ).stdout
    return list(json.loads(out.strip().splitlines()[-1]))


def test_import_and_an_eager_metric_load_no_compiler_and_no_periphery() -> None:
    added = _added_modules()
    heavy = [m for m in added if m.startswith(HEAVY)]
    assert not heavy, f"`import torchtally` loaded compiler modules: {heavy[:10]}"
    lazy = [m for m in added if m.startswith(LAZY)]
    assert not lazy, f"`import torchtally` loaded periphery eagerly: {lazy}"
    # Before lazy loading, 1,378 modules came with torchtally.
    assert len(added) < 400, f"{len(added)} modules added: {added[:50]}"


def test_lazy_submodules_still_resolve_as_attributes() -> None:
    import torchtally

    assert torchtally.testing.assert_traceable is not None
    assert torchtally.learn.Learner is not None
    assert hasattr(torchtally.bench, "Benchmark")
    assert {"testing", "learn", "bench", "compat"} <= set(dir(torchtally))


def test_a_cstorch_import_loads_no_metric_catalog() -> None:
    """`import torchtally as cstorch` gives the cstorch layer; the metric catalog (about 140
    modules) loads on first use of `torchtally.metrics`, `functional` or `distributed`."""
    probe = (
        "import json, sys, torch\n"
        "before = set(sys.modules)\n"
        "import torchtally as cstorch\n"
        "cstorch.optim.SGD, cstorch.backend, cstorch.utils.data.DataLoader\n"
        "print(json.dumps(sorted(set(sys.modules) - before)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=300
    ).stdout
    added = json.loads(out.strip().splitlines()[-1])
    catalog = ("torchtally.metrics", "torchtally.functional", "torchtally.distributed")
    assert not [m for m in added if m.startswith(catalog)], added
    assert len(added) < 120, f"{len(added)} modules added: {added[:50]}"


def test_the_metric_catalog_resolves_as_attributes() -> None:
    import torchtally

    assert torchtally.metrics.AccuracyMetric is not None
    assert torchtally.functional is not None and torchtally.distributed is not None
    assert {"metrics", "functional", "distributed"} <= set(dir(torchtally))
