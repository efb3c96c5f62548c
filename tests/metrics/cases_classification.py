"""Registry cases for the classification family (owned by the classification engineer)."""

from cases import Case

CASES: list[Case] = []
