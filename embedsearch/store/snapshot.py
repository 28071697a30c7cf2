"""A read snapshot: one generation of an index, opened as a unit.

Rows of a snapshot are its *live* documents numbered 0..n-1, segment after segment, so search, topics
and dedup see one contiguous corpus however it is split on disk and whatever was deleted. A snapshot
never changes: a newer generation is a new snapshot (``Index.refresh``)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..corpus import Document
from ..corpus.kinds import combine
from ..embedding.query_encoder import query_encoder
from . import deletes
from . import generation as gen
from . import vectors as vec
from .manifest import Manifest
from .segment import Segment

SCATTERED_ROWS = 1024  # picks up to this many rows read a page each, cold; longer ones are scans


class DocumentRows(Protocol):
    """Documents by row: their ids in row order, some rows, or all in order."""

    @property
    def ids(self) -> list[str]: ...

    def get(self, rows: Sequence[int]) -> list[Document]: ...

    def __iter__(self) -> Iterator[Document]: ...

    def __len__(self) -> int: ...


class Rows(Protocol):
    """What search, topics and dedup read of a corpus: its documents and their unit embeddings (an
    ``(n, dim)`` float32 array-like), by row 0..n-1. A ``Snapshot`` implements it, and so does a batch of
    abstracts not yet committed (``dedup.pending.Pending``)."""

    documents: DocumentRows
    embeddings: Any


class Snapshot:
    """Generation ``number`` of the index at ``root``."""

    def __init__(self, root: Path, manifest: Manifest, number: int):
        self.root = root
        self.number = number
        self.manifest = manifest
        self.generation = gen.read(root, number)
        self.segments = [Segment(root, entry, manifest.model.dimension) for entry in self.generation.segments]
        self.live = [deletes.read_deletes(root, entry) for entry in self.generation.segments]
        self.parts: dict[str, Snapshot] = {}
        self._number_rows()

    @classmethod
    def union(cls, root: Path, number: int, parts: dict[str, Snapshot], committed_at: str = "") -> Snapshot:
        """Several snapshots read as one (the shards of a cluster at cut ``number``): their segments in part
        order, so row numbers run part after part, and every read (search with the whole corpus's BM25
        statistics, one dense shortlist, filters under one field contract, topics, duplicates) is one
        index's over all their documents."""
        self = cls.__new__(cls)
        first = next(iter(parts.values()))
        self.root, self.number, self.manifest, self.parts = root, number, first.manifest, dict(parts)
        self.segments = [s for p in parts.values() for s in p.segments]
        self.live = [m for p in parts.values() for m in p.live]
        self.generation = gen.Generation(number, tuple(e for p in parts.values() for e in p.generation.segments),
                                         number, committed_at, sum(len(p) for p in parts.values()))
        self._number_rows()
        return self

    def _number_rows(self) -> None:
        counts = [s.rows if m is None else int(m.sum()) for s, m in zip(self.segments, self.live)]
        self.offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        self._physical = [None if m is None else np.flatnonzero(m) for m in self.live]
        self._renumber = [None if m is None else np.cumsum(m) - 1 for m in self.live]

    def __len__(self) -> int:
        return int(self.offsets[-1])

    @property
    def path(self) -> Path:
        return self.root

    @cached_property
    def encoder(self):
        """The query encoder of the index's model (the fast ONNX path where it exists)."""
        model = self.manifest.model
        settings = model.settings
        return query_encoder(model.name, model.fingerprint, settings.max_windows, settings.tail_weight, settings.precision)

    @property
    def simple(self) -> bool:
        """One segment and nothing deleted: rows are the segment's own rows."""
        return len(self.segments) == 1 and self.live[0] is None

    @property
    def index_type(self) -> str:
        return "+".join(sorted({s.index_type for s in self.segments}))

    def to_json(self) -> dict[str, Any]:
        """The manifest and this generation as one JSON object (the kind of each segment's vector index
        summed up under ``index``)."""
        out = {**self.manifest.to_json(), **self.generation.to_json()}
        ondisk = any(vec.backend(s.index_type).ondisk for s in self.segments)
        return {**out, "index": {**out["index"], "type": self.index_type, "ondisk": ondisk}}

    def summary(self) -> dict[str, Any]:
        m, g = self.manifest, self.generation
        return {"documents": len(self), "model": m.model.name, "dimension": m.model.dimension,
                "fingerprint": m.model.fingerprint,
                "precision": m.model.settings.precision, "index_type": self.index_type, "segments": len(self.segments),
                "deleted": sum(e.deleted for e in g.segments), "generation": self.number, "built_at": m.built_at,
                "updated_at": g.committed_at, "format_version": m.format_version,
                "package_version": m.package_version, "provenance": m.provenance, "field_kinds": self.field_kinds,
                **({"shards": {name: len(p) for name, p in self.parts.items()}} if self.parts else {})}

    @cached_property
    def field_kinds(self) -> dict[str, str]:
        """The field contract of this generation (``corpus.kinds``): each metadata field's kind, as its
        segments record it. New records must fit it."""
        return combine([segment.fields for segment in self.segments])

    def locate(self, rows: np.ndarray) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
        """For live ``rows``: each segment they fall in, their positions in ``rows``, and their segment rows."""
        rows = np.asarray(rows, dtype=np.int64)
        if len(rows) and (rows.min() < 0 or rows.max() >= len(self)):
            raise IndexError(f"row out of range 0..{len(self) - 1}")
        if len(self.segments) == 1 and len(rows):  # the common case, without a sort of the page
            yield 0, np.arange(len(rows)), rows if self._physical[0] is None else self._physical[0][rows]
            return
        owner = np.searchsorted(self.offsets, rows, side="right") - 1
        for s in np.unique(owner).tolist():
            positions = np.flatnonzero(owner == s)
            local = rows[positions] - self.offsets[s]
            yield s, positions, local if self._physical[s] is None else self._physical[s][local]

    def to_live(self, segment: int, local: np.ndarray) -> np.ndarray:
        renumber = self._renumber[segment]
        return self.offsets[segment] + (local if renumber is None else renumber[local])

    @property
    def embeddings(self) -> LiveMatrix:
        """A view, made on each access: a snapshot holds no reference to its views, so no reference cycle
        keeps a superseded snapshot (its vector indexes, its mapped pages) alive after an index moves on."""
        return LiveMatrix(self)

    @property
    def documents(self) -> LiveDocuments:
        return LiveDocuments(self)

    @cached_property
    def ids(self) -> list[str]:
        """The ids of the live rows, in row order."""
        out: list[str] = []
        for segment, live in zip(self.segments, self.live):
            ids = segment.documents.ids
            out.extend(ids if live is None else (i for i, keep in zip(ids, live) if keep))
        return out

    @cached_property
    def row_of(self) -> dict[str, int]:
        return {doc_id: row for row, doc_id in enumerate(self.ids)}

    def physical(self, s: int, allowed: np.ndarray) -> np.ndarray:
        """Segment ``s``'s physical rows where ``allowed`` (one flag per live row of the segment) is true."""
        mask = np.zeros(self.segments[s].rows, dtype=bool)
        mask[self._physical[s] if self._physical[s] is not None else slice(None)] = allowed
        return mask

    def partitions(self, rows_per_job: int) -> list[np.ndarray]:
        """Rows per duplicate-search job: whole IVF lists for a single IVF segment, else row ranges."""
        if self.simple:
            return vec.backend(self.segments[0].index_type).partitions(self.segments[0].vectors, len(self), rows_per_job)
        n = len(self)
        return [np.arange(start, min(n, start + rows_per_job)) for start in range(0, n, rows_per_job)]


