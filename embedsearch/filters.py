"""Metadata filters (``year>=2024``, ``venue=NeurIPS``) over the fields kept from the source.

Metadata is stored column-wise in ``metadata.parquet`` so a filter reads only its columns.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from .corpus import Document
from .errors import CorruptIndexError, InputError

FILE = "metadata.parquet"
_EXPR = re.compile(r"^\s*([^<>=!\s]+)\s*(>=|<=|!=|==|=|>|<)\s*(.*?)\s*$")
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
        op = "=" if op == "==" else op
        if value[:1] in "<>=!":
            raise InputError(f"filter {expression!r}: unexpected {value[0]!r} after {op}; write FIELD{op}VALUE")
        if op in _NUMERIC and _finite(value) is None:
            raise InputError(f"filter {expression!r}: {op} needs a finite number, got {value!r}")
        return cls(field, op, value)

    def check_type(self, kind: str, example: Any) -> None:
        """Refuse a condition that could never match the field's type, instead of returning nothing."""
        number = _finite(self.value)
        where = f"filter {self.field}{self.op}{self.value}"
        if self.op in _NUMERIC and kind not in ("integer", "number"):
            raise InputError(f"{where}: {self.field!r} holds text (e.g. {example!r}), so {self.op} cannot compare "
                             f"it; use {self.field}=VALUE")
        if kind == "integer" and self.op in ("=", "!=") and (number is None or number != int(number)):
            raise InputError(f"{where}: {self.field!r} holds whole numbers (e.g. {example!r}); "
                             f"{self.value!r} can never match")
        if kind == "number" and self.op in ("=", "!=") and number is None:
            raise InputError(f"{where}: {self.field!r} holds numbers (e.g. {example!r}); {self.value!r} is not one")

    def mask(self, values: Sequence[Any]) -> np.ndarray:
        if self.op in _NUMERIC or (self.op in ("=", "!=") and _finite(self.value) is not None
                                   and all(_finite(v) is not None for v in values if v is not None)
                                   and any(v is not None for v in values)):
            if self.op in ("=", "!="):
                equal = np.array([v is not None and _finite(v) == _finite(self.value) for v in values], dtype=bool)
                return equal if self.op == "=" else ~equal
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


def _finite(value: Any) -> float | None:
    """``value`` as a finite number (a numeric string counts, a bool does not), else None."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


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


def row_count(folder: Path) -> int:
    """Rows in the metadata file (one per document), or a one-line error naming the damaged file."""
    import pyarrow.parquet as pq

    return _damaged_is_corrupt(folder, lambda: pq.read_metadata(folder / FILE).num_rows)


def _damaged_is_corrupt(folder: Path, read):
    import pyarrow as pa

    try:
        return read()
    except (OSError, pa.ArrowException, ValueError) as exc:
        raise CorruptIndexError(f"{folder / FILE}: unreadable ({str(exc).strip()[:120]}); rebuild the index") \
            from exc


@lru_cache(maxsize=8)
def _mask(folder: Path, inode: int, mtime_ns: int, filters: tuple[Filter, ...]) -> np.ndarray:
    import pyarrow.parquet as pq

    schema = _damaged_is_corrupt(folder, lambda: pq.read_schema(folder / FILE))
    known = [n for n in schema.names if n != "_"]
    for f in filters:
        if f.field not in known:
            listed = ", ".join(known) if known else "none (this corpus has no metadata)"
            raise InputError(f"filter on unknown field {f.field!r}; fields: {listed}")
    columns = sorted({f.field for f in filters})
    table = _damaged_is_corrupt(folder, lambda: pq.read_table(folder / FILE, columns=columns))
    mask = np.ones(table.num_rows, dtype=bool)
    for f in filters:
        column = table.column(f.field)
        f.check_type(*_kind(column))
        mask &= _column_mask(f, column)
    mask.flags.writeable = False
    return mask


def _kind(column) -> tuple[str, Any]:
    """The field's type as filters see it (integer, number, boolean or text; a list by its elements; a text
    column whose every value is a number counts as a number, as CSV years do) and one example value."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if pa.types.is_list(column.type) or pa.types.is_large_list(column.type):
        column = pc.list_flatten(column)
    values = [v for v in pc.unique(column).to_pylist() if v is not None and v != ""]
    example = values[0] if values else None
    if pa.types.is_integer(column.type):
        return "integer", example
    if pa.types.is_floating(column.type):
        return "number", example
    if pa.types.is_boolean(column.type):
        return "boolean", example
    numbers = [_finite(v) for v in values]
    if values and all(n is not None for n in numbers):
        return ("integer" if all(n == int(n) for n in numbers) else "number"), example
    return "text", example


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
