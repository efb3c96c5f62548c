"""pytest plugin: run TorchMetrics' own unit tests against one library, record each outcome.

Loaded by `run.py` with `-p tm_suite_plugin`. The redirection itself is `tm_suite_redirect`
(environment: `TM_SUITE_TARGET`, `TM_SUITE_MODE`); this plugin installs it too (idempotent)
and writes, when `TM_SUITE_OUT` is set, `<prefix>.<worker>.jsonl`: a session record (which
module `torchmetrics` resolved to), one record per test (outcome, exception type, first
message line, traceback frames tagged ours/tests/torch/torchmetrics), collection errors, and at
the end the names each test module bound from a metrics library (leaks: real TorchMetrics
objects in torchtally mode outside the infrastructure modules).

Each test is seeded (`random`, numpy, torch) from the CRC32 of its node id before it runs, so
its outcome does not depend on which xdist worker ran it or what ran before it.
`TM_SUITE_COLLECT_OUT`: with --collect-only, write every collected id with its DDP marker.
"""

from __future__ import annotations

import importlib
import json
import os
import random
import sys
import types
import zlib
from pathlib import Path
from typing import Any

import pytest
from tm_suite_redirect import (
    _INFRA_MODULES,
    _UPSTREAM,
    MODE,
    TARGET,
    _install,
    _redirected,
    _stubbed,
)

_install()


def _worker() -> str:
    return os.environ.get("PYTEST_XDIST_WORKER", "main")


class _Recorder:
    def __init__(self, prefix: str) -> None:
        self.path = Path(f"{prefix}.{_worker()}.jsonl")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.fh = self.path.open("w", encoding="utf-8")
        self.phases: dict[str, dict[str, Any]] = {}

    def write(self, record: dict[str, Any]) -> None:
        self.fh.write(json.dumps(record, sort_keys=True) + "\n")
        self.fh.flush()


_rec: _Recorder | None = None


def _library_info() -> dict[str, Any]:
    tm = sys.modules.get("torchmetrics")
    if tm is None:
        tm = importlib.import_module("torchmetrics")
    acc = getattr(tm, "Accuracy", None)
    return {
        "torchmetrics_resolves_to": tm.__name__,
        "torchmetrics_file": getattr(tm, "__file__", None),
        "Accuracy_module": getattr(acc, "__module__", None),
        "infra_modules": {n: getattr(sys.modules.get(n), "__file__", None) for n in _INFRA_MODULES},
    }


def pytest_configure(config: pytest.Config) -> None:
    global _rec
    prefix = os.environ.get("TM_SUITE_OUT")
    if prefix:
        _rec = _Recorder(prefix)
        versions = {}
        for name in ("torch", "numpy", "sklearn", "scipy", "torchtally"):
            try:
                versions[name] = importlib.import_module(name).__version__
            except Exception as err:
                versions[name] = f"unavailable: {err!r}"
        from importlib.metadata import version

        versions["torchmetrics(installed)"] = version("torchmetrics")
        _rec.write(
            {
                "kind": "session",
                "worker": _worker(),
                "target": TARGET,
                "mode": MODE,
                "versions": versions,
                **_library_info(),
            }
        )


def _frames(excinfo: pytest.ExceptionInfo[BaseException]) -> list[str]:
    out = []
    for entry in excinfo.traceback:
        path = str(entry.path)
        if "/_pytest/" in path or "/pluggy/" in path:
            continue
        if "/torchtally/" in path and "/site-packages/" not in path:
            where = "ours"
        elif str(_UPSTREAM) in path:
            where = "tests"
        elif "/site-packages/torchmetrics/" in path:
            where = "torchmetrics"
        elif "/site-packages/torch/" in path:
            where = "torch"
        else:
            where = "other"
        out.append(f"{where}:{Path(path).name}:{entry.lineno + 1}:{entry.name}")
    return out


def _exc_record(
    excinfo: pytest.ExceptionInfo[BaseException] | None, longrepr: Any
) -> dict[str, Any]:
    if excinfo is None:
        text = str(longrepr) if longrepr is not None else ""
        return {
            "exc_type": None,
            "message": text.strip().splitlines()[-1][:300] if text.strip() else "",
        }
    value = excinfo.value
    message = str(value).strip()
    return {
        "exc_type": type(value).__name__,
        "message": message.splitlines()[0][:300] if message else "",
        "frames": _frames(excinfo)[-12:],
        "missing_name": getattr(value, "name", None)
        if isinstance(value, (ImportError, AttributeError))
        else None,
    }


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    if _rec is not None:
        # Where the test runs (not the xdist controller): marks the id that a hang leaves open.
        _rec.write({"kind": "start", "nodeid": item.nodeid})
    seed = zlib.crc32(item.nodeid.encode()) & 0x7FFFFFFF
    random.seed(seed)
    import numpy
    import torch

    numpy.random.seed(seed)
    torch.manual_seed(seed)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    outcome = yield
    report = outcome.get_result()
    if _rec is None:
        return
    entry = _rec.phases.setdefault(item.nodeid, {"phases": {}})
    phase = {"outcome": report.outcome, "duration": round(report.duration, 4)}
    if hasattr(report, "wasxfail"):
        phase["wasxfail"] = True
    if report.failed:
        phase.update(_exc_record(call.excinfo, report.longrepr))
    if report.skipped and isinstance(report.longrepr, tuple):
        phase["skip_reason"] = str(report.longrepr[2])[:200]
    entry["phases"][report.when] = phase


