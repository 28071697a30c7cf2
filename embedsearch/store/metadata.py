"""A segment's metadata on disk: every field a column of ``metadata.parquet``, stored as its kind says
(``corpus.kinds``: numbers as numbers, text as text, lists as lists), so filters read only their columns
and never meet a value of another kind. The kinds are recorded in ``segment.json``; segments written before
that have theirs read off their columns."""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from ..corpus import Document
from ..corpus.kinds import BOOLEAN, KINDS, LIST, NUMBER, TEXT, FieldKinds, combine, finite_number, stored
from ..errors import CorruptIndexError
from .batches import admit

FILE = "metadata.parquet"


def write(folder: Path, documents: Sequence[Document], declared: dict[str, str] | None = None) -> dict[str, str]:
    """Store every metadata field as a Parquet column of its kind and return the kinds: the ``declared``
    contract (the index's), extended by fields these documents bring. Writers check documents before any
    work; a document that still does not fit is refused here, so no file ever holds a mixed field."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    contract = FieldKinds(declared)
    admit(contract, documents, "nothing was written")
    columns = {}
    for name in sorted({key for doc in documents for key in doc.metadata}):
        kind = contract.kinds.get(name)
        columns[name] = _column([stored(kind, doc.metadata.get(name)) if kind else None for doc in documents])
    pq.write_table(pa.table(columns) if columns else pa.table({"_": pa.nulls(len(documents))}), folder / FILE)
    return contract.kinds


def _column(values: list[Any]) -> Any:
    import pyarrow as pa

    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        return pa.array([v if v is None or isinstance(v, str) else json.dumps(v, ensure_ascii=False)
                         for v in values], pa.string())


def merge(parts: Sequence[tuple[Path, np.ndarray | None]], folder: Path, kinds: Sequence[dict[str, str]]) -> \
        dict[str, str]:
    """Write the metadata of the live rows of several segments (whose recorded ``kinds`` are given), in order,
    as one file (a merge), and return the merged segment's kinds. A field missing from a segment is empty
    there; numbers of two widths meet as the wider."""
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
    return combine(list(kinds))


def _merged_column(pieces: list) -> Any:
    """One field's values across segments: promoted to a common type where Arrow can (ints and floats,
    a list beside empty rows), else every value as JSON text (a text field stored as numbers in one segment)."""
    import pyarrow as pa

    try:
        return pa.concat_tables([pa.table({"v": piece}) for piece in pieces], promote_options="permissive")["v"]
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        values = [v for piece in pieces for v in piece.to_pylist()]
        return pa.array([v if v is None or isinstance(v, str) else json.dumps(v, ensure_ascii=False)
                         for v in values], pa.string())


def recorded(folder: Path, info: dict[str, Any]) -> dict[str, str]:
    """The field kinds ``segment.json`` (``info``) records, checked, or those read off the columns of a
    segment written before kinds were recorded."""
    kinds = info.get("fields")
    if kinds is None:
        return inferred(folder)
    if not isinstance(kinds, dict) or not all(isinstance(k, str) and v in KINDS for k, v in kinds.items()):
        raise CorruptIndexError(f"{folder / 'segment.json'}: 'fields' should map each field to one of "
                                f"{', '.join(KINDS)}; restore it or rebuild the index")
    return kinds


@lru_cache(maxsize=256)
def inferred(folder: Path) -> dict[str, str]:
    """Each stored field's kind as its column shows it (a column of numeric text is a number field, as CSV
    years are); columns holding nothing give no kind."""
    import pyarrow.parquet as pq

    table = read_or_corrupt(folder, lambda: pq.read_table(folder / FILE))
    out = {}
    for name in table.column_names:
        kind, example = column_kind(table.column(name))
        if name == "_" or example is None:
            continue
        scalar = {"integer": NUMBER, "number": NUMBER, "boolean": BOOLEAN}.get(kind, TEXT)
        listed = hasattr(table.column(name).type, "value_type")
        out[name] = LIST + {NUMBER: "numbers", BOOLEAN: "booleans", TEXT: "text"}[scalar] if listed else scalar
    return out


def column_kind(column) -> tuple[str, Any]:
    """A column's type as filters see it (integer, number, boolean or text; a list by its elements; a text
    column whose every value is a number counts as a number, as CSV years do) and one example value (a
    value that is not a number, for text)."""
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
    return "text", next((v for v, n in zip(values, numbers) if n is None), example)


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
