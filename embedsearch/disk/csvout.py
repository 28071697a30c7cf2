"""The one CSV writer: every CSV the project writes (``dedup --csv``, ``affinity``, ``assign``, topics over time,
the page's batch check) goes through it. A cell from the data (an id, a title, a name, a passage) that starts
with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is written with a leading apostrophe, as OWASP advises
against CSV injection, so a spreadsheet shows it as text instead of running it; numbers the project computes
are passed as numbers and stay numbers. ``unguarded`` reads such a cell back (the project's own CSVs are inputs
too: ``assign --scores``)."""

from __future__ import annotations

import csv
from collections.abc import Iterable
from typing import TextIO

TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
Cell = str | int | float | None


def guarded(cell: Cell) -> Cell:
    """A text cell that a spreadsheet would read as a formula, as text; numbers and other text as they are."""
    return f"'{cell}" if isinstance(cell, str) and cell.startswith(TRIGGERS) else cell


def unguarded(cell: str) -> str:
    """A cell as it was before ``guarded`` (a leading apostrophe before a trigger removed)."""
    return cell[1:] if cell.startswith("'") and cell[1:].startswith(TRIGGERS) else cell


class Writer:
    """``csv.writer`` with every text cell guarded."""

    def __init__(self, fh: TextIO):
        self._out = csv.writer(fh)

    def row(self, cells: Iterable[Cell]) -> None:
        self._out.writerow(["" if c is None else guarded(c) for c in cells])

    def rows(self, rows: Iterable[Iterable[Cell]]) -> None:
        for cells in rows:
            self.row(cells)
