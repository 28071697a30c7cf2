"""Corpus files as raw records, each named by the line it starts on (``file:line``): the seed text format,
JSONL, CSV, Parquet, BibTeX and RIS (``corpus.bibtex``, ``corpus.ris``: title, abstract, authors, year, doi and
eprint kept). A record that cannot be parsed becomes a ``Problem`` and reading goes on, so
``--skip-invalid`` skips bad records alone; ``corpus`` turns the rest into documents."""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..errors import InputError
from .document import Problem

_BAD_BYTE = re.compile("[\udc80-\udcff]")
FORMATS = {".txt": "seed", ".text": "seed", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl",
           ".csv": "csv", ".parquet": "parquet", ".pq": "parquet", ".bib": "bibtex", ".ris": "ris"}


def detect_format(path: Path) -> str:
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise InputError(f"{path}: unknown format {path.suffix!r}; use .txt, .jsonl, .csv, .parquet, .bib or .ris")
    return fmt


def _decoded_lines(path: Path) -> Iterator[tuple[int, str | Problem]]:
    with path.open("rb") as fh:
        for number, raw in enumerate(fh, start=1):
            try:
                line = raw.decode("utf-8").rstrip("\r\n")
                yield number, line.removeprefix("\ufeff") if number == 1 else line
            except UnicodeDecodeError as exc:
                yield number, Problem(f"{path}:{number}",
                                      f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})")


def _seed_rows(path: Path) -> Iterator[tuple[str, dict[str, Any] | Problem]]:
    """The seed format: a header line naming the collection, then one abstract per line."""
    header = None
    for number, line in _decoded_lines(path):
        where = f"{path}:{number}"
        if isinstance(line, Problem):
            yield where, line
        elif number == 1:
            header = line.strip() or None
        elif line.strip():
            yield where, {"text": line, **({"collection": header} if header else {})}


def _jsonl_rows(path: Path) -> Iterator[tuple[str, dict[str, Any] | Problem]]:
    for number, line in _decoded_lines(path):
        where = f"{path}:{number}"
        if isinstance(line, Problem):
            yield where, line
            continue
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            yield where, Problem(where, f"invalid JSON: {exc.msg.removesuffix(' starting at')} (column {exc.colno})")
            continue
        yield where, row if isinstance(row, dict) else Problem(where, "expected a JSON object")


class _CountedLines:
    """The lines of an open file from line ``first`` on, counting them (where each CSV record starts)."""

    def __init__(self, fh, first: int):
        self.fh, self.number = fh, first - 1

    def __iter__(self):
        return self

    def __next__(self) -> str:
        line = next(self.fh)
        self.number += 1
        return line


def _csv_rows(path: Path) -> Iterator[tuple[str, dict[str, Any] | Problem]]:
    """Records named by the line they start on. A record that cannot be parsed (an unbalanced quote runs to
    the end of the file or into later records) is one problem at its first line, and reading resumes on the
    line after it, so ``--skip-invalid`` skips that record alone."""
    csv.field_size_limit(2**31 - 1)
    header: list[str] | None = None
    first = 1
    while first:
        with path.open(newline="", encoding="utf-8-sig", errors="surrogateescape") as fh:
            for _ in range(first - 1):
                if not fh.readline():
                    return
            lines = _CountedLines(fh, first)
            reader, first = csv.reader(lines, strict=True), 0
            while True:
                start = lines.number + 1
                where = f"{path}:{start}"
                try:
                    values = next(reader)
                except StopIteration:
                    break
                except csv.Error as exc:
                    yield where, Problem(where, f"malformed CSV record ({exc}); check its quotes")
                    first = start + 1
                    break
                if header is None:
                    header = values
                    continue
                if not values:
                    continue
                if len(values) != len(header):
                    spans = f" over lines {start}-{lines.number}" if lines.number > start else ""
                    yield where, Problem(where, f"expected {len(header)} columns, found {len(values)}{spans}"
                                                + ("; check its quotes" if spans else ""))
                    if spans:
                        first = start + 1
                        break
                    continue
                row = dict(zip(header, values))
                if any(_BAD_BYTE.search(v) for v in values):
                    yield where, Problem(where, "not valid UTF-8")
                else:
                    yield where, row


def _parquet_rows(path: Path) -> Iterator[tuple[str, dict[str, Any] | Problem]]:
    import pyarrow.parquet as pq

    try:
        batches = pq.ParquetFile(path).iter_batches(batch_size=10_000)
        number = 0
        for batch in batches:
            for row in batch.to_pylist():
                number += 1
                yield f"{path}:{number}", row
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: not a readable Parquet file ({exc})") from exc


def _bibtex_rows(path: Path) -> Iterator[tuple[str, dict[str, Any] | Problem]]:
    from .bibtex import rows

    return rows(path)


def _ris_rows(path: Path) -> Iterator[tuple[str, dict[str, Any] | Problem]]:
    from .ris import rows

    return rows(path)


ROWS: dict[str, Callable[[Path], Iterator[tuple[str, dict[str, Any] | Problem]]]] = {
    "seed": _seed_rows, "jsonl": _jsonl_rows, "csv": _csv_rows, "parquet": _parquet_rows, "bibtex": _bibtex_rows,
    "ris": _ris_rows}
