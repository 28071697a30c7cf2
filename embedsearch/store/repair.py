"""``embedsearch check --repair``: every derived file of an index that is damaged or missing made again from what
the index still holds, committed as a new generation, and a plain account of what cannot be made again.

What is derived: a segment's BM25 postings, word and sentence postings, vector index, offset table, id lists
and metadata table are all made from its documents and embeddings (``segment.write`` makes them, as an add
does, into a new segment that takes the damaged one's place); a deletion file from the copy of its rows its
generation keeps; ``latest.json`` from the generations on disk. What is not: the documents and embeddings
themselves, a segment's or generation's own record, the manifest; for those the answer names the sources
the index was built and grown from. The damaged generation stays until the repair commits, as every commit
leaves its predecessor, so a process killed mid-repair leaves the index as it was or repaired."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..corpus import Document
from ..disk.durable import sha256
from ..errors import EmbedsearchError
from . import deletes
from . import generation as gen
from . import segment as seg
from . import sources
from .generation import SegmentEntry
from .files import DELETES, EMBEDDINGS, GENERATIONS, SEGMENTS
from .lock import writer
from .manifest import Manifest
from .metadata import recorded as recorded_fields
from .segment import INFO, Segment

PRIMARY = ("documents.jsonl", EMBEDDINGS)  # what a segment is; every other file of it is made from these


@dataclass(frozen=True)
class Repair:
    """What a repair did: the files made again, what it could not make again (each line naming the file and
    what to do), and the generation it committed (None when nothing needed committing)."""

    repaired: tuple[str, ...]
    cannot: tuple[str, ...]
    generation: int | None

    def to_json(self) -> dict:
        return {"repaired": list(self.repaired), "cannot": list(self.cannot), "generation": self.generation}


def repair(root: Path, manifest: Manifest, wait: bool | float = True) -> Repair:
    """Repair the index at ``root`` under its writer lock (see the module's description)."""
    repaired: list[str] = []
    cannot: list[str] = []
    with writer(root, "repair", wait):
        found = gen.numbers(root)
        if not found:
            return Repair((), (f"{root / GENERATIONS}: no generation left; rebuild the index "
                               f"({_sources_named(root)})",), None)
        pointer, lost = _pointer(root, found[-1])
        if lost:
            return Repair((), (lost,), None)
        try:
            current = gen.read(root, found[-1])
        except EmbedsearchError as exc:
            return Repair(tuple(repaired), (*cannot, f"{exc} ({_sources_named(root)})"), None)
        number = found[-1] + 1
        entries, changed = list(current.segments), False
        for position, entry in enumerate(entries):
            fixed, lines, lost = _segment(root, manifest, entry, entries, number)
            repaired += lines
            cannot += lost
            if fixed is not entry:
                entries[position], changed = fixed, True
        dropped = _source_records(root, current)
        repaired += dropped
        if changed or dropped or pointer:
            gen.publish(root, entries, current.corpus_version)  # writes latest.json too
            return Repair(tuple([pointer] if pointer else []) + tuple(repaired), tuple(cannot), number)
    return Repair(tuple(repaired), tuple(cannot), None)


def _pointer(root: Path, newest: int) -> tuple[str, str]:
    """Whether ``latest.json`` must be written again (a line saying so: the commit does it), or why it cannot be
    (the newest commit it names is gone: writing it would roll the index back)."""
    file = root / GENERATIONS / gen.LATEST
    try:
        claimed = gen.latest(root)
    except EmbedsearchError:
        return f"{file}: written again (generation {newest}, the newest on disk)", ""
    if claimed > newest:
        return "", (f"{root / GENERATIONS / f'{claimed}.json'}: missing ({gen.LATEST} names it, the newest "
                    "commit); restore it from a backup: a repair would roll the index back a commit")
    if gen.is_sealed(root / GENERATIONS / f"{newest}.json") and not gen.is_sealed(file):
        return f"{file}: written again (generation {newest}, the newest on disk)", ""
    if claimed == newest or claimed == 0:
        return "", ""
    return f"{file}: written again (generation {newest}, the newest on disk)", ""


def _segment(root: Path, manifest: Manifest, entry: SegmentEntry, entries: list[SegmentEntry],
             number: int) -> tuple[SegmentEntry, list[str], list[str]]:
    """The entry (a new segment's where derived files were damaged, a new deletion file where that was), the
    lines of what was repaired, and of what cannot be."""
    folder = root / SEGMENTS / entry.name
    info = folder / INFO
    if not info.is_file() or sha256(info) != entry.info_sha256:
        return entry, [], [f"{info}: the segment's own record is damaged or gone; restore the index from a backup, "
                           f"or rebuild it ({_sources_named(root)})"]
    records = json.loads(info.read_text())["files"]
    damaged = [name for name, record in records.items() if _differs(folder / name, record)]
    primary = [name for name in damaged if name in PRIMARY]
    if primary:
        return entry, [], [f"{folder / name}: the papers themselves, which nothing else holds; restore the index "
                           f"from a backup, or rebuild it ({_sources_named(root)})" for name in primary]
    rows, written_again, lost = deleted_rows(root, entry)
    if lost:
        return entry, [], [lost]
    lines, fixed = [], entry
    if damaged:
        fixed = rewrite(root, manifest, entry, [e for e in entries if e.name != entry.name])
        lines.append(f"{folder}: {', '.join(sorted(damaged))} made again from its documents and embeddings, as "
                     f"segment {fixed.name}")
    if written_again:
        lines.append(written_again)
    if rows is not None and (fixed is not entry or written_again):
        fixed = deletes.write_deletes(root, replace(fixed, deletes=None, deleted=0, deletes_sha256=None,
                                                deleted_rows=None), rows, number)
    return fixed, lines, []


def _differs(file: Path, record: dict) -> bool:
    return not file.is_file() or file.stat().st_size != record.get("bytes") or sha256(file) != record.get("sha256")


def deleted_rows(root: Path, entry: SegmentEntry) -> tuple[np.ndarray | None, str, str]:
    """The segment's deleted rows (None when none are), a line when its deletion file was made again from the
    copy its generation keeps, and a line when it cannot be."""
    if not entry.deletes:
        return None, "", ""
    file = root / DELETES / entry.deletes
    if file.is_file() and sha256(file) == entry.deletes_sha256:
        return np.load(file), "", ""
    rows = deletes.unpacked(entry.deleted_rows) if entry.deleted_rows else None
    if rows is None or len(rows) != entry.deleted:
        return None, "", (f"{file}: damaged, and its generation keeps no copy of its rows (written before "
                          "copies were kept); restore it from a backup, or rebuild the index")
    return rows, f"{file}: written again from the copy its generation keeps ({len(rows):,} deleted rows)", ""


def rewrite(root: Path, manifest: Manifest, entry: SegmentEntry, others: list[SegmentEntry]) -> SegmentEntry:
    """A new segment holding the same documents and embeddings, every other file made again (as an add writes
    one: the segment's documents are held in memory while its postings are built)."""
    folder = root / SEGMENTS / entry.name
    matrix = np.load(folder / EMBEDDINGS, mmap_mode="r")
    existing = [Segment(root, e, manifest.model.dimension) for e in others]
    fields = recorded_fields(folder, json.loads((folder / INFO).read_text()))
    return seg.write(root, list(_documents(folder)), matrix, seg.vector_writer(manifest.vectors, existing, matrix),
                     manifest.lexical, fields=fields, model=manifest.model.settings.model)


def _documents(folder: Path) -> Iterator[Document]:
    """The segment's documents read from their file alone (its offset table and ids may be what is damaged)."""
    with (folder / "documents.jsonl").open("rb") as fh:
        for line in fh:
            yield Document.from_record(json.loads(line))


def _source_records(root: Path, current: gen.Generation) -> list[str]:
    """Source records that are damaged are removed (they only keep outputs off the files an add read); a line each."""
    lines = []
    for name, digest in current.sources:
        file = root / name
        if file.is_file() and sha256(file) != digest:
            file.unlink()
            lines.append(f"{file}: damaged, removed (it recorded files an add read; outputs are no longer kept "
                         "off them)")
        elif not file.is_file():
            lines.append(f"{file}: gone; no longer listed")
    return lines


def _sources_named(root: Path) -> str:
    named = sources.recorded(root)
    try:
        from .manifest import read

        named = [*read(root).sources, *named]
    except EmbedsearchError:
        pass
    return f"its sources: {', '.join(named[:5])}{' ...' if len(named) > 5 else ''}" if named else \
        "no sources are recorded"
