"""The metadata fields of an index, described for people and forms: each field's kind (as filters read
it), its most common values and its range, so a page can offer filter controls built from the data."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from ..corpus.kinds import finite_number
from .metadata import FILE, column_kind, read_or_corrupt

MAX_VALUES = 50


def describe(parts: Sequence[tuple[Path, np.ndarray | None]]) -> list[dict[str, Any]]:
    """The metadata fields a filter can use, for building filter controls: each field's kind, its most
    common values (up to ``MAX_VALUES``, text and whole numbers) and its range (numbers). Counted over the
    segments' stored rows, deleted ones included (a value offered may match nothing live)."""
    merged: dict[str, tuple[str, dict[Any, int]]] = {}
    for folder, _ in parts:
        for name, (kind, counts) in _describe_segment(folder).items():
            seen_kind, total = merged.get(name, (kind, {}))
            for value, count in counts.items():
                total[value] = total.get(value, 0) + count
            merged[name] = (seen_kind if seen_kind == kind else "text", total)
    out = []
    for name, (kind, counts) in sorted(merged.items()):
        entry: dict[str, Any] = {"name": name, "kind": kind}
        if kind in ("integer", "number") and counts:
            numbers = [finite_number(v) for v in counts]
            entry["min"], entry["max"] = min(numbers), max(numbers)
        if kind != "number":
            common = sorted(counts.items(), key=lambda item: (-item[1], str(item[0])))[:MAX_VALUES]
            entry["values"] = [{"value": v, "count": c} for v, c in common]
            entry["distinct"] = len(counts)
        out.append(entry)
    return out


@lru_cache(maxsize=256)
def _describe_segment(folder: Path) -> dict[str, tuple[str, dict[Any, int]]]:
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    table = read_or_corrupt(folder, lambda: pq.read_table(folder / FILE))
    out = {}
    for name in table.column_names:
        column = table.column(name).combine_chunks()
        kind, _ = column_kind(column)
        if hasattr(column.type, "value_type"):
            column = pc.list_flatten(column)
        counts = {}
        for item in pc.value_counts(column).to_pylist():
            value = item["values"]
            if value is not None and value != "":
                counts[value] = item["counts"]
        out[name] = (kind, counts)
    return out
