"""Every python block of docs/lightning.md runs as written, each on its own, in a fresh
interpreter: nothing registered or imported beforehand, as a reader would run it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("lightning.pytorch", reason="Lightning is a dev extra")

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "lightning.md"
RUNNER = """
import json, sys
for block in json.loads(sys.argv[1]):
    exec(compile(block, "docs/lightning.md", "exec"), {"__name__": "__main__"})
"""


def _blocks() -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", PAGE.read_text(encoding="utf-8"), re.S | re.M)


@pytest.mark.slow
def test_every_python_block_runs_as_written() -> None:
    blocks = _blocks()
    assert len(blocks) == 2
    run = subprocess.run(
        [sys.executable, "-c", RUNNER, json.dumps(blocks)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    # The first block's printed keys are the ones its comment shows.
    shown = re.search(r"^# (\[.*\])$", blocks[0], re.M)
    assert shown is not None
    assert shown.group(1) in run.stdout.splitlines()
