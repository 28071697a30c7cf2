"""Verification of an index: every file of the newest generation against the checksums recorded when it
was written, and the row counts of every part of every segment.

``problems`` returns one line per fault, each naming the file; an empty list means healthy. The quick
form (``info``, and every writer before it commits) compares each file's size with the record and reads
no data; the deep form (``embedsearch check``) also re-hashes every file, opens every part to compare
row counts, and parses every document."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import EmbedsearchError
from ..disk.durable import sha256
from . import generation as gen
from .metadata import FILE, row_count
from .generation import SegmentEntry
from .layout import DELETES
from .manifest import Manifest
from .segment import INFO, Segment


def problems(root: Path, manifest: Manifest, number: int, deep: bool = False) -> list[str]:
    """Everything wrong with generation ``number`` of the index at ``root``, one line each."""
    try:
        entries = gen.read(root, number).segments
        gen.newest(root)
    except EmbedsearchError as exc:
        return [str(exc)]
    found: list[str] = gen.missing_commits(root)
    for entry in entries:
        found += _attempt(lambda: _segment(root, manifest, entry, deep))
        found += _attempt(lambda: _deletes(root, entry, deep))
    return list(dict.fromkeys(found))


def _attempt(part) -> list[str]:
    try:
        return part()
    except EmbedsearchError as exc:
        return [str(exc)]
    except Exception as exc:  # noqa: BLE001  (any failure to read a part is a fault to report)
        return [f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"]


def checksums(root: Path, manifest: Manifest, entry: SegmentEntry) -> list[str]:
    """Every file of one segment (and its deletion file) re-hashed against its record: what a merge runs
    on the segments it reads, as Lucene verifies checksums at merge time, so damage is refused instead of
    copied into a new segment with fresh checksums."""
    return _attempt(lambda: _files(root, manifest, entry, True)) + _attempt(lambda: _deletes(root, entry, True))


def _files(root: Path, manifest: Manifest, entry: SegmentEntry, deep: bool) -> list[str]:
    segment = Segment(root, entry, manifest.model.dimension)
    info_file = segment.folder / INFO
    if sha256(info_file) != entry.info_sha256:
        return [f"{info_file}: does not match the checksum its generation recorded"]
    found = []
    for name, record in json.loads(info_file.read_text())["files"].items():
        file = segment.folder / name
        if not file.is_file():
            found.append(f"{file}: missing")
        elif file.stat().st_size != record["bytes"]:
            found.append(f"{file}: {file.stat().st_size:,} bytes, {INFO} recorded {record['bytes']:,}")
        elif deep and sha256(file) != record["sha256"]:
            found.append(f"{file}: contents differ from the checksum {INFO} recorded")
    return found


def _segment(root: Path, manifest: Manifest, entry: SegmentEntry, deep: bool) -> list[str]:
    found = _files(root, manifest, entry, deep)
    if found or not deep:
        return found
    segment = Segment(root, entry, manifest.model.dimension)
    _ = (segment.documents.ids, segment.embeddings, segment.vectors, segment.postings.vocab)
    if row_count(segment.folder) != segment.rows:
        found.append(f"{segment.folder / FILE}: {row_count(segment.folder)} rows for {segment.rows} documents")
    if segment.postings.max_row() >= segment.rows:
        found.append(f"{segment.postings.folder}: a posting points past the last document")
    if not found:
        for row, (doc, doc_id) in enumerate(zip(segment.documents, segment.documents.ids)):
            if doc.id != doc_id:
                found.append(f"{segment.folder}: row {row} does not match ids.json")
                break
    return found


def _deletes(root: Path, entry: SegmentEntry, deep: bool) -> list[str]:
    if not entry.deletes:
        return []
    file = root / DELETES / entry.deletes
    if not file.is_file():
        return [f"{file}: missing"]
    if deep and sha256(file) != entry.deletes_sha256:
        return [f"{file}: does not match the checksum its generation recorded"]
    live = gen.read_deletes(root, entry)
    return [] if live is not None and int((~live).sum()) == entry.deleted else [f"{file}: wrong deletion count"]
