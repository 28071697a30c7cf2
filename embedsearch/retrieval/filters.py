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

from ..corpus.kinds import NUMBER, element, finite_number
from ..errors import InputError
from ..store.metadata import FILE, column_kind, read_or_corrupt, row_count
from ..store.snapshot import Snapshot

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
            held = "true/false values" if kind == "boolean" else "text"
            raise InputError(f"{where}: {self.field!r} holds {held} (e.g. {example!r}), so {self.op} cannot "
                             f"compare it; use {self.field}=VALUE")
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


def _number(value: Any) -> float:
    try:
        return float(value) if value is not None and not isinstance(value, bool) else np.nan
    except (TypeError, ValueError):
        return np.nan


def allowed_rows(parts: Sequence[tuple[Path, np.ndarray | None]], filters: Sequence[Filter],
                 kinds: dict[str, str]) -> np.ndarray | None:
    """A read-only boolean mask over the live rows of several segments (each a folder holding
    ``metadata.parquet`` and its live mask, None when nothing is deleted), or ``None`` without filters.
    ``kinds`` is the index's field contract: a condition is checked against the field's kind, never against
    what one segment happens to hold (a segment whose years are all missing holds no numbers).

    A field missing from a segment counts as empty there. Recent masks are kept per segment (segments
    never change), so repeated filtered queries do not read and compare the columns again."""
    if not filters:
        return None
    filters = tuple(filters)
    schemas = [_schema(Path(folder)) for folder, _ in parts]
    known = sorted({n for names in schemas for n in names if n != "_"} | set(kinds))
    for f in filters:
        if f.field not in known:
            listed = ", ".join(known) if known else "none (this corpus has no metadata)"
            raise InputError(f"filter on unknown field {f.field!r}; fields: {listed}")
        if f.field in kinds:
            f.check_type(*_declared(f.field, element(kinds[f.field]), [Path(folder) for folder, _ in parts]))
    masks = [_mask(Path(folder), filters) for folder, _ in parts]
    mask = np.concatenate([m if live is None else m[live] for m, (_, live) in zip(masks, parts)]) if masks else \
        np.zeros(0, dtype=bool)
    mask.flags.writeable = False
    return mask


def _declared(field: str, kind: str, folders: list[Path]) -> tuple[str, object]:
    """The kind a filter checks a field against (``integer`` when every stored number is whole) and an
    example value of that kind, from the segments' columns."""
    seen = [_column_kind(folder, field) for folder in folders if field in _schema(folder)]
    seen = [(k, example) for k, example in seen if example is not None]
    if kind == NUMBER:
        whole = bool(seen) and all(k == "integer" for k, _ in seen)
        return ("integer" if whole else "number"), next((e for _, e in seen), None)
    return kind, next((e for k, e in seen if k == kind), next((e for _, e in seen), None))


@lru_cache(maxsize=256)
def _column_kind(folder: Path, field: str) -> tuple[str, object]:
    import pyarrow.parquet as pq

    return column_kind(read_or_corrupt(folder, lambda: pq.read_table(folder / FILE, columns=[field])).column(0))


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
    mask = np.ones(row_count(folder), dtype=bool)
    for f in filters:
        mask &= _column_mask(f, table.column(f.field)) if f.field in names else f.mask([None])[0]
    return mask


def _column_mask(condition: Filter, column) -> np.ndarray:
    """Evaluate a condition once per distinct value (years, venues) instead of once per row; a list
    column (authors, years) through its flattened values: a row matches when any element does (``!=``:
    when none equals the value)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if pa.types.is_list(column.type):
        negated = condition.op == "!="
        element_condition = Filter(condition.field, "=", condition.value) if negated else condition
        matches = _column_mask(element_condition, pc.list_flatten(column))
        hits = np.zeros(len(column), dtype=bool)
        np.logical_or.at(hits, pc.list_parent_indices(column).to_numpy(), matches)
        return ~hits if negated else hits
    try:
        encoded = column.dictionary_encode()
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError):
        return condition.mask(column.to_pylist())
    outcomes = np.append(condition.mask(encoded.dictionary.to_pylist()), condition.mask([None]))
    return outcomes[pc.fill_null(encoded.indices, -1).to_numpy()]



def allowed(snapshot: Snapshot, filters: Sequence[Filter], kinds: dict[str, str] | None = None) -> np.ndarray | None:
    """Live rows of ``snapshot`` passing every filter (None without filters), read with ``kinds`` (its own
    field contract unless a larger one is given: a cluster's)."""
    return allowed_rows([(s.folder, m) for s, m in zip(snapshot.segments, snapshot.live)], filters,
                        snapshot.field_kinds if kinds is None else kinds)
