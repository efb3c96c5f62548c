"""Every ```python block of README.md and of the docs site (docs/**/*.md) runs as written.

Each block is written to a file of its own in a fresh temporary directory (named by a first
line `# name.py` when it has one, as a reader would save it) and run there with this checkout's
`src` first on the path, in a subprocess with a timeout. Blocks are independent: none may rely
on names defined by another. A block fails when it exits with an error; it is skipped only when
it imports an optional package that is not installed (the package is named).

A block that includes a file with `--8<-- "path"` (the examples page) is not run here: the file
must exist and a test must name it, since each example has a test of its own.

A script that its page runs with `torchrun ...` (docs/distributed.md) needs the process group
torchrun sets up: it runs as the page's command line says, on two gloo processes, and its values
are compared with scikit-learn on the whole data set.

Code on the docs site fits the page: at most 79 columns, shown without a horizontal scroll.
"""

from __future__ import annotations

import importlib.util
import os
import re
import runpy
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
TIMEOUT_S = 240
DOCS_WIDTH = 79
FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<lang>[\w+-]*)\s*$")
SNIPPET = re.compile(r'^--8<--\s+"(?P<path>[^"]+)"$')
RANK_LINE = re.compile(r"rank (\d+) of (\d+), (\d+) samples: ((?:\w+=[\d.]+ ?)+?)(?=rank |\n|$)")
MISSING = re.compile(r"ModuleNotFoundError: No module named '(?P<name>[\w.]+)'")


@dataclass(frozen=True)
class Block:
    page: Path
    index: int  # 1-based, among the page's fenced blocks of any language
    line: int  # 1-based line of the opening fence
    lang: str
    code: str

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(ROOT)}#{self.index}"

    @property
    def file_name(self) -> str:
        first = self.code.splitlines()[0] if self.code.strip() else ""
        named = re.fullmatch(r"#\s*(?P<name>[\w-]+\.py)\b.*", first.strip())
        return named["name"] if named else "block.py"


def blocks(page: Path) -> list[Block]:
    found: list[Block] = []
    lines = page.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        indent, start = opening["indent"], i
        body: list[str] = []
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i][len(indent) :] if lines[i].startswith(indent) else lines[i])
            i += 1
        code = "\n".join(body) + "\n"
        found.append(Block(page, len(found) + 1, start + 1, opening["lang"], code))
        i += 1
    return found


def _torchrun_scripts(page_blocks: list[Block]) -> set[str]:
    """The files a `torchrun ...` command of the page runs (they need its process group)."""
    return {
        arg
        for b in page_blocks
        if b.code.startswith("torchrun ")
        for arg in shlex.split(b.code.strip())
        if arg.endswith(".py")
    }


ALL = [block for page in PAGES for block in blocks(page)]
PYTHON = [b for b in ALL if b.lang == "python"]
SNIPPETS = [b for b in PYTHON if SNIPPET.match(b.code.strip())]
TORCHRUN = [
    b
    for page in PAGES
    for b in blocks(page)
    if b.lang == "python" and b.file_name in _torchrun_scripts(blocks(page))
]
RUNNABLE = [b for b in PYTHON if b not in SNIPPETS and b not in TORCHRUN]


