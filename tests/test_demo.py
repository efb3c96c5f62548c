"""`python -m torchtally demo` (what `make demo` runs), end to end in a subprocess."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_the_demo_trains_checks_benchmarks_and_plots(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    done = subprocess.run(
        [sys.executable, "-m", "torchtally", "demo", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    # exit 0 means: every catalog value matched scikit-learn and test accuracy >= 95%
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "NO" not in [line.split()[-1] for line in done.stdout.splitlines() if line.strip()]
    assert f"output folder: {out.resolve()}" in done.stdout
    plots = out / "plots"
    for name in (
        "metric-loss.png",
        "metric-accuracy.png",
        "confusion-test.png",
        "roc-test.png",
        "pr-test.png",
        "system.png",
        "report.html",
    ):
        assert (plots / name).stat().st_size > 0, name
    assert (plots / "metric-loss.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "benchmark.json").exists()
    assert list((out / "logs" / "train").glob("epoch-*.csv"))
    assert len(list((out / "logs" / "checkpoints").glob("*.h5"))) == 3  # keep_checkpoints