def pytest_runtest_logfinish(nodeid: str, location: Any) -> None:
    if _rec is None:
        return
    entry = _rec.phases.pop(nodeid, None)
    if entry is None:
        return  # the xdist controller: the worker that ran the test records it
    phases = entry["phases"]
    outcome = "passed"
    detail: dict[str, Any] = {}
    for when in ("setup", "call", "teardown"):
        p = phases.get(when)
        if p is None:
            continue
        if p["outcome"] == "failed":
            outcome = "failed" if when == "call" else "error"
            detail = {k: v for k, v in p.items() if k not in ("outcome", "duration")}
            detail["when"] = when
            break
        if p["outcome"] == "skipped":
            outcome = "xfailed" if p.get("wasxfail") else "skipped"
            detail = {"skip_reason": p.get("skip_reason", "")}
            break
        if p.get("wasxfail") and when == "call":
            outcome = "xpassed"
    duration = sum(p["duration"] for p in phases.values())
    _rec.write(
        {
            "kind": "test",
            "nodeid": nodeid,
            "outcome": outcome,
            "duration": round(duration, 4),
            **detail,
        }
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    collect_out = os.environ.get("TM_SUITE_COLLECT_OUT")
    if collect_out:
        with open(collect_out, "w", encoding="utf-8") as fh:
            for item in items:
                ddp = item.get_closest_marker("DDP") is not None
                fh.write(json.dumps({"nodeid": item.nodeid, "ddp": ddp}) + "\n")
    ids_file = os.environ.get("TM_SUITE_IDS")
    if ids_file:
        wanted = set(Path(ids_file).read_text(encoding="utf-8").splitlines())
        keep = [item for item in items if item.nodeid in wanted]
        config.hook.pytest_deselected(items=[item for item in items if item.nodeid not in wanted])
        items[:] = keep
        if _rec is not None:
            _rec.write({"kind": "selected", "count": len(keep)})


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if _rec is None or not report.failed:
        return
    text = str(report.longrepr)
    # The collector's repr ends with the exception line ("E   ModuleNotFoundError: ...").
    lines = [ln[1:].strip() for ln in text.splitlines() if ln.startswith("E ")]
    last = lines[-1] if lines else text.strip().splitlines()[-1]
    exc_type, _, message = last.partition(": ")
    _rec.write(
        {
            "kind": "collect_error",
            "nodeid": report.nodeid,
            "exc_type": exc_type.strip() if message else None,
            "message": (message or last)[:300],
        }
    )


def _leaks_of(module: types.ModuleType) -> tuple[dict[str, str], list[str]]:
    """Names a test module took from a metrics library, and those that came from the real one."""
    bound: dict[str, str] = {}
    leaks: list[str] = []
    for name, obj in vars(module).items():
        mod = (
            obj.__name__ if isinstance(obj, types.ModuleType) else getattr(obj, "__module__", None)
        )
        if not isinstance(mod, str):
            continue
        if mod == "torchmetrics" or mod.startswith(("torchmetrics.", "torchtally.")):
            bound[name] = mod
            real = mod == "torchmetrics" or mod.startswith("torchmetrics.")
            if real and not mod.startswith(_INFRA_MODULES) and TARGET == "torchtally":
                leaks.append(f"{name} -> {mod}")
    return bound, leaks


def pytest_sessionfinish(session: pytest.Session) -> None:
    if _rec is None:
        return
    modules = {}
    for item in session.items:
        mod = getattr(item, "module", None)
        if mod is not None and mod.__name__ not in modules:
            modules[mod.__name__] = mod
    for extra in ("unittests._helpers.testers",):
        if extra in sys.modules:
            modules[extra] = sys.modules[extra]
    for name, mod in sorted(modules.items()):
        bound, leaks = _leaks_of(mod)
        _rec.write({"kind": "module", "module": name, "bound": bound, "leaks": leaks})
    real_loaded = sorted(
        n
        for n, m in sys.modules.items()
        if (n == "torchmetrics" or n.startswith("torchmetrics."))
        and "/torchmetrics/" in str(getattr(m, "__file__", "") or "")
        and "/torchtally/" not in str(getattr(m, "__file__", "") or "")
        and n not in _INFRA_MODULES
    )
    _rec.write(
        {
            "kind": "session_end",
            "redirected": dict(sorted(_redirected.items())),
            "stubbed": sorted(_stubbed),
            "real_torchmetrics_modules_loaded": real_loaded
            if TARGET == "torchtally"
            else len(real_loaded),
            **_library_info(),
        }
    )
    _rec.fh.close()