class LiveMatrix:
    """The embeddings of a snapshot's live rows, gathered from the segments' memory maps on indexing."""

    dtype = np.dtype(np.float32)

    def __init__(self, snapshot: Snapshot):
        self.snapshot = snapshot
        self.shape = (len(snapshot), snapshot.manifest.model.dimension)

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, key):
        snap = self.snapshot
        if snap.simple:
            return _mapping(snap.segments[0], key)[key]
        if isinstance(key, (int, np.integer)):
            return self[np.asarray([key])][0]
        rows = np.arange(len(self))[key] if isinstance(key, slice) else np.asarray(key)
        if rows.dtype == bool:
            rows = np.flatnonzero(rows)
        out = np.empty((len(rows), self.shape[1]), dtype=np.float32)
        for s, positions, local in snap.locate(rows):
            out[positions] = _mapping(snap.segments[s], local)[local]
        return out

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        snap = self.snapshot
        parts = [seg.embeddings if live is None else seg.embeddings[live] for seg, live in zip(snap.segments, snap.live)]
        matrix = np.asarray(parts[0]) if len(parts) == 1 else np.concatenate(parts) if parts else \
            np.zeros(self.shape, np.float32)
        return matrix.astype(dtype, copy=False) if dtype is not None else matrix


def _mapping(segment: Segment, key) -> np.ndarray:
    """The segment's embeddings mapped for ``key``: without read-ahead for a few rows picked by index, with it
    for slices, masks and longer picks, which read much of the file anyway."""
    if isinstance(key, (int, np.integer)):
        return segment.scattered
    if isinstance(key, slice):
        return segment.embeddings
    key = np.asarray(key)
    return segment.scattered if key.dtype != bool and key.size <= SCATTERED_ROWS else segment.embeddings


class LiveDocuments:
    """The documents of a snapshot's live rows: by row, by id, or in order."""

    def __init__(self, snapshot: Snapshot):
        self.snapshot = snapshot

    def __len__(self) -> int:
        return len(self.snapshot)

    @property
    def ids(self) -> list[str]:
        return self.snapshot.ids

    @property
    def row_of(self) -> dict[str, int]:
        return self.snapshot.row_of

    def get(self, rows: Sequence[int]) -> list[Document]:
        out: list[Document | None] = [None] * len(rows)
        for s, positions, local in self.snapshot.locate(np.asarray(rows, dtype=np.int64)):
            for position, doc in zip(positions.tolist(), self.snapshot.segments[s].documents.get(local.tolist())):
                out[position] = doc
        return out  # type: ignore[return-value]

    def __iter__(self) -> Iterator[Document]:
        for segment, live in zip(self.snapshot.segments, self.snapshot.live):
            for row, doc in enumerate(segment.documents):
                if live is None or live[row]:
                    yield doc
