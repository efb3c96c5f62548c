"""latest.md keeps every section's newest full-size run: a run of a few sections (`--only`)
replaces those sections, not the whole report, and quick runs never count as results."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.__main__ import latest_markdown


def _write(folder: Path, stamp: str, quick: bool, sections: dict[str, list[dict]]) -> None:
    data = {
        "machine": {"date": stamp, "cpus": 2, "torch": "2.13.0+cpu"},
        "quick": quick,
        "sections": {
            name: {"title": f"title {name}", "rows": rows, "notes": "", "returncode": 0}
            for name, rows in sections.items()
        },
    }
    (folder / f"results-{stamp}.json").write_text(json.dumps(data))


def test_latest_takes_each_section_from_its_newest_full_run(tmp_path: Path) -> None:
    _write(tmp_path, "20260101-0000", False, {"grid": [{"v": "old grid"}], "step": [{"v": "s1"}]})
    _write(tmp_path, "20260102-0000", False, {"grid": [{"v": "new grid"}]})
    _write(tmp_path, "20260103-0000", True, {"grid": [{"v": "quick grid"}]})
    text = latest_markdown(tmp_path)
    assert "new grid" in text and "s1" in text
    assert "old grid" not in text and "quick grid" not in text
    assert "`results-20260102-0000.md`" in text and "`results-20260101-0000.md`" in text
    # sections in the report's order: the grid (10.) before the step (11.)
    assert text.index("title grid") < text.index("title step")


def test_a_gpu_run_names_its_gpu_and_follows_the_cpu_sections(tmp_path: Path) -> None:
    _write(tmp_path, "20260101-0000", False, {"grid": [{"v": "cpu grid"}]})
    data = json.loads((tmp_path / "results-20260101-0000.json").read_text())
    data["machine"]["gpu"] = "NVIDIA H200"
    data["sections"] = {"gpu_grid": {"title": "t gpu", "rows": [{"v": "g"}], "returncode": 0}}
    (tmp_path / "results-20260102-0000.json").write_text(json.dumps(data))
    text = latest_markdown(tmp_path)
    assert "(NVIDIA H200, 2 cpus, torch 2.13.0+cpu): `results-20260102-0000.md`" in text
    assert text.index("title grid") < text.index("t gpu")
