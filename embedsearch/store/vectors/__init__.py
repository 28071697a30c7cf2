"""The vector index of a segment, one interface over three FAISS backends chosen by a factory from the
settings: exact inner product (``flat``) for small corpora, HNSW above ``exact_below``, IVF-PQ above
``compress_above``, where memory matters more than a little recall. Row ``i`` of an index is document ``i``;
vectors are unit length, so inner product is cosine similarity."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from ...jobs.runner import JobRunner, local_map
from ..settings import INDEX_TYPES, VectorSettings
from . import ivf
from .flat import Flat
from .hnsw import HNSW
from .ivf import IVFPQ

BACKENDS: dict[str, type[Flat]] = {b.kind: b for b in (Flat, HNSW, IVFPQ)}
assert INDEX_TYPES == ("auto", *BACKENDS), "store.settings.INDEX_TYPES names every backend"

def backend(kind: str) -> type[Flat]:
    return BACKENDS[kind]


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


def read(path: Path, kind: str | None = None):
    """Open an index file; on-disk IVF lists are memory-mapped from the same folder, not loaded."""
    if kind is None:
        kind = "ivfpq" if (path.parent / ivf.IVFDATA).exists() else "flat"
    return BACKENDS[kind].read(path)
