"""The vector index of a segment, one interface over three FAISS backends chosen by a factory from the
settings: exact inner product (``flat``) for small corpora, HNSW above ``exact_below``, IVF-PQ above
``compress_above``, where memory matters more than a little recall. Row ``i`` of an index is document ``i``;
vectors are unit length, so inner product is cosine similarity."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, NamedTuple
from functools import lru_cache
from pathlib import Path

import numpy as np

from ...engine.jobs import JobRunner, local_map
from ...errors import InputError
from . import ivf
from .flat import Flat, faiss_module
from .hnsw import HNSW
from .ivf import IVFPQ

BACKENDS: dict[str, type[Flat]] = {b.kind: b for b in (Flat, HNSW, IVFPQ)}
INDEX_TYPES = ("auto", *BACKENDS)
IVF_CODECS = ("auto", "pq", "sq8")


@dataclass(frozen=True)
class VectorSettings:
    """Which FAISS index to build and how to search it; defaults scale with corpus size.

    At ``compress_above`` vectors and beyond, the index is IVF (see ``ivf``): trained on ``train_sample``
    vectors, filled in shards of ``shard_size`` and kept on disk. ``ivf_codec`` ``auto`` stores SQ8
    codes below ``sq_below`` vectors and PQ codes (``pq_bytes``, default dim/4) from there on.
    """

    index_type: str = "auto"
    exact_below: int = 50_000
    compress_above: int = 1_000_000
    hnsw_m: int = 32
    hnsw_ef_construction: int = 80
    hnsw_ef_search: int = 128
    ivf_lists: int | None = None
    ivf_codec: str = "auto"
    sq_below: int = 200_000
    pq_bytes: int | None = None
    nprobe: int = 32
    train_sample: int = 100_000
    shard_size: int = 250_000

    def __post_init__(self) -> None:
        if self.index_type not in INDEX_TYPES:
            raise InputError(f"unknown index type {self.index_type!r}; choose one of {', '.join(INDEX_TYPES)}")
        if self.ivf_codec not in IVF_CODECS:
            raise InputError(f"unknown IVF codec {self.ivf_codec!r}; choose one of {', '.join(IVF_CODECS)}")
        positive = ("exact_below", "compress_above", "hnsw_m", "hnsw_ef_construction", "hnsw_ef_search", "nprobe",
                    "train_sample", "shard_size", "sq_below")
        for name in positive + tuple(n for n in ("ivf_lists", "pq_bytes") if getattr(self, n) is not None):
            if getattr(self, name) < 1:
                raise InputError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.exact_below > self.compress_above:
            raise InputError(f"exact_below ({self.exact_below:,}) must not exceed compress_above "
                             f"({self.compress_above:,}): exact search below one, compression from the other")

    def choose(self, n: int) -> str:
        if self.index_type != "auto":
            return self.index_type
        if n < self.exact_below:
            return "flat"
        return "hnsw" if n < self.compress_above else "ivfpq"


def backend(kind: str) -> type[Flat]:
    return BACKENDS[kind]


def kind_of(faiss_index) -> str:
    if type(faiss_index) in _exact():  # asked on every search: skip the IVF probe for the common exact index
        return Flat.kind
    return next(b.kind for b in (IVFPQ, HNSW, Flat) if b.owns(faiss_index))


@lru_cache(maxsize=1)
def _exact() -> frozenset[type]:
    return frozenset(getattr(faiss_module(), n) for n in ("IndexFlatIP", "IndexFlatL2", "IndexFlat"))


def build(vectors: np.ndarray, settings: VectorSettings = VectorSettings()):
    """An in-memory FAISS index over ``vectors`` (rows are unit float32 vectors)."""
    return BACKENDS[settings.choose(len(vectors))].build(vectors, settings)


def save(path: Path, vectors: np.ndarray, settings: VectorSettings, trained=None,
         map_shards: JobRunner = local_map) -> str:
    """Build the index ``settings`` choose for ``vectors`` and write it at ``path`` (an IVF index is filled
    shard by shard with ``map_shards``, optionally reusing a ``trained`` quantizer). Returns the kind built."""
    kind = settings.choose(len(vectors))
    BACKENDS[kind].save(path, vectors, replace(settings, index_type=kind), trained, map_shards)
    return kind


def segment_writer(settings: VectorSettings, matrix: np.ndarray, existing: Sequence[tuple[str, Path, int]],
                   map_shards: JobRunner = local_map, merged: bool = False):
    """``write(file) -> kind`` for a new segment (an add or a ``merged`` one) of an index whose segments are
    ``existing`` ``(kind, folder, rows)``: the kind the settings choose for its size, prepared by its backend.
    A merge keeps an index that has grown to IVF on IVF (sharing its quantizer) where the size alone would
    choose HNSW, whose graph holds every vector in memory: compacting 1M rows less a few deletions stays IVF."""
    kind = settings.choose(len(matrix))
    stay = merged and kind == HNSW.kind and settings.index_type == "auto" and any(k == IVFPQ.kind for k, _, _ in existing)
    kind = IVFPQ.kind if stay else kind
    settings, trained = BACKENDS[kind].prepare(settings, [(f, n) for k, f, n in existing if k == kind])
    settings = replace(settings, index_type=kind) if stay else settings
    return lambda file: save(file, matrix, settings, trained, map_shards)


def write(faiss_index, path: Path) -> None:
    BACKENDS[kind_of(faiss_index)].write(faiss_index, path)


def read(path: Path, kind: str | None = None):
    """Open an index file; on-disk IVF lists are memory-mapped from the same folder, not loaded."""
    if kind is None:
        kind = "ivfpq" if (path.parent / ivf.IVFDATA).exists() else "flat"
    return BACKENDS[kind].read(path)


def search(faiss_index, queries: np.ndarray, k: int,
           allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Top-``k`` rows and scores per query, optionally only among rows where ``allowed`` is true;
    missing slots have row -1."""
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    if allowed is None:
        return faiss_index.search(queries, max(1, min(k, faiss_index.ntotal)))
    import faiss

    ids = np.flatnonzero(allowed).astype(np.int64)
    if len(ids) == 0:
        return np.zeros((len(queries), 0), np.float32), np.zeros((len(queries), 0), np.int64)
    params = BACKENDS[kind_of(faiss_index)].parameters(faiss_index, faiss.IDSelectorBatch(ids), k)
    return faiss_index.search(queries, max(1, min(k, len(ids))), params=params)


