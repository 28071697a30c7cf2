"""FAISS: choose, build, grow and search the vector index. Row ``i`` of the index is document ``i``.

Exact inner product (``flat``) for small corpora; HNSW above ``exact_below``; IVF-PQ above
``compress_above``, where memory matters more than a little recall. Vectors are unit length,
so inner product is cosine similarity.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import IndexStoreError, InputError

INDEX_TYPES = ("auto", "flat", "hnsw", "ivfpq")


@dataclass(frozen=True)
class VectorSettings:
    """Which FAISS index to build and how to search it; defaults scale with corpus size."""

    index_type: str = "auto"
    exact_below: int = 50_000
    compress_above: int = 2_000_000
    hnsw_m: int = 32
    hnsw_ef_construction: int = 80
    hnsw_ef_search: int = 128
    ivf_lists: int | None = None
    pq_bytes: int | None = None
    nprobe: int = 32
    train_sample: int = 100_000

    def __post_init__(self) -> None:
        if self.index_type not in INDEX_TYPES:
            raise InputError(f"unknown index type {self.index_type!r}; choose one of {', '.join(INDEX_TYPES)}")

    def choose(self, n: int) -> str:
        if self.index_type != "auto":
            return self.index_type
        if n < self.exact_below:
            return "flat"
        return "hnsw" if n < self.compress_above else "ivfpq"


def _faiss():
    import faiss

    return faiss


def build(vectors: np.ndarray, settings: VectorSettings = VectorSettings()):
    """A FAISS index over ``vectors`` (rows are unit float32 vectors)."""
    faiss = _faiss()
    n, dim = vectors.shape
    kind = settings.choose(n)
    if kind == "flat":
        index = faiss.IndexFlatIP(dim)
    elif kind == "hnsw":
        index = faiss.IndexHNSWFlat(dim, settings.hnsw_m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = settings.hnsw_ef_construction
        index.hnsw.efSearch = settings.hnsw_ef_search
    else:
        lists = settings.ivf_lists or max(1, min(65_536, int(4 * math.sqrt(max(n, 1)))))
        pq = settings.pq_bytes or _pq_bytes(dim)
        if n < 39 * lists or n < 256:
            raise InputError(f"ivfpq needs at least {max(39 * lists, 256)} vectors to train, got {n}; "
                             "use --index-type flat or hnsw")
        index = faiss.index_factory(dim, f"IVF{lists},PQ{pq}x8", faiss.METRIC_INNER_PRODUCT)
        index.train(_sample(vectors, settings.train_sample))
        index.nprobe = settings.nprobe
    add(index, vectors)
    return index


def _pq_bytes(dim: int) -> int:
    return next(m for m in (64, 48, 32, 24, 16, 8, 4, 2, 1) if dim % m == 0 and m <= dim // 4 or m == 1)


def _sample(vectors: np.ndarray, size: int) -> np.ndarray:
    if len(vectors) <= size:
        return np.ascontiguousarray(vectors, dtype=np.float32)
    rows = np.sort(np.random.default_rng(0).choice(len(vectors), size, replace=False))
    return np.ascontiguousarray(vectors[rows], dtype=np.float32)


def kind_of(index) -> str:
    faiss = _faiss()
    if isinstance(index, faiss.IndexHNSW):
        return "hnsw"
    if isinstance(index, faiss.IndexIVF) or faiss.try_extract_index_ivf(index) is not None:
        return "ivfpq"
    return "flat"


def is_exact(index) -> bool:
    """True when scores from ``search`` are exact cosines (no compression)."""
    return kind_of(index) != "ivfpq"


def add(index, vectors: np.ndarray, chunk: int = 65_536) -> None:
    for start in range(0, len(vectors), chunk):
        index.add(np.ascontiguousarray(vectors[start:start + chunk], dtype=np.float32))


def rebuild(index, vectors: np.ndarray, settings: VectorSettings):
    """Re-index ``vectors`` after rows were removed, reusing a trained quantizer when there is one."""
    if kind_of(index) == "ivfpq" and len(vectors) > 0:
        fresh = _faiss().clone_index(index)
        fresh.reset()
        add(fresh, vectors)
        return fresh
    return build(vectors, VectorSettings(**{**settings.__dict__, "index_type": kind_of(index)}))


def search(index, queries: np.ndarray, k: int,
           allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Top-``k`` rows and scores per query, optionally only among rows where ``allowed`` is true;
    missing slots have row -1."""
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    if allowed is None:
        return index.search(queries, max(1, min(k, index.ntotal)))
    faiss = _faiss()
    ids = np.flatnonzero(allowed).astype(np.int64)
    if len(ids) == 0:
        return np.zeros((len(queries), 0), np.float32), np.zeros((len(queries), 0), np.int64)
    selector = faiss.IDSelectorBatch(ids)
    kind = kind_of(index)
    if kind == "hnsw":
        params = faiss.SearchParametersHNSW(sel=selector, efSearch=max(index.hnsw.efSearch, k))
    elif kind == "ivfpq":
        params = faiss.SearchParametersIVF(sel=selector, nprobe=faiss.extract_index_ivf(index).nprobe)
    else:
        params = faiss.SearchParameters(sel=selector)
    return index.search(queries, max(1, min(k, len(ids))), params=params)


def write(index, path: Path) -> None:
    _faiss().write_index(index, str(path))


def read(path: Path, mmap: bool = False):
    faiss = _faiss()
    try:
        flags = faiss.IO_FLAG_MMAP | faiss.IO_FLAG_READ_ONLY if mmap else 0
        return faiss.read_index(str(path), flags)
    except RuntimeError as exc:
        reason = str(exc).strip().splitlines()[-1] if str(exc).strip() else "unreadable"
        raise IndexStoreError(f"{path}: FAISS file is corrupted ({reason[:120]}); rebuild with `embedsearch build`") \
            from exc
