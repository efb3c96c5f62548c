"""`torchmetrics.utilities.enums`: the string choices of TorchMetrics' arguments as enums
(`ClassificationTask.BINARY == "binary"`)."""

from __future__ import annotations

from enum import Enum

__all__ = [
    "AverageMethod",
    "ClassificationTask",
    "ClassificationTaskNoBinary",
    "ClassificationTaskNoMultilabel",
    "MDMCAverageMethod",
]


class _StrEnum(str, Enum):
    """A string enum that compares equal to its value, case-insensitively as TorchMetrics'."""

    @classmethod
    def from_str(cls, value: str) -> _StrEnum:
        """The member named or valued `value` (any case).

        Raises:
            ValueError: no member is.
        """
        for member in cls:
            if value.lower() in (member.value.lower(), member.name.lower()):
                return member
        raise ValueError(
            f"Invalid {cls.__name__}: expected one of {[m.value for m in cls]}, but got {value}."
        )

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            return str(self.value).lower() == other.lower()
        return self is other

    def __hash__(self) -> int:
        return hash(str(self.value).lower())


class ClassificationTask(_StrEnum):
    """The `task` of a classification metric: binary, multiclass or multilabel."""

    BINARY = "binary"
    MULTICLASS = "multiclass"
    MULTILABEL = "multilabel"


class ClassificationTaskNoBinary(_StrEnum):
    """The `task` of a metric with no binary form: multilabel or multiclass."""

    MULTILABEL = "multilabel"
    MULTICLASS = "multiclass"


class ClassificationTaskNoMultilabel(_StrEnum):
    """The `task` of a metric with no multilabel form: binary or multiclass."""

    BINARY = "binary"
    MULTICLASS = "multiclass"


class AverageMethod(_StrEnum):
    """The `average` of a classification metric over classes (or labels)."""

    MICRO = "micro"
    MACRO = "macro"
    WEIGHTED = "weighted"
    NONE = "none"
    SAMPLES = "samples"


class MDMCAverageMethod(_StrEnum):
    """TorchMetrics' multidim-multiclass `mdmc_average`: global or samplewise."""

    GLOBAL = "global"
    SAMPLEWISE = "samplewise"
