"""A library's entries matched to the papers of an index: by the index id an exported entry carries, then
DOI, then arXiv id (each looked up in the index's ``doi`` and ``eprint``/``arxiv`` fields, read once per
library), then a normalised title among the hits of a lexical search for it (a search per entry at any
corpus size, never a scan of every title)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..corpus.library import text_of
from ..corpus.document import Problem
from ..corpus.references import arxiv_id, normal_doi, normal_title
from ..errors import EmbedsearchError
from ..retrieval.parts import Fanout
from ..store.metadata import FILE
from ..store.snapshot import Snapshot


@dataclass(frozen=True)
class Matched:
    entry: str  # where the entry is (file:line) and its key
    id: str  # the index paper it is
    how: str  # index id, doi, arxiv, title


@dataclass(frozen=True)
class LibraryMatch:
    """What a library came to: entries matched to index papers, entries with text that are seeds all the
    same (embedded, never added), entries with neither (listed), and broken entries (file:line: why)."""

    matched: tuple[Matched, ...]
    embedded: tuple[tuple[str, str], ...]  # (entry, text)
    unmatched: tuple[str, ...]
    problems: tuple[str, ...]
    entries: tuple[str, ...] = ()  # every entry of the library in its order, with what became of it


    def summary(self) -> str:
        return (f"{len(self.matched)} matched, {len(self.embedded)} unmatched with text (used as seeds), "
                f"{len(self.unmatched)} unmatched without text" +
                (f", {len(self.problems)} broken" if self.problems else ""))

    def to_json(self) -> dict[str, Any]:
        return {"matched": [m.__dict__ for m in self.matched], "embedded": [e for e, _ in self.embedded],
                "unmatched": list(self.unmatched), "problems": list(self.problems)}


def match(reader: Fanout, rows: list[tuple[str, dict[str, Any] | Problem]]) -> LibraryMatch:
    known = identifiers(reader.snapshot)
    matched, embedded, unmatched, problems, entries = [], [], [], [], []
    for where, entry in rows:
        if isinstance(entry, Problem):
            problems.append(str(entry))
            entries.append(f"{entry}: unreadable, left out")
            continue
        name = f"{where} ({entry.get('id', '')})"
        found = _find(reader, entry, known)
        if found is not None:
            matched.append(Matched(name, *found))
            entries.append(f"{name}: paper {found[0]} of the index (by {found[1]})")
        elif text_of(entry).strip():
            embedded.append((name, text_of(entry)))
            entries.append(f"{name}: not in the index; its text is a seed")
        else:
            unmatched.append(name)
            entries.append(f"{name}: not in the index and no title or abstract: left out")
    return LibraryMatch(tuple(matched), tuple(embedded), tuple(unmatched), tuple(problems), tuple(entries))


IDENTIFIERS = {"doi": ("doi",), "arxiv": ("eprint", "arxiv", "arxiv_id")}


def identifiers(snapshot: Snapshot) -> dict[str, dict[str, str]]:
    """Each live paper's normalised DOI and arXiv id (from the fields that hold them), mapped to its id."""
    import pyarrow.parquet as pq

    wanted = [f for names in IDENTIFIERS.values() for f in names if f in snapshot.field_kinds]
    found: dict[str, dict[str, str]] = {kind: {} for kind in IDENTIFIERS}
    if not wanted:
        return found
    ids, at = snapshot.documents.ids, 0
    for segment, live in zip(snapshot.segments, snapshot.live):
        names = set(pq.read_schema(segment.folder / FILE).names)
        columns = [f for f in wanted if f in names]
        table = pq.read_table(segment.folder / FILE, columns=columns) if columns else None
        rows = range(segment.rows) if live is None else np.flatnonzero(live)
        for kind, fields in IDENTIFIERS.items():
            for name in (f for f in fields if f in columns):
                values = table.column(name).to_pylist()
                norm = normal_doi if kind == "doi" else arxiv_id
                for n, row in enumerate(rows):
                    key = norm(values[row]) if values[row] is not None else ""
                    if key:
                        found[kind].setdefault(key, ids[at + n])
        at += len(rows)
    return found


def _find(reader: Fanout, entry: dict[str, Any], known: dict[str, dict[str, str]]) -> tuple[str, str] | None:
    if entry.get("index_id") in reader.snapshot.documents.row_of:
        return entry["index_id"], "index id"
    for kind, value in (("doi", normal_doi(entry.get("doi"))), ("arxiv", arxiv_id(entry.get("eprint")))):
        if value and value in known[kind]:
            return known[kind][value], kind
    title = entry.get("title") or ""
    if not title.strip():
        return None
    try:
        hits = reader.search(title, 10, mode="lexical")
    except EmbedsearchError:  # a title with no word the index can search
        return None
    name = normal_title(title)
    return next(((h.id, "title") for h in hits if normal_title(h.title) == name), None)
