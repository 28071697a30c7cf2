"""Metadata filters (``year>=2024``, ``venue=NeurIPS``) over the fields kept from the source.

Metadata is stored column-wise in ``metadata.parquet`` so a filter reads only its columns.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from .corpus import Document
from .errors import InputError

FILE = "metadata.parquet"
_EXPR = re.compile(r"^\s*([^<>=!\s]+)\s*(>=|<=|!=|=|>|<)\s*(.*?)\s*$")
_NUMERIC = (">=", "<=", ">", "<")


@dataclass(frozen=True)
class Filter:
    """One condition on a metadata field; ``=`` and ``!=`` compare text (any element of a list)."""

    field: str
    op: str
    value: str

    @classmethod
    def parse(cls, expression: str) -> "Filter":
        match = _EXPR.match(expression)
        if not match or not match.group(3):
            raise InputError(f"filter {expression!r}: expected FIELD=VALUE or FIELD>=NUMBER (also !=, <=, <, >)")
        field, op, value = match.groups()
        if op in _NUMERIC:
            try:
                float(value)
            except ValueError:
                raise InputError(f"filter {expression!r}: {op} needs a number, got {value!r}") from None
        return cls(field, op, value)

    def mask(self, values: Sequence[Any]) -> np.ndarray:
        if self.op in _NUMERIC:
            bound = float(self.value)
            numbers = np.array([_number(v) for v in values], dtype=np.float64)
            with np.errstate(invalid="ignore"):
                return {">=": numbers >= bound, "<=": numbers <= bound, ">": numbers > bound,
                        "<": numbers < bound}[self.op]
        wanted = self.value.casefold()
        hits = np.array([any(str(x).casefold() == wanted for x in _items(v)) for v in values], dtype=bool)
        return hits if self.op == "=" else ~hits


def _items(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, str) and value.startswith("["):
        try:
            value = json.loads(value)
        except ValueError:
            return [value]
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _number(value: Any) -> float:
    try:
        return float(value) if value is not None and not isinstance(value, bool) else np.nan
    except (TypeError, ValueError):
        return np.nan


def write(folder: Path, documents: Sequence[Document]) -> None:
    """Store every metadata field as a Parquet column (mixed-type columns as JSON text)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    fields = sorted({key for doc in documents for key in doc.metadata})
    columns = {}
    for name in fields:
        values = [doc.metadata.get(name) for doc in documents]
        try:
            columns[name] = pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            columns[name] = pa.array([v if v is None or isinstance(v, str) else json.dumps(v) for v in values],
                                     pa.string())
    pq.write_table(pa.table(columns) if columns else pa.table({"_": pa.nulls(len(documents))}), folder / FILE)


def allowed_rows(folder: Path, filters: Sequence[Filter]) -> np.ndarray | None:
    """A read-only boolean mask of rows passing every filter, or ``None`` when there are no filters.

    Recent masks are kept per metadata file (its inode and modification time, which a rewrite of the
    index changes), so repeated filtered queries do not read and compare the columns again."""
    if not filters:
        return None
    stat = (Path(folder) / FILE).stat()
    return _mask(Path(folder), stat.st_ino, stat.st_mtime_ns, tuple(filters))


@lru_cache(maxsize=8)
def _mask(folder: Path, inode: int, mtime_ns: int, filters: tuple[Filter, ...]) -> np.ndarray:
    import pyarrow.parquet as pq

    schema = pq.read_schema(folder / FILE)
    known = [n for n in schema.names if n != "_"]
    for f in filters:
        if f.field not in known:
            listed = ", ".join(known) if known else "none (this corpus has no metadata)"
            raise InputError(f"filter on unknown field {f.field!r}; fields: {listed}")
    table = pq.read_table(folder / FILE, columns=sorted({f.field for f in filters}))
    mask = np.ones(table.num_rows, dtype=bool)
    for f in filters:
        mask &= _column_mask(f, table.column(f.field))
    mask.flags.writeable = False
    return mask


def _column_mask(condition: Filter, column) -> np.ndarray:
    """Evaluate a condition once per distinct value (years, venues) instead of once per row; a list
    column (authors) through its flattened values, or row by row for a numeric comparison."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if pa.types.is_list(column.type) and condition.op in ("=", "!="):
        matches = _column_mask(Filter(condition.field, "=", condition.value), pc.list_flatten(column))
        hits = np.zeros(len(column), dtype=bool)
        np.logical_or.at(hits, pc.list_parent_indices(column).to_numpy(), matches)
        return hits if condition.op == "=" else ~hits
    try:
        encoded = column.dictionary_encode()
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError):
        return condition.mask(column.to_pylist())
    outcomes = np.append(condition.mask(encoded.dictionary.to_pylist()), condition.mask([None]))
    return outcomes[pc.fill_null(encoded.indices, -1).to_numpy()]
