"""Helpers of the tests: the repository's paths and nhvk's CSV files read without the package."""

from __future__ import annotations

import csv
import math
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CONFIGS = REPO / "configs"
EXAMPLES = REPO / "python" / "examples"


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def csv_float(text: str) -> float:
    """A CSV field as nhvk writes it: a number with round-trip digits, or empty for a missing value (NaN)."""
    return math.nan if text == "" else float(text)
