"""Documents of an index on disk: JSON lines plus a byte-offset table, so a search reads only
the rows it returns and a corpus of millions never has to be parsed to answer a query."""

from __future__ import annotations

import json
import os
from array import array
from collections.abc import Iterable, Iterator, Sequence
from functools import cached_property
from pathlib import Path
from typing import BinaryIO

import numpy as np

from ..corpus import Document
from ..errors import CorruptIndexError

DOCS = "documents.jsonl"
OFFSETS = "documents.offsets.npy"
IDS = "ids.json"
ID_HASHES = "ids.hash.npy"


def id_hash(doc_id: str) -> int:
    """A 64-bit hash of an id, so an id is found without reading every id of a large segment."""
    import hashlib

    return int.from_bytes(hashlib.blake2b(doc_id.encode("utf-8"), digest_size=8).digest(), "little")


def id_hashes(ids: Sequence[str]) -> np.ndarray:
    return np.fromiter((id_hash(i) for i in ids), dtype=np.uint64, count=len(ids))


def write_documents(folder: Path, documents: Iterable[Document]) -> int:
    """Write documents in row order; returns how many. Offsets, ids and their hashes are written as they
    come (16 bytes a document held, not the id strings), so a merge of millions stays small."""
    offsets, hashes = array("q", [0]), array("Q")
    with (folder / DOCS).open("wb") as fh, (folder / IDS).open("w", encoding="utf-8") as ids:
        ids.write("[")
        for doc in documents:
            line = (json.dumps(doc.to_record(), ensure_ascii=False) + "\n").encode("utf-8")
            fh.write(line)
            offsets.append(offsets[-1] + len(line))
            ids.write((", " if hashes else "") + json.dumps(doc.id, ensure_ascii=False))
            hashes.append(id_hash(doc.id))
        ids.write("]")
    np.save(folder / OFFSETS, np.frombuffer(offsets, dtype=np.int64))
    table = np.frombuffer(hashes, dtype=np.uint64)
    order = np.argsort(table, kind="stable")
    np.save(folder / ID_HASHES, np.stack([table[order], order.astype(np.uint64)]))
    return len(table)


class DocumentStore:
    """Read access to an index's documents by row or by id."""

    def __init__(self, folder: Path):
        self.folder = folder
        try:
            self._offsets = np.load(folder / OFFSETS)
            size = (folder / DOCS).stat().st_size
        except (OSError, ValueError) as exc:
            raise CorruptIndexError(f"{folder / OFFSETS}: unreadable ({exc}); rebuild the index") from exc
        if self._offsets.ndim != 1 or len(self._offsets) == 0 or int(self._offsets[-1]) != size:
            raise CorruptIndexError(f"{folder / DOCS}: {size:,} bytes, but its offset table expects "
                                    f"{int(self._offsets[-1]) if self._offsets.size else 0:,}; rebuild the index")
        if self._offsets[0] != 0 or (np.diff(self._offsets) <= 0).any():
            raise CorruptIndexError(f"{folder / OFFSETS}: the offsets do not rise from 0 (a damaged file); "
                                    "restore it or rebuild the index")

    def __len__(self) -> int:
        return len(self._offsets) - 1

    @cached_property
    def _file(self) -> BinaryIO:
        """The documents file, opened once: a served search reads ten rows, and an open a call cost more than
        the reads (closed when the store is dropped; a replaced file keeps the rows its offsets describe)."""
        return (self.folder / DOCS).open("rb", buffering=0)

    def get(self, rows: Sequence[int]) -> list[Document]:
        out = []
        fd = self._file.fileno()
        for row in rows:
            start = int(self._offsets[row])
            line = os.pread(fd, int(self._offsets[row + 1]) - start, start)
            try:
                out.append(Document.from_record(json.loads(line)))
            except (ValueError, KeyError, TypeError) as exc:
                raise CorruptIndexError(f"{self.folder / DOCS}: row {row} is corrupted; rebuild the index") \
                    from exc
        return out

    def __iter__(self) -> Iterator[Document]:
        with (self.folder / DOCS).open("rb") as fh:
            for row, line in enumerate(fh):
                try:
                    yield Document.from_record(json.loads(line))
                except (ValueError, KeyError, TypeError) as exc:
                    raise CorruptIndexError(f"{self.folder / DOCS}: row {row} is corrupted; rebuild the index") \
                        from exc

    @cached_property
    def ids(self) -> list[str]:
        try:
            ids = json.loads((self.folder / IDS).read_text())
        except (OSError, ValueError) as exc:
            raise CorruptIndexError(f"{self.folder / IDS}: unreadable ({exc}); rebuild the index") from exc
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise CorruptIndexError(f"{self.folder / IDS}: not a list of ids; rebuild the index")
        if len(ids) != len(self):
            raise CorruptIndexError(f"{self.folder / IDS}: {len(ids)} ids for {len(self)} documents; "
                                    "rebuild the index")
        return ids

    def find(self, ids: Sequence[str]) -> np.ndarray:
        """The row of each id (-1 where absent), through the sorted id hashes: no full id list is read."""
        try:
            table = np.load(self.folder / ID_HASHES, mmap_mode="r")
        except (OSError, ValueError) as exc:
            raise CorruptIndexError(f"{self.folder / ID_HASHES}: unreadable ({exc}); rebuild the index") from exc
        if table.shape != (2, len(self)):
            raise CorruptIndexError(f"{self.folder / ID_HASHES}: wrong shape {table.shape}; rebuild the index")
        wanted = id_hashes(ids)
        rows = np.full(len(ids), -1, dtype=np.int64)
        for i, (doc_id, h) in enumerate(zip(ids, wanted)):
            at = int(np.searchsorted(table[0], h))
            while at < len(self) and table[0][at] == h:
                row = int(table[1][at])
                if self.get([row])[0].id == doc_id:
                    rows[i] = row
                    break
                at += 1
        return rows
