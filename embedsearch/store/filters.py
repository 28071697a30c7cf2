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

from ..corpus import Document
from ..errors import CorruptIndexError, InputError

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
    def parse(cls, expression: str) -> Filter:
        match = _EXPR.match(expression)
        if not match or not match.group(3):
            raise InputError(f"filter {expression!r}: expected FIELD=VALUE or FIELD>=NUMBER (also !=, <=, <, >)")
        field, op, value = match.groups()
        op = "=" if op == "==" else op
        if value[:1] in "<>=!":
            raise InputError(f"filter {expression!r}: unexpected {value[0]!r} after {op}; write FIELD{op}VALUE")
        if op in _NUMERIC and finite_number(value) is None:
            raise InputError(f"filter {expression!r}: {op} needs a finite number, got {value!r}")
        return cls(field, op, value)

    def check_type(self, kind: str, example: Any) -> None:
        """Refuse a condition that could never match the field's type, instead of returning nothing."""
        number = finite_number(self.value)
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
        if self.op in _NUMERIC or (self.op in ("=", "!=") and finite_number(self.value) is not None
                                   and all(finite_number(v) is not None for v in values if v is not None)
                                   and any(v is not None for v in values)):
            if self.op in ("=", "!="):
                target = finite_number(self.value)
                equal = np.array([v is not None and finite_number(v) == target for v in values], dtype=bool)
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


def finite_number(value: Any) -> float | None:
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


def merge(parts: Sequence[tuple[Path, np.ndarray | None]], folder: Path) -> None:
    """Write the metadata of the live rows of several segments, in order, as one file (a merge); a field
    missing from a segment is empty there, a field whose types differ between segments becomes text."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    tables = []
    for source, live in parts:
        table = read_or_corrupt(source, lambda: pq.read_table(source / FILE))
        tables.append(table.filter(pa.array(live)) if live is not None else table)
    names = list(dict.fromkeys(n for t in tables for n in t.column_names if n != "_"))
    columns = {name: _merged_column([t.column(name) if name in t.column_names else pa.nulls(t.num_rows)
                                     for t in tables]) for name in names}
    total = sum(t.num_rows for t in tables)
    pq.write_table(pa.table(columns) if columns else pa.table({"_": pa.nulls(total)}), folder / FILE)


def _merged_column(pieces: list) -> Any:
    """One field's values across segments: promoted to a common type where Arrow can (ints and floats,
    a list beside empty rows), else every value as JSON text, the rule ``write`` uses for mixed fields.
    Lists, nested objects and mixed types all survive, one field at a time."""
    import pyarrow as pa

    try:
        return pa.concat_tables([pa.table({"v": piece}) for piece in pieces], promote_options="permissive")["v"]
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        values = [v for piece in pieces for v in piece.to_pylist()]
        return pa.array([v if v is None or isinstance(v, str) else json.dumps(v, ensure_ascii=False)
                         for v in values], pa.string())


def allowed_rows(parts: Sequence[tuple[Path, np.ndarray | None]], filters: Sequence[Filter]) -> np.ndarray | None:
    """A read-only boolean mask over the live rows of several segments (each a folder holding
    ``metadata.parquet`` and its live mask, None when nothing is deleted), or ``None`` without filters.

    A field missing from a segment counts as empty there. Recent masks are kept per segment (segments
    never change), so repeated filtered queries do not read and compare the columns again."""
    if not filters:
        return None
    filters = tuple(filters)
    schemas = [_schema(Path(folder)) for folder, _ in parts]
    known = sorted({n for names in schemas for n in names if n != "_"})
    for f in filters:
        if f.field not in known:
            listed = ", ".join(known) if known else "none (this corpus has no metadata)"
            raise InputError(f"filter on unknown field {f.field!r}; fields: {listed}")
    masks = [_mask(Path(folder), filters) for folder, _ in parts]
    mask = np.concatenate([m if live is None else m[live] for m, (_, live) in zip(masks, parts)]) if masks else \
        np.zeros(0, dtype=bool)
    mask.flags.writeable = False
    return mask


def row_count(folder: Path) -> int:
    """Rows in the metadata file (one per document), or a one-line error naming the damaged file."""
    import pyarrow.parquet as pq

    return read_or_corrupt(folder, lambda: pq.read_metadata(folder / FILE).num_rows)


def read_or_corrupt(folder: Path, read):
    """``read()``, with an unreadable metadata file turned into a one-line ``CorruptIndexError``."""
    import pyarrow as pa

    try:
        return read()
    except (OSError, pa.ArrowException, ValueError) as exc:
        raise CorruptIndexError(f"{folder / FILE}: unreadable ({str(exc).strip()[:120]}); rebuild the index") \
            from exc


def numeric_fields(folders: Sequence[Path]) -> frozenset[str]:
    """Fields stored as numbers (integers or floats, or lists of them) in every segment that has them: the
    field types an index holds, which new records must not contradict."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    kinds: dict[str, bool] = {}
    for folder in folders:
        for column in read_or_corrupt(folder, lambda: pq.read_schema(folder / FILE)):
            kind = column.type.value_type if pa.types.is_list(column.type) else column.type
            if column.name == "_" or pa.types.is_null(kind) or not kinds.get(column.name, True):
                continue
            numeric = pa.types.is_integer(kind) or pa.types.is_floating(kind)
            if pa.types.is_string(kind) or pa.types.is_large_string(kind):  # numbers read from CSV as text
                values = read_or_corrupt(folder, lambda: pq.read_table(folder / FILE, columns=[column.name]))
                numeric = column_kind(values.column(0))[0] in ("integer", "number")
            kinds[column.name] = numeric
    return frozenset(name for name, numeric in kinds.items() if numeric)


@lru_cache(maxsize=256)
def _schema(folder: Path) -> tuple[str, ...]:
    import pyarrow.parquet as pq

    return tuple(read_or_corrupt(folder, lambda: pq.read_schema(folder / FILE)).names)


@lru_cache(maxsize=64)
def _mask(folder: Path, filters: tuple[Filter, ...]) -> np.ndarray:
    import pyarrow.parquet as pq

    names = _schema(folder)
    present = sorted({f.field for f in filters} & set(names))
    table = read_or_corrupt(folder, lambda: pq.read_table(folder / FILE, columns=present))
    rows = row_count(folder)
    mask = np.ones(rows, dtype=bool)
    for f in filters:
        if f.field not in names:
            mask &= f.mask([None])[0]
            continue
        column = table.column(f.field)
        f.check_type(*column_kind(column))
        mask &= _column_mask(f, column)
    return mask


def column_kind(column) -> tuple[str, Any]:
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
    numbers = [finite_number(v) for v in values]
    if values and all(n is not None for n in numbers):
        return ("integer" if all(n == int(n) for n in numbers) else "number"), example
    return "text", next((v for v, n in zip(values, numbers) if n is None), example)  # a value that is not a number


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

