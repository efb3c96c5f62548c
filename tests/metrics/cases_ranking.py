"""Registry cases for the ranking family (owned by the ranking engineer)."""

from cases import Case

CASES: list[Case] = []