def _env() -> dict[str, str]:
    path = os.pathsep.join(p for p in (str(ROOT / "src"), os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": path, "MPLBACKEND": "Agg", "PYTHONUNBUFFERED": "1"}


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=TIMEOUT_S, check=False
    )


def _fail_or_skip(block: Block, result: subprocess.CompletedProcess[str]) -> None:
    missing = MISSING.search(result.stderr)
    if missing is not None:
        top = missing["name"].split(".")[0]
        if top != "torchtally" and importlib.util.find_spec(top) is None:
            pytest.skip(f"{block.id} needs {top}, which is not installed")
    pytest.fail(
        f"{block.id} (line {block.line}) failed (exit {result.returncode}):\n"
        f"{block.code}\n--- stdout ---\n{result.stdout[-2000:]}\n--- stderr ---\n"
        f"{result.stderr[-4000:]}"
    )


def test_pages_have_blocks() -> None:
    # The extraction must see the README's blocks, or every test below passes vacuously.
    readme = [b for b in RUNNABLE if b.page.name == "README.md"]
    assert len(readme) >= 4, [b.id for b in readme]
    assert [b.file_name for b in TORCHRUN] == ["eval_ddp.py"], [b.id for b in TORCHRUN]
    assert SNIPPETS, "the examples page includes no example"


def test_docs_code_fits_the_page_width() -> None:
    # mkdocs-material shows about 80 columns of code in a 1280-pixel window; a longer line
    # hides its end (often the comment that explains it) behind a horizontal scroll.
    too_wide = [
        f"{b.id} (line {b.line}): {line}"
        for b in ALL
        if b.page.name != "README.md" and b.lang in ("python", "bash") and b not in SNIPPETS
        for line in b.code.splitlines()
        if len(line) > DOCS_WIDTH
    ]
    assert not too_wide, "\n".join(too_wide)


@pytest.mark.parametrize("block", RUNNABLE, ids=[b.id for b in RUNNABLE])
def test_block_runs_as_written(block: Block, tmp_path: Path) -> None:
    script = tmp_path / block.file_name
    script.write_text(block.code, encoding="utf-8")
    result = _run([sys.executable, script.name], tmp_path)
    if result.returncode != 0:
        _fail_or_skip(block, result)


@pytest.mark.parametrize("block", SNIPPETS, ids=[b.id for b in SNIPPETS])
def test_included_file_exists_and_has_a_test(block: Block) -> None:
    match = SNIPPET.match(block.code.strip())
    assert match is not None
    path = ROOT / match["path"]
    assert path.is_file(), f"{block.id} includes {path}, which does not exist"
    this = Path(__file__).resolve()
    tested_by = [
        test
        for test in (ROOT / "tests").rglob("test_*.py")
        if test.resolve() != this and path.name in test.read_text(encoding="utf-8")
    ]
    assert tested_by, f"no test runs {match['path']}, which {block.id} shows"


def _howto() -> tuple[Block, str]:
    page = ROOT / "docs" / "distributed.md"
    found = blocks(page)
    script = next(b for b in found if b.lang == "python" and b.file_name == "eval_ddp.py")
    command = next(b.code.strip() for b in found if b.code.startswith("torchrun "))
    return script, command


@pytest.mark.slow
def test_torchrun_howto_gives_the_global_values_on_every_rank(tmp_path: Path) -> None:
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    script, command = _howto()
    assert "--nproc_per_node=2" in command
    (tmp_path / script.file_name).write_text(script.code, encoding="utf-8")
    # The page's command as written, with `torchrun` as the module it names.
    args = [sys.executable, "-m", "torch.distributed.run", *shlex.split(command)[1:]]
    result = _run(args, tmp_path)
    assert result.returncode == 0, result.stderr[-4000:]
    # Each rank prints its line with one write and the newline with another; the two ranks
    # share torchrun's stdout, so only the lines themselves are whole.
    found = sorted(RANK_LINE.findall(result.stdout))
    assert [(rank, world, n) for rank, world, n, _ in found] == [
        ("0", "2", "501"),
        ("1", "2", "500"),
    ], result.stdout
    values = [dict(pair.split("=") for pair in shown.split()) for *_, shown in found]

    # The oracle: scikit-learn on all 1,001 samples in one process, from the page's own recipe.
    recipe = runpy.run_path(str(tmp_path / script.file_name), run_name="howto_oracle")
    inputs, labels = recipe["load_data"]().tensors
    with torch.no_grad():
        probabilities = recipe["build_model"]()(inputs).double().numpy()
    predicted = probabilities.argmax(1)
    expected = {
        "accuracy": sklearn_metrics.accuracy_score(labels.numpy(), predicted),
        "f1_score": sklearn_metrics.f1_score(labels.numpy(), predicted, average="macro"),
        "auroc": sklearn_metrics.roc_auc_score(
            labels.numpy(), probabilities, multi_class="ovr", average="macro"
        ),
    }
    for rank_values in values:
        assert set(rank_values) == set(expected)
        for name, value in expected.items():
            assert float(rank_values[name]) == pytest.approx(value, abs=5e-5), name
