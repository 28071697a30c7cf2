"""Large corpora: an IVF index built the way FAISS documents for scale, and kept on disk.

The coarse quantizer and the codec (PQ, or SQ8 where there are few enough vectors for its size to
matter little) are trained on a sample; shards of the corpus are encoded in parallel (in this process,
or as Ray tasks: the same ``fill_shard`` function either way); ``faiss.contrib.ondisk.merge_ondisk``
merges them into ``vectors.ivfdata``, which is memory-mapped at query time, so serving needs RAM for
the quantizer only.
"""

from __future__ import annotations

import math
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from ...jobs.runner import JobRunner, local_map
from ...errors import CorruptIndexError, InputError
from .flat import Flat, add, read_or_corrupt

IVFDATA = "vectors.ivfdata"
def _faiss():
    import faiss

    return faiss


def factory(n: int, dim: int, settings) -> tuple[str, int]:
    """The FAISS factory string and list count for ``n`` vectors: about ``4 * sqrt(n)`` lists (fewer where
    there are not 39 training vectors per list); PQ codes of ``pq_bytes`` (default dim/4) bytes from
    ``settings.sq_below`` vectors on, SQ8 below it."""
    lists = settings.ivf_lists or max(1, min(65_536, int(4 * math.sqrt(max(n, 1))), n // 39))
    if settings.ivf_codec == "sq8" or (settings.ivf_codec == "auto" and n < settings.sq_below):
        return f"IVF{lists},SQ8", lists
    pq = settings.pq_bytes or _pq_bytes(dim)
    return f"IVF{lists},PQ{pq}x8", lists


def _pq_bytes(dim: int) -> int:
    """Sub-quantizers of 4 dimensions (96 bytes for 384-d): enough for recall >= 0.95 after re-scoring."""
    return next(m for m in (dim // 4, dim // 8, dim // 16, 1) if m >= 1 and dim % m == 0)


def train(vectors: np.ndarray, settings) -> Any:
    """An empty IVF index whose quantizer and codec are trained on a sample of ``vectors``."""
    faiss = _faiss()
    n, dim = vectors.shape
    spec, lists = factory(n, dim, settings)
    need = max(39 * lists, 256) if "PQ" in spec else 39 * lists
    if n < need:
        raise InputError(f"an IVF index with {lists} lists needs at least {need} vectors to train, got {n}; "
                         "use --index-type flat or hnsw")
    index = faiss.index_factory(dim, spec, faiss.METRIC_INNER_PRODUCT)
    if "PQ" in spec:
        index.do_polysemous_training = False
        index.pq.cp.max_points_per_centroid = 64
    index.train(_sample(vectors, max(settings.train_sample, need)))
    faiss.extract_index_ivf(index).nprobe = settings.nprobe
    return index


def _sample(vectors: np.ndarray, size: int) -> np.ndarray:
    if len(vectors) <= size:
        return np.ascontiguousarray(vectors, dtype=np.float32)
    rows = np.sort(np.random.default_rng(0).choice(len(vectors), size, replace=False))
    return np.ascontiguousarray(vectors[rows], dtype=np.float32)


def serialize(index) -> np.ndarray:
    return _faiss().serialize_index(index)


def deserialize(blob: np.ndarray):
    return _faiss().deserialize_index(blob)


def centroids(index) -> np.ndarray:
    """The coarse centroids, one row per inverted list."""
    ivf = _faiss().extract_index_ivf(index)
    return ivf.quantizer.reconstruct_n(0, ivf.nlist)


def fill_shard(trained: np.ndarray, vectors: np.ndarray, start: int) -> np.ndarray:
    """Encode one shard (rows ``start ..``) into a copy of the trained index; returns it serialized.
    The one batch function of both the local and the Ray build."""
    faiss = _faiss()
    index = faiss.deserialize_index(trained)
    for offset in range(0, len(vectors), 65_536):
        block = np.ascontiguousarray(vectors[offset:offset + 65_536], dtype=np.float32)
        index.add_with_ids(block, np.arange(start + offset, start + offset + len(block), dtype=np.int64))
    return faiss.serialize_index(index)


def write_sharded(folder: Path, name: str, vectors: np.ndarray, settings, trained=None,
                  map_shards: JobRunner = local_map) -> Any:
    """Train (unless ``trained`` is given), fill shards with ``map_shards``, merge them on disk into
    ``folder/vectors.ivfdata`` and write the index header to ``folder/name``. Returns the trained index."""
    trained = trained if trained is not None else train(vectors, settings)
    blob = serialize(trained)
    size = max(1, settings.shard_size)
    jobs = [(blob, vectors[start:start + size], start) for start in range(0, len(vectors), size)]
    _merge(blob, map_shards(fill_shard, jobs), folder, name)
    return trained


def write_ondisk(index, folder: Path, name: str) -> None:
    """Write an in-memory IVF index in the on-disk layout (header at ``folder/name``, lists in ``vectors.ivfdata``)."""
    faiss = _faiss()
    empty = faiss.clone_index(index)
    empty.reset()
    _merge(serialize(empty), [serialize(index)], folder, name)


def _merge(trained: np.ndarray, shards, folder: Path, name: str) -> None:
    """``merge_ondisk`` over shard files written to a scratch folder that is removed afterwards."""
    from faiss.contrib.ondisk import merge_ondisk

    faiss = _faiss()
    scratch = Path(tempfile.mkdtemp(dir=folder, prefix=".shards-"))
    try:
        files = []
        for number, shard in enumerate(shards):
            files.append(str(scratch / f"shard-{number:05d}.faiss"))
            Path(files[-1]).write_bytes(np.asarray(shard).tobytes())
        merged = faiss.deserialize_index(trained)
        with quiet_stdout():
            merge_ondisk(merged, files, str(folder / IVFDATA))
        faiss.write_index(merged, str(folder / name))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


@contextmanager
def quiet_stdout() -> Iterator[None]:
    """Silence FAISS's C++ ``printf`` notes about on-disk files, which would corrupt ``--json`` output."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def read_trained(path: Path):
    """The trained, empty index behind an on-disk IVF file (to add to or rebuild it without retraining)."""
    faiss = _faiss()
    index = faiss.read_index(str(path), faiss.IO_FLAG_SKIP_IVF_DATA)
    ivf = faiss.extract_index_ivf(index)
    lists = faiss.ArrayInvertedLists(ivf.nlist, ivf.code_size)
    ivf.replace_invlists(lists, True)
    lists.this.disown()
    ivf.ntotal = index.ntotal = 0
    return index


def list_of(index, vectors: np.ndarray) -> np.ndarray:
    """The inverted list each vector falls in (its nearest coarse centroid)."""
    ivf = _faiss().extract_index_ivf(index)
    _, lists = ivf.quantizer.search(np.ascontiguousarray(vectors, dtype=np.float32), 1)
    return lists[:, 0]


class IVFPQ(Flat):
    """Inverted lists with compressed codes, kept on disk: memory for the quantizer only. Scores are
    approximate, so more candidates are fetched for exact re-scoring; segments of one index share the
    quantizer of its largest IVF segment, so no small segment is trained on too few vectors."""

    kind = "ivfpq"
    exact = False
    ondisk = True
    trains = True
    RERANK_FACTOR = 4
    RERANK_MIN = 100

    @classmethod
    def train(cls, vectors: np.ndarray, settings) -> Any:
        return train(vectors, settings)

    @classmethod
    def prepare(cls, settings, existing: list[tuple[Path, int]]) -> tuple[Any, Any]:
        if existing:
            return settings, read_trained(max(existing, key=lambda e: e[1])[0])
        if settings.index_type != "auto":
            return replace(settings, index_type="auto"), None
        return settings, None

    @classmethod
    def build(cls, vectors: np.ndarray, settings, trained: Any = None) -> Any:
        index = train(vectors, settings) if trained is None else trained
        add(index, vectors)
        return index

    @classmethod
    def save(cls, path: Path, vectors: np.ndarray, settings, trained: Any = None,
             map_shards: JobRunner = local_map) -> None:
        write_sharded(path.parent, path.name, vectors, settings, trained, map_shards)

    @classmethod
    def write(cls, index: Any, path: Path) -> None:
        write_ondisk(index, path.parent, path.name)

    @classmethod
    def read(cls, path: Path) -> Any:
        if not (path.parent / IVFDATA).exists():
            raise CorruptIndexError(f"{path.parent / IVFDATA} is missing; rebuild with `embedsearch build`")
        faiss = _faiss()
        with quiet_stdout():
            return read_or_corrupt(path, faiss.IO_FLAG_ONDISK_SAME_DIR | faiss.IO_FLAG_READ_ONLY)

    @classmethod
    def parameters(cls, index: Any, selector: Any, k: int) -> Any:
        faiss = _faiss()
        return faiss.SearchParametersIVF(sel=selector, nprobe=faiss.extract_index_ivf(index).nprobe)

    @classmethod
    def fetch(cls, k: int) -> int:
        return max(k * cls.RERANK_FACTOR, cls.RERANK_MIN)

    @classmethod
    def partitions(cls, index: Any, n: int, rows_per_job: int) -> list[np.ndarray]:
        """Whole inverted lists packed to about ``rows_per_job`` rows (a duplicate-search job then probes
        neighbouring lists, so a pair split across two lists is still found)."""
        faiss = _faiss()
        lists = faiss.extract_index_ivf(index).invlists
        parts, current, size = [], [], 0
        for number in range(lists.nlist):
            count = lists.list_size(number)
            if count == 0:
                continue
            current.append(faiss.rev_swig_ptr(lists.get_ids(number), count).copy())
            size += count
            if size >= rows_per_job:
                parts.append(np.sort(np.concatenate(current)))
                current, size = [], 0
        if current:
            parts.append(np.sort(np.concatenate(current)))
        return parts
