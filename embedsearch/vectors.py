"""FAISS: choose, build, grow and search the vector index. Row ``i`` of the index is document ``i``.

Exact inner product (``flat``) for small corpora; HNSW above ``exact_below``; IVF-PQ above
``compress_above``, where memory matters more than a little recall. Vectors are unit length,
so inner product is cosine similarity.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import ivf
from .errors import CorruptIndexError, InputError

INDEX_TYPES = ("auto", "flat", "hnsw", "ivfpq")
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


def _faiss():
    import faiss

    return faiss


def build(vectors: np.ndarray, settings: VectorSettings = VectorSettings()):
    """An in-memory FAISS index over ``vectors`` (rows are unit float32 vectors)."""
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
        index = ivf.train(vectors, settings)
    add(index, vectors)
    return index


def save(path: Path, vectors: np.ndarray, settings: VectorSettings, trained=None,
         map_shards: ivf.ShardMap = ivf.local_map) -> str:
    """Build the index ``settings`` choose for ``vectors`` and write it at ``path``; an IVF index is
    filled shard by shard with ``map_shards`` (optionally reusing a ``trained`` quantizer) and merged
    on disk next to ``path``. Returns the kind built."""
    kind = settings.choose(len(vectors))
    if kind == "ivfpq":
        ivf.write_sharded(path.parent, path.name, vectors, settings, trained, map_shards)
    else:
        write(build(vectors, VectorSettings(**{**settings.__dict__, "index_type": kind})), path)
    return kind


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
    """Write ``index`` at ``path``; an IVF index's lists go on disk next to it."""
    if kind_of(index) == "ivfpq":
        ivf.write_ondisk(index, path.parent, path.name)
    else:
        _faiss().write_index(index, str(path))


def read(path: Path):
    """Open an index file; on-disk IVF lists are memory-mapped from the same folder, not loaded."""
    faiss = _faiss()
    ondisk = (path.parent / ivf.IVFDATA).exists()
    try:
        if ondisk:
            with ivf.quiet_stdout():
                return faiss.read_index(str(path), faiss.IO_FLAG_ONDISK_SAME_DIR | faiss.IO_FLAG_READ_ONLY)
        return faiss.read_index(str(path))
    except RuntimeError as exc:
        reason = str(exc).strip().splitlines()[-1] if str(exc).strip() else "unreadable"
        raise CorruptIndexError(f"{path}: FAISS file is corrupted ({reason[:120]}); rebuild with `embedsearch build`") \
            from exc
