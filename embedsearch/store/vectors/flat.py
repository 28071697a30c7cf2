"""The vector-index backend interface, and its simplest implementation: exact inner product over every
vector (small corpora). HNSW and IVF-PQ subclass it and override what differs; nothing outside this
package asks which kind it holds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ...jobs.runner import JobRunner, local_map
from ...errors import CorruptIndexError


def faiss_module():
    import faiss

    return faiss


class Flat:
    """A backend is a set of class methods over FAISS index objects: build, write, read, search, split."""

    kind = "flat"
    exact = True
    ondisk = False
    trains = False  # whether ``train`` gives something the segments of one index share

    @classmethod
    def empty(cls, dimension: int, settings) -> Any:
        return faiss_module().IndexFlatIP(dimension)

    @classmethod
    def train(cls, vectors: np.ndarray, settings) -> Any:
        """What segments of one build may share (a trained quantizer); nothing here."""
        return None

    @classmethod
    def prepare(cls, settings, existing: list[tuple[Path, int]]) -> tuple[Any, Any]:
        """Settings and shared training for a new segment of an index whose segments of this kind are
        ``existing`` ``(folder, rows)``."""
        return settings, None

    @classmethod
    def build(cls, vectors: np.ndarray, settings, trained: Any = None) -> Any:
        index = cls.empty(vectors.shape[1], settings) if trained is None else trained
        add(index, vectors)
        return index

    @classmethod
    def save(cls, path: Path, vectors: np.ndarray, settings, trained: Any = None,
             map_shards: JobRunner = local_map) -> None:
        cls.write(cls.build(vectors, settings, trained), path)

    @classmethod
    def write(cls, index: Any, path: Path) -> None:
        faiss_module().write_index(index, str(path))

    @classmethod
    def read(cls, path: Path) -> Any:
        return read_or_corrupt(path)

    @classmethod
    def parameters(cls, index: Any, selector: Any, k: int) -> Any:
        return faiss_module().SearchParameters(sel=selector)

    @classmethod
    def fetch(cls, k: int) -> int:
        """Candidates to take for ``k`` results re-scored exactly: ``k`` where scores are exact already."""
        return k

    @classmethod
    def partitions(cls, index: Any, n: int, rows_per_job: int) -> list[np.ndarray]:
        """Rows per parallel job (row ranges here)."""
        return [np.arange(start, min(n, start + rows_per_job)) for start in range(0, n, rows_per_job)]


def add(index: Any, vectors: np.ndarray, chunk: int = 65_536) -> None:
    for start in range(0, len(vectors), chunk):
        index.add(np.ascontiguousarray(vectors[start:start + chunk], dtype=np.float32))


def read_or_corrupt(path: Path, flags: int = 0) -> Any:
    try:
        return faiss_module().read_index(str(path), flags)
    except RuntimeError as exc:
        reason = str(exc).strip().splitlines()[-1] if str(exc).strip() else "unreadable"
        raise CorruptIndexError(f"{path}: FAISS file is corrupted ({reason[:120]}); rebuild with `embedsearch build`") \
            from exc
