"""Saving benchmark results as JSON, CSV or plain text (NeuroBench's three formats)."""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from torchtally._errors import check_choice

__all__ = ["RESULT_FORMATS", "save_results"]

RESULT_FORMATS = ("json", "csv", "txt")


def save_results(
    results: Mapping[str, Any], file_path: str | os.PathLike[str], file_format: str = "json"
) -> Path:
    """Write results to `file_path` plus the format's extension, creating its folder.

    JSON keeps nested values (SynapticOperations' dict) as objects. CSV has one header row
    of metric names and one row of values; a nested value is written as a JSON string in its
    cell, so it reads back. Text has one `name: value` line per metric.

    Args:
        results: The results, as `Benchmark.run` returns them.
        file_path: The path without extension.
        file_format: ``"json"``, ``"csv"`` or ``"txt"`` (any case).

    Returns:
        The path written.

    Raises:
        ValueError: For another format.

    Example:
        >>> save_results({"ParameterCount": 8}, "runs/mlp", "csv")
        PosixPath('runs/mlp.csv')
    """
    fmt = file_format.lower() if isinstance(file_format, str) else file_format
    check_choice("file_format", fmt, RESULT_FORMATS)
    path = Path(f"{os.fspath(file_path)}.{fmt}")
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "json":
        path.write_text(json.dumps(dict(results), indent=4) + "\n")
    elif fmt == "csv":
        with path.open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(results.keys())
            writer.writerow(_csv_cell(v) for v in results.values())
    else:
        path.write_text("".join(f"{k}: {v}\n" for k, v in results.items()))
    return path


def _csv_cell(value: Any) -> Any:
    return json.dumps(value) if isinstance(value, (dict, list)) else value
