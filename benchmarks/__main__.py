"""`python -m benchmarks run [--quick] [--only NAME ...] [--device cuda]`

Runs every benchmark section in its own process (so one section's memory does not skew the
next), collects the JSON rows each prints, and writes `benchmarks/results/results-<date>.md`
and `.json` plus `latest.md`, headed by the machine, the versions and the date. Installs nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import importlib.metadata as md
import json
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).parent / "results"

# name -> (module, arguments for a full run, arguments for --quick, title)
SECTIONS: dict[str, tuple[str, list[str], list[str], str]] = {
    "latency": ("bench_update_latency", [], ["--quick"], "1. Eager update latency (µs per call)"),
    "compile": ("bench_compile", [], ["--calls", "10"], "2. torch.compile(fullgraph=True) matrix"),
    "auroc": (
        "bench_auroc",
        [],
        ["--samples", "1000000", "--rounds", "3"],
        "3-4. AUROC on 10M samples",
    ),
    "collection": ("bench_collection", [], ["--rounds", "10"], "5. Collection vs single metric"),
    "distributed": (
        "bench_distributed",
        [],
        ["--worlds", "2", "--repeats", "3"],
        "6. Distributed sync",
    ),
    "neurobench": ("bench_neurobench", [], ["--rounds", "3"], "7. NeuroBench Benchmark.run"),
    "catalog": ("bench_catalog", [], ["--quick"], "8. Catalog: retrieval, bootstrap, ECE"),
    "import": ("bench_import", [], ["--rounds", "5"], "9. Import time over torch"),
    "grid": ("bench_eager_grid", [], ["--quick"], "10. Eager update grid vs every peer"),
    "step": ("bench_step_overhead", [], ["--quick"], "11. Metrics inside a compiled step"),
    "compat": ("bench_compat", [], ["--rounds", "10"], "12. TorchMetrics collection on compat"),
    "collection_compile": (
        "bench_collection_compile",
        [],
        ["--rounds", "5", "--inner", "3"],
        "13. Collection compile_update vs eager and peers",
    ),
    "ops": (
        "bench_op_count",
        ["--no-files"],
        ["--no-files"],
        "14. Kernel ops per eager update (counted on the meta device)",
    ),
    "whole": ("bench_whole_eval", [], ["--quick"], "15. Whole evaluations on the CPU grid"),
}
GPU_SECTION = ("bench_gpu_step", [], ["--steps", "50"], "GPU: training step with six metrics")
# The eager grid again on the GPU (wall clock to a synchronize), without the compile_update
# contender: a cold compile per case costs minutes of a lent GPU's time.
GPU_GRID_SECTION = (
    "bench_eager_grid",
    ["--device", "cuda", "--no-compile-update", "--rounds", "5"],
    ["--device", "cuda", "--no-compile-update", "--quick"],
    "GPU: eager update grid on CUDA vs every peer",
)


def _versions() -> dict[str, str]:
    names = ["torch", "torchmetrics", "torcheval", "scikit-learn", "neurobench", "numpy"]
    found = {}
    for name in names:
        try:
            found[name] = md.version(name)
        except md.PackageNotFoundError:
            found[name] = "not installed"
    return found


def _machine(device: str = "cpu") -> dict[str, Any]:
    machine = {
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        **_versions(),
    }
    if device == "cuda":
        import torch

        machine["gpu"] = torch.cuda.get_device_name()
        machine["torch"] = torch.__version__  # the build (+cuXXX), not only the release
    return machine


def _run_section(module: str, args: list[str]) -> tuple[list[dict[str, Any]], str, str, int]:
    command = [sys.executable, "-m", f"benchmarks.{module}", *args]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    rows = []
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            with contextlib.suppress(json.JSONDecodeError):
                rows.append(json.loads(line))
    return rows, done.stdout, done.stderr, done.returncode


def _table(rows: list[dict[str, Any]]) -> str:
    columns: list[str] = []
    for row in rows:
        columns += [c for c in row if c not in columns]
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(str(r.get(c, "")) for c in columns) + " |" for r in rows]
    return "\n".join(lines)


def run(quick: bool, only: list[str] | None, device: str) -> Path:
    sections = dict(SECTIONS)
    if device == "cuda":
        sections["gpu"] = GPU_SECTION
        sections["gpu_grid"] = GPU_GRID_SECTION
    machine = _machine(device)
    report = [
        "# torchtally benchmarks",
        "",
        "| machine | |",
        "|---|---|",
        *[f"| {k} | {v} |" for k, v in machine.items()],
        "",
        f"Reproduce: `python -m benchmarks run{' --quick' if quick else ''}"
        f"{' --device cuda' if device == 'cuda' else ''}` (contenders interleaved round-robin; "
        "medians; ratios are what to compare, absolute times vary with machine load).",
        "",
    ]
    results: dict[str, Any] = {"machine": machine, "quick": quick, "sections": {}}
    for name, (module, full_args, quick_args, title) in sections.items():
        if only and name not in only:
            continue
        print(f"== {title}", flush=True)
        rows, stdout, stderr, code = _run_section(module, quick_args if quick else full_args)
        # a section that printed JSON rows has its table above; keep only its other lines
        skip = ("{", "|") if rows else ("{",)
        non_json = "\n".join(line for line in stdout.splitlines() if not line.startswith(skip))
        error = "\n".join(stderr.strip().splitlines()[-15:]) if code != 0 else ""
        section = {"title": title, "rows": rows, "notes": non_json.strip(), "returncode": code}
        if error:
            section["error"] = error
        results["sections"][name] = section
        report += _section_markdown(section)
        print(f"   {len(rows)} rows, exit {code}", flush=True)
    RESULTS.mkdir(exist_ok=True)
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%d-%H%M")
    markdown = RESULTS / f"results-{stamp}.md"
    markdown.write_text("\n".join(report))
    (RESULTS / f"results-{stamp}.json").write_text(json.dumps(results, indent=2))
    (RESULTS / "latest.md").write_text(latest_markdown(RESULTS))
    return markdown


def _section_markdown(section: dict[str, Any], source: str | None = None) -> list[str]:
    """One section of a report: its table, its other output, its error if it failed."""
    lines = [f"## {section['title']}", ""]
    if source:
        lines += [source, ""]
    if section["rows"]:
        lines += [_table(section["rows"]), ""]
    if section.get("notes"):
        lines += ["```", section["notes"], "```", ""]
    if section["returncode"] != 0:
        code = section["returncode"]
        lines += [f"**section exited with code {code}**", ""]
        if section.get("error"):
            lines += ["```", section["error"], "```", ""]
    return lines


def latest_markdown(results: Path) -> str:
    """Every section from the newest run that has it, so that a run of a few sections
    (`--only`) updates those in latest.md instead of replacing the whole report."""
    newest: dict[str, tuple[str, str, dict[str, Any], dict[str, Any]]] = {}
    for path in sorted(results.glob("results-*.json")):  # names sort by time
        data = json.loads(path.read_text())
        if data.get("quick"):
            continue  # quick runs are smoke tests, not results
        for name, section in data["sections"].items():
            newest[name] = (path.stem, data["machine"]["date"], data["machine"], section)
    report = [
        "# torchtally benchmarks: the newest full-size run of each section",
        "",
        "Each section names its run (`results-*.md` beside this file has that run's machine and",
        "versions). Reproduce: `python -m benchmarks run [--only SECTION ...]` (contenders",
        "interleaved round-robin; medians; ratios are what to compare, absolute times vary with",
        "machine load).",
        "",
    ]
    order = [*SECTIONS, "gpu", "gpu_grid"]
    for name in sorted(newest, key=lambda n: order.index(n) if n in order else len(order)):
        stem, date, machine, section = newest[name]
        title = section.get("title") or _title(name)
        where = f"{machine.get('cpus', '?')} cpus, torch {machine.get('torch', '?')}"
        if machine.get("gpu"):
            where = f"{machine['gpu']}, {where}"
        source = f"Run {date} ({where}): `{stem}.md`."
        report += _section_markdown({**section, "title": title}, source)
    return "\n".join(report)


def _title(name: str) -> str:
    if name in SECTIONS:
        return SECTIONS[name][3]
    return {"gpu": GPU_SECTION[3], "gpu_grid": GPU_GRID_SECTION[3]}.get(name, name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    runner = commands.add_parser("run", help="run the benchmark sections")
    runner.add_argument("--quick", action="store_true", help="smaller sizes, fewer rounds")
    runner.add_argument(
        "--only", nargs="+", choices=[*SECTIONS, "gpu", "gpu_grid"], help="sections to run"
    )
    runner.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    args = parser.parse_args(argv)
    path = run(args.quick, args.only, args.device)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
