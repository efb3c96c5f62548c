"""The Examples in the classification family's docstrings run and print what they show."""

from __future__ import annotations

import doctest
import importlib

import pytest
import torch

FUNCTIONAL = [
    "_averaging",
    "_class_counts",
    "_confusion_matrix",
    "_dice",
    "_mean_iou",
    "_mean_per_class_accuracy",
    "_precision_recall",
    "_top_k_accuracy",
    "_valid_inputs",
]
METRICS = [
    "_class_counts",
    "_confusion_matrix",
    "_dice",
    "_fbeta",
    "_mean_iou",
    "_mean_per_class_accuracy",
    "_precision",
    "_recall",
    "_top_k_accuracy",
]
MODULES = [f"torchtally.functional.classification.{m}" for m in FUNCTIONAL] + [
    f"torchtally.metrics.classification.{m}" for m in METRICS
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(
        module,
        extraglobs={"torch": torch},
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
    )
    assert result.attempted > 0
    assert result.failed == 0
