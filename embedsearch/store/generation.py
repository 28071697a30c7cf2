"""Generations: generation N is ``generations/N.json``, the list of segments (with their deletion files)
that make up the index after the N-th commit. A commit writes every new file first, then publishes
N+1 by an atomic no-replace link of a fully written, fsynced file; readers take the highest N.

So that the newest commit cannot vanish quietly (a deleted ``N.json`` would roll the index back one
commit), every commit then records its number in ``generations/latest.json``, as Lucene's
``segments.gen`` does. Readers compare: a hint naming a generation that is not there, a deletion file
made by a later generation than the newest, or a gap in the numbering is damage (exit 3), never a
silent rollback."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


from ..errors import CorruptIndexError, IndexStoreError
from ..disk.durable import SEAL, sealed, unsealed, write_json
from . import sources as recorded_sources
from .files import DELETES, GENERATIONS, SEGMENTS, now, owned_deletes, owned_segment, reap_temporary
from .settings import GRACE_SECONDS


def numbers(root: Path) -> list[int]:
    folder = root / GENERATIONS
    names = (p.name for p in folder.iterdir()) if folder.is_dir() else ()
    return sorted(int(n[:-5]) for n in names if n.endswith(".json") and n[:-5].isdigit())


LATEST = "latest.json"
REPAIR = "`embedsearch check --repair --index {root}` writes it again"


def newest(root: Path) -> int:
    """The newest generation, after checking nothing says a newer one was committed."""
    found = numbers(root)
    if not found:
        raise CorruptIndexError(f"{root / GENERATIONS}: no committed generation; rebuild the index")
    claimed = latest(root)
    if claimed > found[-1]:
        found = numbers(root)  # a commit may have landed between the listing and the hint
        if claimed > found[-1]:
            raise CorruptIndexError(f"{root / GENERATIONS / f'{claimed}.json'}: generation {claimed}, the newest "
                                    f"commit, is missing ({LATEST} names it); without it the index would roll back "
                                    f"to generation {found[-1]}: restore the file, or rebuild")
    return found[-1]


def latest(root: Path) -> int:
    """The generation the last commit recorded in ``latest.json`` (0 for indexes written before it)."""
    file = root / GENERATIONS / LATEST
    try:
        data, holds = unsealed(json.loads(file.read_text()))
        number = data["generation"]
    except FileNotFoundError:
        return 0
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CorruptIndexError(f"{file}: unreadable; {REPAIR.format(root=root)}") from exc
    if not holds:
        raise CorruptIndexError(f"{file}: does not match the checksum it was written with; {REPAIR.format(root=root)}")
    if not isinstance(number, int) or number < 1:
        raise CorruptIndexError(f"{file}: 'generation' must be a positive whole number; restore it, or rebuild")
    return number


def missing_commits(root: Path) -> list[str]:
    """What ``check`` adds to ``newest``'s test: gaps in the numbering (collection only ever removes the
    oldest) and deletion files written by a generation later than the newest."""
    found = numbers(root)
    problems = [f"{root / GENERATIONS}: generation {n} is missing between {found[0]} and {found[-1]}"
                for n in sorted(set(range(found[0], found[-1] + 1)) - set(found))] if found else []
    pointer = root / GENERATIONS / LATEST
    if found and is_sealed(root / GENERATIONS / f"{found[-1]}.json") and not is_sealed(pointer):
        problems.append(f"{pointer}: {'written without its checksum' if pointer.is_file() else 'missing'} (every "
                        f"commit since checksums writes it sealed); {REPAIR.format(root=root)}")
    for item in sorted((root / DELETES).iterdir()) if (root / DELETES).is_dir() and found else ():
        made_by = item.name.rsplit(".", 2)[-2] if item.name.count(".") >= 2 else ""
        if made_by.isdigit() and int(made_by) > found[-1]:
            problems.append(f"{item}: written by generation {made_by}, after the newest ({found[-1]}); a commit "
                            "is missing: restore it, or rebuild")
    return problems


def is_sealed(file: Path) -> bool:
    try:
        return SEAL in json.loads(file.read_text())
    except (OSError, ValueError, TypeError):
        return False


@dataclass(frozen=True)
class SegmentEntry:
    """What a generation records of a segment: its name, size, vector-index kind, the checksum of its
    ``segment.json``, and its deletion file (the rows deleted as of this generation) if any."""

    name: str
    rows: int
    index_type: str
    info_sha256: str
    deletes: str | None = None
    deleted: int = 0
    deletes_sha256: str | None = None
    deleted_rows: str | None = None

    @property
    def live(self) -> int:
        return self.rows - self.deleted

    def to_json(self) -> dict[str, Any]:
        out = {"name": self.name, "rows": self.rows, "index_type": self.index_type, "info_sha256": self.info_sha256}
        if not self.deletes:
            return out
        out = {**out, "deletes": self.deletes, "deleted": self.deleted, "deletes_sha256": self.deletes_sha256}
        return {**out, "deleted_rows": self.deleted_rows} if self.deleted_rows else out

    @classmethod
    def parse(cls, file: Path, position: int, entry: Any) -> SegmentEntry:
        """Each key present with its type (a deletion file's three together), or an error naming the key."""
        wanted = {**ENTRY_KEYS, **(DELETE_KEYS if isinstance(entry, dict) and entry.get("deletes") else {})}
        for key, kind in wanted.items():
            value = entry.get(key) if isinstance(entry, dict) else None
            if not isinstance(value, kind) or isinstance(value, bool):
                raise CorruptIndexError(f"{file}: segment {position}: key {key!r} is missing or not "
                                        f"{'a whole number' if kind is int else 'text'}; restore it or rebuild")
        copy = entry.get("deleted_rows") if wanted is not ENTRY_KEYS else None
        return cls(**{k: entry[k] for k in wanted}, deleted_rows=copy if isinstance(copy, str) else None)


ENTRY_KEYS = {"name": str, "rows": int, "index_type": str, "info_sha256": str}
DELETE_KEYS = {"deletes": str, "deleted": int, "deletes_sha256": str}


@dataclass(frozen=True)
class Generation:
    """The index after one commit: its segments in corpus order, and how many documents are live."""

    number: int
    segments: tuple[SegmentEntry, ...]
    corpus_version: int
    committed_at: str
    documents: int
    sources: tuple[tuple[str, str], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"segments": [e.to_json() for e in self.segments], "corpus_version": self.corpus_version,
                "generation": self.number, "committed_at": self.committed_at, "documents": self.documents,
                "sources": dict(self.sources)}


def read(root: Path, number: int) -> Generation:
    file = root / GENERATIONS / f"{number}.json"
    try:
        data, holds = unsealed(json.loads(file.read_text()))
        segments, documents, version = data["segments"], data["documents"], data["corpus_version"]
        listed = data.get("sources", {})
    except FileNotFoundError:
        raise IndexStoreError(f"{file}: generation {number} is gone (compacted away); reopen the index") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CorruptIndexError(f"{file}: unreadable generation manifest; restore it or rebuild") from exc
    if not isinstance(segments, list):
        raise CorruptIndexError(f"{file}: 'segments' should be a list; restore it or rebuild")
    if not isinstance(listed, dict) or not all(isinstance(v, str) for v in listed.values()):
        raise CorruptIndexError(f"{file}: 'sources' should map record files to checksums; restore it or rebuild")
    for key, value in (("documents", documents), ("corpus_version", version)):
        if not isinstance(value, int) or isinstance(value, bool):
            raise CorruptIndexError(f"{file}: key {key!r} should be a whole number; restore it or rebuild")
    entries = tuple(SegmentEntry.parse(file, position, entry) for position, entry in enumerate(segments))
    if not holds:  # after the keys: a damaged key is named first
        raise CorruptIndexError(f"{file}: does not match the checksum it was written with; restore it or rebuild")
    return Generation(number, entries, version, str(data.get("committed_at", "")), documents,
                      tuple(sorted(listed.items())))


def publish(root: Path, segments: Sequence[SegmentEntry], corpus_version: int) -> int:
    """Publish the next generation (the caller holds the writer lock); returns its number."""
    folder = root / GENERATIONS
    folder.mkdir(exist_ok=True)
    found = numbers(root)
    number = (found[-1] if found else 0) + 1
    generation = Generation(number, tuple(segments), corpus_version, now(), sum(e.live for e in segments),
                            recorded_sources.records(root))
    write_json(folder / f"{number}.json", sealed(generation.to_json()), exclusive=True)
    write_pointer(root, number)
    return number


def write_pointer(root: Path, number: int) -> None:
    """``latest.json``: the number of the newest commit (sealed, so a changed digit is damage, not a rollback)."""
    write_json(root / GENERATIONS / LATEST, sealed({"generation": number}))


def collect(root: Path, grace: float = GRACE_SECONDS) -> None:
    """Remove what no reader should still need (the caller holds the writer lock): generations superseded
    more than ``grace`` seconds ago (the newest always stays), then segments and deletion files no kept
    generation names, and temporary files of dead writers, once older than ``grace``."""
    found = numbers(root)
    if not found:
        return
    cutoff = time.time() - grace
    folder = root / GENERATIONS
    published = {n: (folder / f"{n}.json").stat().st_mtime for n in found}
    kept = [found[-1]] + [older for older, newer in zip(found[:-1], found[1:]) if published[newer] >= cutoff]
    for number in set(found) - set(kept):
        (folder / f"{number}.json").unlink(missing_ok=True)
    named_segments, named_deletes = set(), set()
    for number in kept:
        try:
            entries = read(root, number).segments
        except (CorruptIndexError, IndexStoreError):
            return  # a kept generation that cannot be read may name any file: remove none (check reports it)
        for entry in entries:
            named_segments.add(entry.name)
            named_deletes.add(entry.deletes)
    for item in (root / SEGMENTS).iterdir() if (root / SEGMENTS).is_dir() else ():
        if owned_segment(item) and item.name not in named_segments and item.stat().st_mtime < cutoff:
            shutil.rmtree(item, ignore_errors=True)
    for item in (root / DELETES).iterdir() if (root / DELETES).is_dir() else ():
        if owned_deletes(item) and item.name not in named_deletes and item.stat().st_mtime < cutoff:
            item.unlink(missing_ok=True)
    for sub in (root / SEGMENTS, root / DELETES, folder):
        reap_temporary(sub, grace)
