"""Reviewers and their own publications, read from an OpenReview archives folder (one ``~ID.jsonl`` or
``ID.jsonl`` per reviewer, a publication a line) or from one JSONL, CSV or Parquet file of publications with
a ``reviewer`` field. Every publication becomes a ``Document`` whose metadata names its reviewer."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..corpus import Document, check_id, parse_record
from ..corpus.readers import FORMATS, Problem
from ..errors import InputError
from .notes import records

REVIEWER = "reviewer"


@dataclass(frozen=True)
class Reviewers:
    """Reviewers in order and their publications: ``owner[i]`` is the position of publication ``i``'s
    reviewer. A paper two reviewers wrote is a publication of each (embedded once, through the cache)."""

    ids: tuple[str, ...]
    publications: tuple[Document, ...]
    owner: np.ndarray

    @classmethod
    def read(cls, path: str | Path) -> Reviewers:
        """Read an archives folder or a file of publications; a reviewer without publications, a publication
        with neither title nor abstract, or an id repeated within one reviewer is an error naming the line."""
        path = Path(path)
        if not path.exists():
            raise InputError(f"--reviewers {path}: no such file or folder")
        if path.is_dir():
            files = sorted(p for p in path.iterdir() if p.suffix == ".jsonl")
            if not files:
                raise InputError(f"--reviewers {path}: no ~ID.jsonl archives in the folder")
            found: dict[str, list[Document]] = {}
            for file in files:
                rid = _reviewer_of(file)
                found[rid] = list(_publications(records(file), file, lambda row, where, rid=rid: rid))
                if not found[rid]:
                    raise InputError(f"{file}: reviewer {rid!r} has no publications; add their papers or "
                                     "remove the file")
        else:
            if path.suffix.lower() not in FORMATS:
                raise InputError(f"--reviewers {path}: expected a folder of archives or a .jsonl, .csv or .parquet "
                                 "file with a 'reviewer' field")
            found = {}
            for doc in _publications(records(path), path, _named_reviewer):
                found.setdefault(doc.metadata[REVIEWER], []).append(doc)
            if not found:
                raise InputError(f"{path}: no publications")
        ids = tuple(found)
        publications = tuple(doc for rid in ids for doc in found[rid])
        owner = np.repeat(np.arange(len(ids)), [len(found[rid]) for rid in ids])
        return cls(ids, publications, owner)

    def __len__(self) -> int:
        return len(self.ids)

    def of(self, position: int) -> list[Document]:
        return [self.publications[i] for i in np.flatnonzero(self.owner == position)]


def _reviewer_of(file: Path) -> str:
    try:
        return check_id(file.stem, "file name")
    except ValueError as exc:
        raise InputError(f"{file}: {exc}") from None


def _named_reviewer(row: dict[str, Any], where: str) -> str:
    if REVIEWER not in row:
        raise InputError(f"{where}: no {REVIEWER!r} field; each publication names its reviewer")
    try:
        return check_id(row[REVIEWER], REVIEWER)
    except ValueError as exc:
        raise InputError(f"{where}: {exc}") from None


def _publications(rows: Iterable[tuple[str, dict[str, Any] | Problem]], path: Path, reviewer_of) -> Iterable[Document]:
    seen: dict[tuple[str, str], str] = {}
    for where, row in rows:
        if isinstance(row, Problem):
            raise InputError(f"{row}; fix the line")
        reviewer = reviewer_of(row, where)
        row = {k: v for k, v in row.items() if k != REVIEWER}
        if not any(isinstance(row.get(k), str) and row[k].strip() for k in ("abstract", "text")):
            if not (isinstance(row.get("title"), str) and row["title"].strip()):
                raise InputError(f"{where}: publication has neither a title nor an abstract; remove it or add "
                                 "its text")
            row = {**row, "abstract": row["title"]}
        doc = parse_record(row, where, default_id=where.rsplit(":", 1)[-1])
        if (reviewer, doc.id) in seen:
            raise InputError(f"{where}: publication {doc.id!r} appears twice for reviewer {reviewer!r} (first at "
                             f"{seen[(reviewer, doc.id)]}); ids must be unique per reviewer")
        seen[(reviewer, doc.id)] = where
        yield Document(doc.id, doc.text, doc.title, {**doc.metadata, REVIEWER: reviewer})
