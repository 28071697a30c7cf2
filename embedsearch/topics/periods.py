"""Periods of a metadata field, for topics over time: numeric years one per year when there are at most
``MAX_PERIODS`` of them, else equal bins labelled by their range; ISO dates by month, or by year when the
months are too many; or, for a field of classes (venue, category), one period per value. Periods come in
time order (classes by size). A value that is neither a year nor a date is left out and counted."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from ..corpus.kinds import finite_number
from ..errors import InputError

MAX_PERIODS = 40
_ISO = re.compile(r"^\d{4}-\d{2}(-\d{2})?([T ].*)?$")


@dataclass(frozen=True)
class Periods:
    """Each row's periods (empty where left out), the periods in order, and what was left out."""

    of_row: tuple[tuple[str, ...], ...]
    names: tuple[str, ...]
    left_out: int
    first_left_out: int | None


def periods(values: Sequence[Any], bins: int = 10, by_class: bool = False) -> Periods:
    """The period of every row's ``values`` (time, or classes with ``by_class``)."""
    if bins < 1:
        raise InputError(f"--bins must be at least 1, got {bins}")
    if by_class:
        return _classes(values)
    parsed = [_when(v) for v in values]
    kept = [p for p in parsed if p is not None]
    if not kept:
        return Periods(tuple(() for _ in values), (), len(values), 0 if values else None)
    dates = [p for p in kept if isinstance(p, date)]
    if dates and len(dates) == len(kept):
        months = {(d.year, d.month) for d in dates}
        years = {d.year for d in dates}
        if len(months) <= MAX_PERIODS:
            labels = [None if p is None else f"{p.year:04d}-{p.month:02d}" for p in parsed]
            return _done(labels, sorted({f"{y:04d}-{m:02d}" for y, m in months}))
        if len(years) <= MAX_PERIODS:
            return _done([None if p is None else f"{p.year:04d}" for p in parsed], sorted(f"{y:04d}" for y in years))
        parsed = [None if p is None else p.year + (p.timetuple().tm_yday - 1) / 366 for p in parsed]
    elif dates:  # numbers beside dates: years of both
        parsed = [None if p is None else (p.year if isinstance(p, date) else p) for p in parsed]
    numbers = [p for p in parsed if p is not None]
    whole = all(float(n).is_integer() for n in numbers)
    distinct = sorted(set(numbers))
    if whole and len(distinct) <= MAX_PERIODS:
        return _done([None if p is None else str(int(p)) for p in parsed], [str(int(n)) for n in distinct])
    low, high = min(numbers), max(numbers)
    width = (high - low) / bins or 1.0
    edges = [low + i * width for i in range(bins + 1)]
    names = [_range(edges[i], edges[i + 1], whole, i == bins - 1) for i in range(bins)]
    labels = [None if p is None else names[min(int((p - low) / width), bins - 1)] for p in parsed]
    return _done(labels, [n for n in names if n in set(labels)])


def _when(value: Any) -> float | date | None:
    if isinstance(value, (datetime, date)):
        return value if isinstance(value, date) else value.date()
    if isinstance(value, str) and _ISO.match(value.strip()):
        text = value.strip()
        try:
            return datetime.fromisoformat(text if len(text) > 7 else text + "-01").date()
        except ValueError:
            return None
    number = finite_number(value)
    return None if number is None or isinstance(value, bool) else number


def _range(start: float, stop: float, whole: bool, last: bool) -> str:
    """A bin's label: the whole numbers it holds (``stop`` belongs to the next bin, but to the last one)."""
    if whole:
        return f"{math.ceil(start)}-{math.floor(stop) if last else math.ceil(stop) - 1}"
    return f"{start:g}-{stop:g}"


def _done(labels: list[str | None], names: list[str]) -> Periods:
    missing = [i for i, label in enumerate(labels) if label is None]
    return Periods(tuple(() if label is None else (label,) for label in labels), tuple(names), len(missing),
                   missing[0] if missing else None)


def _classes(values: Sequence[Any]) -> Periods:
    rows = []
    for value in values:
        items = value if isinstance(value, list) else [value]
        rows.append(tuple(dict.fromkeys(str(v) for v in items if v is not None and str(v).strip())))
    counts = Counter(c for row in rows for c in row)
    missing = [i for i, row in enumerate(rows) if not row]
    names = tuple(sorted(counts, key=lambda c: (-counts[c], c)))
    return Periods(tuple(rows), names, len(missing), missing[0] if missing else None)
