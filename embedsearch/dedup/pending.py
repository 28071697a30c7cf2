"""Abstracts not in any index (a submission being checked): their documents and vectors, shaped as the
reference side of ``candidates.across`` expects, and exact-text lookup in a snapshot that reads each
immutable segment's text hashes once (sorted 8-byte keys: 8 MB per million abstracts)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..corpus import Document
from ..store.docstore import DocumentStore
from .evidence import text_hash


class PendingDocuments(list):
    """Documents by row, as a snapshot's ``documents`` are read."""

    @property
    def ids(self) -> list[str]:
        return [d.id for d in self]

    def get(self, rows: Sequence[int]) -> list[Document]:
        return [self[r] for r in rows]


class Pending:
    """New abstracts and their vectors (made with the reference index's model)."""

    def __init__(self, documents: Sequence[Document], embeddings: np.ndarray):
        self.documents = PendingDocuments(documents)
        self.embeddings = np.asarray(embeddings, dtype=np.float32)


def _key(text: str) -> np.uint64:
    return np.frombuffer(text_hash(text)[:8], dtype=np.uint64)[0]


@lru_cache(maxsize=256)
def _segment_keys(folder: str, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """A segment's text keys sorted, and the segment rows in that order (segments never change)."""
    keys = np.fromiter((_key(d.text) for d in DocumentStore(Path(folder))), dtype=np.uint64, count=rows)
    order = np.argsort(keys, kind="stable")
    return keys[order], order


def exact_row(snapshot, text: str) -> int | None:
    """The first live row of ``snapshot`` whose text equals ``text`` after normalising, if any."""
    key = _key(text)
    for s, segment in enumerate(snapshot.segments):
        keys, order = _segment_keys(str(segment.folder), segment.rows)
        start, stop = np.searchsorted(keys, key, side="left"), np.searchsorted(keys, key, side="right")
        live = snapshot.live[s]
        for local in sorted(order[start:stop].tolist()):
            if live is None or live[local]:
                row = int(snapshot.to_live(s, np.asarray([local]))[0])
                if text_hash(snapshot.documents.get([row])[0].text) == text_hash(text):
                    return row
    return None