class Shortlisted(NamedTuple):
    """A row a dense search re-scores: its ``key`` (a row, or whatever the caller keys rows by), the
    backend's ``approximate`` score (None where that score is exact) and its exact ``cosine``."""

    key: Any
    approximate: float | None
    cosine: float


def shortlist(faiss_index, embeddings: np.ndarray, queries: np.ndarray, k: int,
              exclude: Sequence[int | None] | None = None,
              allowed: np.ndarray | None = None) -> list[list[Shortlisted]]:
    """Per query, what a search for ``k`` re-scores: ``(row, approximate, cosine)`` for the ``fetch(k)`` best
    by the backend's own score (``approximate`` None and only ``k`` where that score is exact), each with its
    cosine from ``embeddings``; ``exclude`` drops one row per query before the cut."""
    backend = BACKENDS[kind_of(faiss_index)]
    keep = backend.fetch(k)
    approx, rows = search(faiss_index, queries, backend.fetch(k + (1 if exclude is not None else 0)), allowed)
    results = []
    for q, found in enumerate(rows):
        chosen = found >= 0
        if exclude is not None and exclude[q] is not None:
            chosen &= found != exclude[q]
        found, scores = found[chosen][:keep], approx[q][chosen][:keep]
        order = np.argsort(found, kind="stable")
        cosines = np.empty(len(found), dtype=np.float32)
        cosines[order] = np.asarray(embeddings[found[order]], dtype=np.float32) @ queries[q]
        results.append([Shortlisted(int(r), None if backend.exact else float(a), float(c))
                        for r, a, c in zip(found.tolist(), scores.tolist(), cosines.tolist())])
    return results


def best(candidates: Sequence[Shortlisted], k: int) -> list[Shortlisted]:
    """The ``k`` best by cosine of shortlists gathered from segments or shards, after cutting the approximate
    ones to the ``fetch(k)`` best by approximate score over them all: a shared quantizer gives every document
    the same approximate score wherever it lies, so any split of the rows ranks as one index over them."""
    approximate = sorted((c for c in candidates if c.approximate is not None), key=lambda c: (-c.approximate, c.key))
    chosen = approximate[:IVFPQ.fetch(k)] + [c for c in candidates if c.approximate is None]
    return sorted(chosen, key=lambda c: (-c.cosine, c.key))[:k]


def dense_rows(faiss_index, embeddings: np.ndarray, queries: np.ndarray, k: int,
               exclude: Sequence[int | None] | None = None,
               allowed: np.ndarray | None = None) -> list[list[tuple[int, float]]]:
    """Top-``k`` ``(row, cosine)`` per query; candidates are re-scored exactly from ``embeddings``."""
    return [[(r, c) for r, _, c in best(found, k)]
            for found in shortlist(faiss_index, embeddings, queries, k, exclude, allowed)]


def partitions(faiss_index, n: int, rows_per_job: int) -> list[np.ndarray]:
    """Rows per parallel job over a FAISS index of ``n`` rows (whole inverted lists for IVF, else row ranges)."""
    return BACKENDS[kind_of(faiss_index)].partitions(faiss_index, n, rows_per_job)
