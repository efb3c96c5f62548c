"""Import time: `import torch` alone against `import torch; import torchtally` (issue 16 target:
torchtally adds at most 0.2 s), each in a fresh interpreter, interleaved, medians.

Also counts the modules torchtally adds on top of torch, and whether the compiler stack
(torch._dynamo, sympy) was loaded: it should load only when a compiled path is first used.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from typing import Any

_TIMED = """
import sys, time
t0 = time.perf_counter()
import torch
t1 = time.perf_counter()
before = len(sys.modules)
{extra}
t2 = time.perf_counter()
print(t1 - t0, t2 - t1, len(sys.modules) - before,
      int(any(m.startswith("torch._dynamo") for m in sys.modules)), int("sympy" in sys.modules))
"""

CONTENDERS = {
    "torch": "",
    "torch + torchtally": "import torchtally",
    "torch + torchtally.metrics + an eager update": (
        "import torchtally.metrics as m; m.AccuracyMetric()(torch.tensor([0, 1]), torch.tensor([0, 1]))"
    ),
}


def _once(extra: str) -> list[float]:
    out = subprocess.run(
        [sys.executable, "-c", _TIMED.format(extra=extra)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return [float(x) for x in out]


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args(argv)
    samples: dict[str, list[list[float]]] = {name: [] for name in CONTENDERS}
    _once("")  # warm the file cache
    for _ in range(args.rounds):
        for name, extra in CONTENDERS.items():
            samples[name].append(_once(extra))
    base = statistics.median(s[0] + s[1] for s in samples["torch"])
    rows = []
    for name, runs in samples.items():
        total = statistics.median(s[0] + s[1] for s in runs)
        row = {
            "section": "import",
            "contender": name,
            "median import s": round(total, 3),
            "added over torch s": round(total - base, 3),
            "modules added over torch": int(statistics.median(s[2] for s in runs)),
            "torch._dynamo loaded": bool(runs[-1][3]),
            "sympy loaded": bool(runs[-1][4]),
            "rounds": args.rounds,
        }
        rows.append(row)
        print(json.dumps(row))
    return rows


if __name__ == "__main__":
    main()
