"""Classification functionals."""

from torchtally.functional.classification._accuracy import accuracy
from torchtally.functional.classification._inputs import as_class_indices

__all__ = ["accuracy", "as_class_indices"]
