"""Run TorchMetrics 1.9.0's own unit tests against real TorchMetrics or torchtally's drop-in.

    python scripts/torchmetrics_suite/run.py select                       # rewrites ids.txt, ddp_ids.txt
    python scripts/torchmetrics_suite/run.py run --target torchmetrics --out ref.jsonl
    python scripts/torchmetrics_suite/run.py run --target torchtally --mode lenient --out ours.jsonl
    python scripts/torchmetrics_suite/run.py compare ref.jsonl ours.jsonl --md report.md

Only the imports differ between the two targets (see tm_suite_redirect.py and README.md); the
vendored tests under upstream/ are TorchMetrics' files as tagged v1.9.0.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import hashlib
import json
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
TESTS_ROOT = HERE / "upstream" / "tests"
FAMILIES_DIRS = ("bases", "classification", "regression", "retrieval", "wrappers")
DEFAULT_IDS = HERE / "ids.txt"
DDP_IDS = HERE / "ddp_ids.txt"
UPSTREAM_COMMIT = "700261d3683ba77517e9650043f62a8313027437"  # tag v1.9.0


def family_of(nodeid: str) -> str:
    path = nodeid.split("::", 1)[0]
    parts = path.split("/")
    if parts[1] == "bases":
        name = parts[2]
        return {
            "test_aggregation.py": "aggregation",
            "test_collections.py": "collections",
            "test_composition.py": "composition",
        }.get(name, "metric_base")
    return parts[1]


def _env(target: str, mode: str, out_prefix: str | None, ids_file: str | None) -> dict[str, str]:
    env = dict(os.environ)
    paths = [str(HERE / "_site"), str(HERE), str(REPO / "src")]
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env["TM_SUITE_TARGET"] = target
    env["TM_SUITE_MODE"] = mode
    # TorchMetrics' tests cache their reference (sklearn/scipy) results on disk; a fresh cache
    # per checkout keeps the repo clean. Both targets share it: the references do not change.
    env.setdefault("PYTEST_REFERENCE_CACHE", str(REPO / "build" / "tm-suite" / "reference-cache"))
    env.setdefault("USE_PYTEST_POOL", "0")
    env["PYTHONHASHSEED"] = "0"
    env.pop("TM_SUITE_OUT", None)
    env.pop("TM_SUITE_IDS", None)
    if out_prefix:
        env["TM_SUITE_OUT"] = out_prefix
    if ids_file:
        env["TM_SUITE_IDS"] = ids_file
    return env


def _pytest_cmd(files: list[str], workers: int, extra: list[str]) -> list[str]:
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-c",
        str(HERE / "pytest.ini"),
        "--rootdir",
        str(TESTS_ROOT),
    ]
    cmd += ["-p", "tm_suite_plugin", "-p", "no:cacheprovider", "--continue-on-collection-errors"]
    cmd += ["-q", "--no-header", "-rN", "--disable-warnings"]
    if workers > 0:
        cmd += ["-n", str(workers), "--dist", "loadfile"]
    return cmd + extra + files


# --------------------------------------------------------------------------- select


def select(args: argparse.Namespace) -> int:
    """Collect in reference mode; keep a deterministic per-file sample of the non-DDP ids."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "collected.jsonl"
        env = _env("torchmetrics", "strict", None, None)
        env["TM_SUITE_COLLECT_OUT"] = str(out)
        files = [f"unittests/{d}" for d in FAMILIES_DIRS]
        proc = subprocess.run(
            [*_pytest_cmd(files, 0, ["--collect-only"])],
            cwd=TESTS_ROOT,
            env=env,
            capture_output=True,
            text=True,
        )
        if not out.exists():
            print(proc.stdout[-3000:], proc.stderr[-3000:])
            return 2
        items = [json.loads(line) for line in out.read_text().splitlines()]
    by_file: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    for item in items:
        by_file[item["nodeid"].split("::", 1)[0]].append(item)
    total = sum(1 for it in items if not it["ddp"])
    chosen: list[str] = []
    ddp_chosen: list[str] = []
    for path in sorted(by_file):
        plain = sorted(it["nodeid"] for it in by_file[path] if not it["ddp"])
        ddp = sorted(it["nodeid"] for it in by_file[path] if it["ddp"])
        quota = min(len(plain), max(args.min_per_file, -(-len(plain) * args.target // total)))
        chosen += _stratified(plain, quota)
        ddp_chosen += _stratified(ddp, min(len(ddp), args.ddp_per_file))
    DEFAULT_IDS.write_text("\n".join(sorted(chosen)) + "\n")
    DDP_IDS.write_text("\n".join(sorted(ddp_chosen)) + "\n")
    print(f"collected {len(items)} ids ({total} non-DDP) in {len(by_file)} files")
    print(
        f"wrote {len(chosen)} ids to {DEFAULT_IDS.name}, {len(ddp_chosen)} DDP ids to {DDP_IDS.name}"
    )
    return 0


def _stratified(ids: list[str], quota: int) -> list[str]:
    """One id of every test function first, then the rest by SHA-1 order of the id (stable)."""

    def key(nodeid: str) -> str:
        return hashlib.sha1(nodeid.encode()).hexdigest()

    by_function: dict[str, list[str]] = collections.defaultdict(list)
    for nodeid in ids:
        by_function[nodeid.split("[", 1)[0]].append(nodeid)
    first = [min(group, key=key) for _, group in sorted(by_function.items())]
    picked = first[:quota] if len(first) >= quota else first
    rest = sorted(set(ids) - set(picked), key=key)
    return sorted(picked + rest[: max(0, quota - len(picked))])


# --------------------------------------------------------------------------- run


def run(args: argparse.Namespace) -> int:
    ids_path = Path(args.ids).resolve()
    ids = [line for line in ids_path.read_text().splitlines() if line.strip()]
    files = sorted({i.split("::", 1)[0] for i in ids})
    if args.ddp:
        os.environ["USE_PYTEST_POOL"] = "1"
    with tempfile.TemporaryDirectory() as tmp:
        prefix = str(Path(tmp) / "rec")
        env = _env(args.target, args.mode, prefix, str(ids_path))
        workers = 0 if args.ddp else args.workers
        cmd = _pytest_cmd(files, workers, [f"--timeout={args.timeout}"])
        start = time.monotonic()
        returncode, tail = _run_bounded(cmd, env, args.session_timeout)
        wall = time.monotonic() - start
        cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
        records = []
        for part in sorted(Path(tmp).glob("rec.*.jsonl")):
            records += [json.loads(line) for line in part.read_text().splitlines() if line.strip()]
    if not records:
        print(tail)
        return 2
    results, meta = _merge(records, ids, args, returncode)
    meta.update(
        wall_s=round(wall, 1),
        # The machine may be shared: CPU seconds of pytest and its workers, and the tests' own time.
        cpu_s=round(cpu.ru_utime + cpu.ru_stime, 1),
        tests_s=round(sum(r.get("duration", 0.0) for r in results), 1),
        workers=workers,
        pytest_rc=returncode,
        session_timeout_s=args.session_timeout,
        ids_file=str(ids_path.relative_to(REPO))
        if ids_path.is_relative_to(REPO)
        else str(ids_path),
        ids_sha256=hashlib.sha256(ids_path.read_bytes()).hexdigest(),
        upstream_commit=UPSTREAM_COMMIT,
        date=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        cpus=os.cpu_count(),
    )
    problems = _check_redirection(records, args.target)
    meta["redirection_check"] = problems or "ok"
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with _open(out, "w") as fh:
        fh.write(json.dumps(meta, sort_keys=True) + "\n")
        for rec in results:
            fh.write(json.dumps(rec, sort_keys=True) + "\n")
    _print_summary(meta, results)
    if problems:
        print("REDIRECTION CHECK FAILED:", *problems, sep="\n  ")
        return 3
    return 0


def _run_bounded(cmd: list[str], env: dict[str, str], limit: float) -> tuple[int | str, str]:
    """Run pytest in its own process group; past `limit` seconds kill the whole group.

    TorchMetrics' DDP pool hangs when a test fails inside a pool worker with pytest's
    `Failed` (a BaseException the pool does not pass back), and its session end then waits on
    the pool forever; the records written so far are kept and the rest count as not run.
    """
    with tempfile.TemporaryFile("w+") as log:
        proc = subprocess.Popen(
            cmd,
            cwd=TESTS_ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            returncode: int | str = proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            returncode = f"killed after {limit:.0f} s"
        log.seek(0)
        return returncode, log.read()[-4000:]


def _merge(
    records: list[dict[str, Any]], ids: list[str], args: argparse.Namespace, rc: int | str
) -> tuple[list, dict]:
    tests = {r["nodeid"]: r for r in records if r["kind"] == "test"}
    collect_errors = {r["nodeid"]: r for r in records if r["kind"] == "collect_error"}
    sessions = [r for r in records if r["kind"] == "session"]
    started = {r["nodeid"] for r in records if r["kind"] == "start"}
    hung = "pytest killed by --session-timeout" if not isinstance(rc, int) else f"pytest exit {rc}"
    results = []
    for nodeid in sorted(ids):
        rec = tests.get(nodeid)
        if rec is None:
            path = nodeid.split("::", 1)[0]
            err = collect_errors.get(path) or next(
                (e for k, e in collect_errors.items() if nodeid.startswith(k + "::")), None
            )
            if err is None and nodeid in started:
                rec = {
                    "outcome": "error",
                    "when": "call",
                    "exc_type": "Hang",
                    "message": f"still running when the run ended ({hung})",
                }
            elif err is not None:
                rec = {
                    "outcome": "error",
                    "when": "collect",
                    "exc_type": err["exc_type"],
                    "message": err["message"],
                }
            else:
                rec = {"outcome": "not_run"}
        rec = {k: v for k, v in rec.items() if k not in ("kind",)}
        rec["nodeid"] = nodeid
        rec["family"] = family_of(nodeid)
        results.append(rec)
    meta = {
        "kind": "run",
        "target": args.target,
        "mode": args.mode if args.target == "torchtally" else None,
        "ddp": bool(args.ddp),
        "n_ids": len(ids),
        "session": sessions[0] if sessions else None,
        "collect_errors": {
            k: f"{v['exc_type']}: {v['message']}" for k, v in sorted(collect_errors.items())
        },
        "counts": dict(collections.Counter(r["outcome"] for r in results)),
    }
    meta["module_bindings"] = {
        r["module"]: r["bound"]
        for r in sorted(records, key=lambda r: r.get("module", ""))
        if r["kind"] == "module"
    }
    ends = [r for r in records if r["kind"] == "session_end"]
    if ends:
        meta["stubbed_names"] = sorted({n for e in ends for n in e.get("stubbed", [])})
        meta["redirected_modules"] = dict(
            sorted({k: v for e in ends for k, v in e["redirected"].items()}.items())
        )
    return results, meta


def _check_redirection(records: list[dict[str, Any]], target: str) -> list[str]:
    """The run must have tested the library it names: resolution, bound names, no leaks."""
    problems = []
    want = "torchtally." if target == "torchtally" else "torchmetrics."
    for rec in records:
        if rec["kind"] in ("session", "session_end"):
            acc = rec.get("Accuracy_module") or ""
            if not acc.startswith(want):
                problems.append(f"{rec['kind']}: torchmetrics.Accuracy comes from {acc!r}")
            if (
                target == "torchtally"
                and rec["kind"] == "session_end"
                and rec["real_torchmetrics_modules_loaded"]
            ):
                problems.append(
                    f"real TorchMetrics modules loaded: {rec['real_torchmetrics_modules_loaded'][:10]}"
                )
        if rec["kind"] == "module":
            if rec["leaks"]:
                problems.append(f"{rec['module']}: real TorchMetrics objects {rec['leaks'][:5]}")
            wrong = [
                f"{k}->{v}"
                for k, v in rec["bound"].items()
                if v.startswith("torchmetrics") and not v.startswith("torchmetrics.utilities")
                if target == "torchtally"
            ]
            if wrong:
                problems.append(f"{rec['module']}: {wrong[:5]}")
    if not any(r["kind"] == "session" for r in records):
        problems.append("no session record")
    return problems


def _print_summary(meta: dict[str, Any], results: list[dict[str, Any]]) -> None:
    label = meta["target"] + (f" ({meta['mode']})" if meta.get("mode") else "")
    print(
        f"{label}: {meta['n_ids']} ids in {meta['wall_s']} s wall on {meta['workers']} workers "
        f"({meta['cpu_s']} s CPU, {meta['tests_s']} s in the tests)"
    )
    print(family_table({label: results}))


OUTCOMES = ("passed", "failed", "error", "skipped", "xfailed", "xpassed", "not_run")


def family_table(runs: dict[str, list[dict[str, Any]]]) -> str:
    lines = [
        "| family | run | " + " | ".join(OUTCOMES) + " |",
        "|---|---|" + "---:|" * len(OUTCOMES),
    ]
    families = sorted({r["family"] for res in runs.values() for r in res})
    for fam in [*families, "total"]:
        for label, res in runs.items():
            c = collections.Counter(r["outcome"] for r in res if fam in ("total", r["family"]))
            lines.append(
                f"| {fam} | {label} | " + " | ".join(str(c.get(o, 0)) for o in OUTCOMES) + " |"
            )
    return "\n".join(lines)


# --------------------------------------------------------------------------- compare

_VALUE_FRAMES = ("_assert_allclose", "assert_allclose", "assert_close", "_allclose_recursive")


def is_value_mismatch(rec: dict[str, Any]) -> bool:
    """An assertion on numbers failed (the metric ran and returned something else)."""
    if rec.get("exc_type") != "AssertionError":
        return False
    frames = rec.get("frames") or []
    if frames and frames[-1].startswith("ours:"):
        return False  # an assert inside our code is an error, not a returned number
    names = " ".join(frames)
    msg = rec.get("message", "")
    return any(f in names for f in _VALUE_FRAMES) or bool(
        re.search(r"allclose|isclose|Arrays are not|not close|==|equal|Expected .* got", msg)
    )


def missing_path(rec: dict[str, Any]) -> tuple[str, str] | None:
    """("module", "torchmetrics.x.y") or ("name", "torchmetrics.x.Name") for an API gap."""
    exc, msg = (rec.get("exc_type") or "").rsplit(".", 1)[-1], rec.get("message") or ""
    m = re.search(r"No module named '([^']+)'", msg)
    if exc == "ModuleNotFoundError" and m:
        return "module", m.group(1)
    m = re.search(r"cannot import name '([^']+)' from '([^']+)'", msg)
    if exc == "ImportError" and m:
        return "name", f"{m.group(2)}.{m.group(1)}".replace(
            "torchtally.compat.torchmetrics", "torchmetrics"
        )
    if exc == "MissingFromDropIn":
        return "name", msg.split(":", 1)[0]
    return None


def signature(rec: dict[str, Any]) -> str:
    exc = rec.get("exc_type") or "?"
    msg = rec.get("message") or ""
    if rec.get("outcome") == "not_run":
        return "not run"
    missing = missing_path(rec)
    if missing:
        kind, path = missing
        # Grouped by API area (one row per package, not per function); `compare` lists the names.
        base = path.rsplit(".", 1)[0] if kind == "name" else path
        depth = 3 if base.startswith("torchmetrics.functional.") else 2
        area = ".".join(base.split(".")[:depth])
        return f"missing {kind} under {area}"
    if "DID NOT RAISE" in msg:
        return f"does not raise: {msg}"
    if "Regex pattern did not match" in msg or "did not match" in msg:
        return "raises, message differs from TorchMetrics'"
    if is_value_mismatch(rec):
        return "VALUE MISMATCH (assertion on the metric's numbers)"
    norm = re.sub(r"0x[0-9a-f]+", "0x..", msg)
    norm = re.sub(r"tensor\(\[.*", "tensor([...])", norm)
    norm = re.sub(r"\d+(\.\d+)?", "N", norm)
    where = (rec.get("frames") or ["?"])[-1].split(":")[0]
    return f"{exc} [{where}] {norm[:150]}"


def compare(args: argparse.Namespace) -> int:
    ref_meta, ref = _load(args.reference)
    ours_runs = [_load(p) for p in args.ours]
    ref_by_id = {r["nodeid"]: r for r in ref}
    ref_pass = {i for i, r in ref_by_id.items() if r["outcome"] == "passed"}
    out = ["# TorchMetrics 1.9.0 unit tests: torchtally drop-in vs TorchMetrics", ""]
    out.append(
        f"Upstream commit {ref_meta['upstream_commit']}; ids: `{ref_meta['ids_file']}` ({ref_meta['n_ids']} ids)."
    )
    out.append("")
    runs = {"torchmetrics": ref}
    for meta, res in ours_runs:
        label = f"torchtally ({meta['mode']})"
        runs[label] = res
    out.append("## Outcomes per family")
    out.append("")
    out.append(family_table(runs))
    out.append("")
    out.append("## Pass ratio on the ids that pass with TorchMetrics")
    out.append("")
    out.append(
        "| run | wall s | CPU s | reference passes | ours passes on them | ratio | 95% target |"
    )
    out.append("|---|---:|---:|---:|---:|---:|---|")
    out.append(
        f"| torchmetrics | {ref_meta['wall_s']} | {ref_meta.get('cpu_s')} | {len(ref_pass)} | - | - | - |"
    )
    summary = {}
    for (meta, res), label in zip(ours_runs, list(runs)[1:]):
        ours_pass = {r["nodeid"] for r in res if r["outcome"] == "passed"} & ref_pass
        ratio = len(ours_pass) / len(ref_pass) if ref_pass else 0.0
        need = -(-95 * len(ref_pass) // 100)
        summary[label] = ratio
        out.append(
            f"| {label} | {meta['wall_s']} | {meta.get('cpu_s')} | {len(ref_pass)} | {len(ours_pass)} | {ratio:.1%} | "
            f"{'met' if ratio >= 0.95 else f'not met (needs {need})'} |"
        )
    for (_meta, res), label in zip(ours_runs, list(runs)[1:]):
        by_id = {r["nodeid"]: r for r in res}
        # an id the run did not reach (a partial run, a subset of ids) counts as not run
        lost = [
            by_id.get(i, {"nodeid": i, "outcome": "not_run"})
            for i in sorted(ref_pass)
            if by_id.get(i, {"outcome": "not_run"})["outcome"] != "passed"
        ]
        groups: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
        for rec in lost:
            groups[signature(rec)].append(rec)
        out += [
            "",
            f"## {label}: why the {len(lost)} ids that pass with TorchMetrics do not pass",
            "",
        ]
        out.append("| # | ids | cause | example id | exception line |")
        out.append("|---:|---:|---|---|---|")
        for n, (sig, recs) in enumerate(
            sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])), 1
        ):
            if n > args.top:
                rest = sum(
                    len(v)
                    for _, v in sorted(groups.items(), key=lambda kv: -len(kv[1]))[args.top :]
                )
                out.append(f"| | {rest} | ({len(groups) - args.top} more causes) | | |")
                break
            ex = recs[0]
            line = f"{ex.get('exc_type')}: {ex.get('message', '')}".replace("|", "\\|")[:200]
            out.append(
                f"| {n} | {len(recs)} | {sig.replace('|', '/')} | `{ex['nodeid']}` | {line} |"
            )
        gaps = collections.Counter(missing_path(r) for r in lost if missing_path(r))
        out += [
            "",
            f"### {label}: the missing modules and names behind those ids ({len(gaps)})",
            "",
        ]
        out.append(
            ", ".join(f"`{path}` ({count})" for (_kind, path), count in sorted(gaps.items()))
        )
        asserts = [r for r in lost if r.get("exc_type") == "AssertionError"]
        per_test = collections.defaultdict(list)
        for rec in asserts:
            per_test[(rec["nodeid"].split("[", 1)[0], rec.get("message", "")[:160])].append(rec)
        out += ["", f"### {label}: assertions that failed inside the tests: {len(asserts)} ids", ""]
        out.append("Each is a different number or a different API property; read the test line.")
        out.append("")
        for (fn, msg), recs in sorted(per_test.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            where = next(
                (f for f in reversed(recs[0].get("frames") or []) if f.startswith("tests:")), ""
            )
            out.append(f"- {len(recs)} x `{fn}` ({where}): {msg or '(bare assert)'}")
        values = [r for r in lost if is_value_mismatch(r)]
        out += [
            "",
            f"### {label}: different numbers (assertion on values failed): {len(values)} ids",
            "",
        ]
        per_fn = collections.Counter(r["nodeid"].split("[", 1)[0] for r in values)
        for fn, count in per_fn.most_common():
            ex = next(r for r in values if r["nodeid"].startswith(fn))
            out.append(f"- {count} x `{fn}` e.g. `{ex['nodeid']}`: {ex.get('message', '')[:160]}")
    text = "\n".join(out) + "\n"
    if args.md:
        Path(args.md).write_text(text)
    print(text)
    return 0


def _open(path: Path, mode: str) -> Any:
    """A `.gz` path is gzip text (the committed results are kept small)."""
    if path.suffix == ".gz":
        return gzip.open(path, mode + "t", encoding="utf-8")
    return path.open(mode, encoding="utf-8")


def _load(path: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    with _open(Path(path), "r") as fh:
        lines = fh.read().splitlines()
    return json.loads(lines[0]), [json.loads(line) for line in lines[1:]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("select", help="rewrite ids.txt / ddp_ids.txt from a reference collection")
    p.add_argument("--target", type=int, default=3300, help="non-DDP ids to keep in all")
    p.add_argument("--min-per-file", type=int, default=12)
    p.add_argument("--ddp-per-file", type=int, default=1)
    p.set_defaults(func=select)
    p = sub.add_parser("run", help="run the ids against one library")
    p.add_argument("--target", choices=("torchmetrics", "torchtally"), required=True)
    p.add_argument("--mode", choices=("strict", "lenient"), default="strict")
    p.add_argument("--ids", default=str(DEFAULT_IDS))
    p.add_argument("--workers", type=int, default=2, help="pytest-xdist workers (0: one process)")
    p.add_argument("--timeout", type=int, default=300, help="seconds per test")
    p.add_argument(
        "--session-timeout", type=float, default=5400, help="seconds for the whole pytest run"
    )
    p.add_argument(
        "--ddp", action="store_true", help="USE_PYTEST_POOL=1 (TorchMetrics' 2-process pool)"
    )
    p.add_argument("--out", required=True)
    p.set_defaults(func=run)
    p = sub.add_parser("compare", help="reference run vs one or more torchtally runs")
    p.add_argument("reference")
    p.add_argument("ours", nargs="+")
    p.add_argument("--md")
    p.add_argument("--top", type=int, default=30)
    p.set_defaults(func=compare)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    raise SystemExit(main())
