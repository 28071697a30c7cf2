"""Verification of an index: every file of the newest generation against the checksums recorded when it
was written, and the row counts of every part of every segment.

``problems`` returns one line per fault, each naming the file; an empty list means healthy. The quick
form (``info``, and every writer before it commits) compares each file's size with the record and reads
no data; the deep form (``embedsearch check``) also re-hashes every file, opens every part to compare
row counts, parses every document, reads every generation and source record, and walks the folder: a file
that no record owns is a fault, so nothing an index holds goes unverified. ``expendable`` names what is
safe to lose (superseded generations and what only they name, the lock, leftovers of interrupted writes).
Saved topics and watches are verified by their own modules (``topics.saved``, ``store.watches``)."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import EmbedsearchError, IndexStoreError
from ..disk.durable import sha256
from . import deletes
from . import generation as gen
from . import sources
from .metadata import FILE, row_count
from .generation import SegmentEntry
from .files import DELETES, DERIVED_FOLDERS, GENERATIONS, LOCK, MANIFEST, SEGMENTS, TOPICS, WATCHES
from .lock import OWNER
from .manifest import Manifest
from .segment import INFO, Segment
from .shard_marker import SHARD
from .watches import problems as watch_problems

KNOWN = {MANIFEST, GENERATIONS, SEGMENTS, DELETES, sources.FOLDER, TOPICS, WATCHES, LOCK, OWNER, SHARD}
DERIVED_ON_USE = tuple(f"{name}/" for name in DERIVED_FOLDERS)  # made on first use where older segments lack them


def problems(root: Path, manifest: Manifest, number: int, deep: bool = False) -> list[str]:
    """Everything wrong with generation ``number`` of the index at ``root``, one line each."""
    try:
        generation = gen.read(root, number)
        gen.newest(root)
    except EmbedsearchError as exc:
        return [str(exc)]
    found: list[str] = gen.missing_commits(root)
    for entry in generation.segments:
        found += _attempt(lambda: _segment(root, manifest, entry, deep))
        found += _attempt(lambda: _deletes(root, entry, deep))
    if deep:
        found += _attempt(lambda: _generations(root))
        found += _attempt(lambda: _sources(root, generation))
        found += _attempt(lambda: watch_problems(root))
        found += [f"{item}: not part of an index ({', '.join(sorted(KNOWN))}); move it out of the folder"
                  for item in sorted(root.iterdir()) if item.name not in KNOWN and not _temporary(item)]
    return list(dict.fromkeys(found))


def expendable(root: Path, number: int) -> list[str]:
    """What under ``root`` is safe to lose, one phrase per kind: nothing a reader of generation ``number`` (the
    newest) needs, and nothing ``check`` verifies."""
    try:
        generation = gen.read(root, number)
    except EmbedsearchError:
        return []
    named = {e.name for e in generation.segments}
    kinds = {
        "the writer lock": [root / n for n in (LOCK, OWNER) if (root / n).exists()],
        "superseded generations": [root / GENERATIONS / f"{n}.json" for n in gen.numbers(root) if n != number],
        "segments only superseded generations name": [f for f in _listing(root / SEGMENTS) if f.name not in named],
        "deletion files only superseded generations name":
            [f for f in _listing(root / DELETES) if f.name not in {e.deletes for e in generation.segments}],
        "source records of adds that had not committed": [
            f for f in _listing(root / sources.FOLDER) if f"{sources.FOLDER}/{f.name}" not in dict(generation.sources)],
        "postings made on first use (made again when missing)": [
            root / SEGMENTS / e.name / d.rstrip("/") for e in generation.segments for d in _on_use(root, e)],
        "leftovers of interrupted writes": [f for f in root.rglob(".*") if _temporary(f)],
    }
    return [f"{kind}: {len(files)} ({', '.join(str(f.relative_to(root)) for f in files[:3])}"
            f"{', ...' if len(files) > 3 else ''})" for kind, files in kinds.items() if files]


def _listing(folder: Path) -> list[Path]:
    return sorted(f for f in folder.iterdir() if not _temporary(f)) if folder.is_dir() else []


def _temporary(item: Path) -> bool:
    """A leftover of a write that did not finish (``.NAME.tmp-*``, a watch's unpublished seen file)."""
    return item.name.startswith(".") and (".tmp" in item.name) and item.name not in (LOCK, OWNER)


def _on_use(root: Path, entry: SegmentEntry) -> list[str]:
    """The derived folders of a segment written before they were recorded with it."""
    try:
        recorded = json.loads((root / SEGMENTS / entry.name / INFO).read_text())["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    return [d for d in DERIVED_ON_USE if (root / SEGMENTS / entry.name / d).is_dir()
            and not any(name.startswith(d) for name in recorded)]


def _generations(root: Path) -> list[str]:
    """Every generation kept (superseded ones too: a reader that opened one still reads it) read whole."""
    found = []
    for number in gen.numbers(root):
        try:
            gen.read(root, number)
        except IndexStoreError:
            continue  # collected since the listing
        except EmbedsearchError as exc:
            found.append(str(exc))
    return found


def _sources(root: Path, generation: gen.Generation) -> list[str]:
    found = []
    for name, digest in generation.sources:
        file = root / name
        if not file.is_file():
            found.append(f"{file}: missing (generation {generation.number} lists it); restore it, or run "
                         f"`embedsearch check --repair --index {root}` to record the sources that remain")
        elif sha256(file) != digest:
            found.append(f"{file}: does not match the checksum generation {generation.number} recorded; restore it, "
                         f"or run `embedsearch check --repair --index {root}`")
    return found


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
    records = json.loads(info_file.read_text())["files"]
    for name, record in records.items():
        file = segment.folder / name
        if not file.is_file():
            found.append(f"{file}: missing")
        elif file.stat().st_size != record["bytes"]:
            found.append(f"{file}: {file.stat().st_size:,} bytes, {INFO} recorded {record['bytes']:,}")
        elif deep and sha256(file) != record["sha256"]:
            found.append(f"{file}: contents differ from the checksum {INFO} recorded")
    if deep:
        made_on_use = _on_use(root, entry)
        for file in sorted(f for f in segment.folder.rglob("*") if f.is_file()):
            name = file.relative_to(segment.folder).as_posix()
            if name != INFO and name not in records and not name.startswith(tuple(made_on_use)):
                found.append(f"{file}: {INFO} records no such file; it is no part of the segment (move it out)")
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
    live = deletes.read_deletes(root, entry)
    return [] if live is not None and int((~live).sum()) == entry.deleted else [f"{file}: wrong deletion count"]
