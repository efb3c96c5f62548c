"""docs/writing-metrics.md, the public subclass API's page: every block runs as written and
prints what its comments say."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "writing-metrics.md"
BLOCKS = re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.S)


def test_the_page_has_its_examples() -> None:
    assert len(BLOCKS) == 3


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_each_block_runs_and_prints_what_it_says(block: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", block], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    printed = done.stdout.strip().splitlines()
    claims = re.findall(r"^\s*print\(.*\)\s+#\s*(.+)$", block, re.M)
    assert len(printed) == len(claims)
    for line, claim in zip(printed, claims):
        if claim.startswith("names the kind"):
            assert "non-finite predictions (1 value)" in line
        else:
            assert line == claim
