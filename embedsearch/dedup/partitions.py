"""Candidate search split into jobs that can run anywhere: by inverted list for an IVF index (each job
takes the members of a run of lists and probes their neighbouring lists, so a pair split across two
lists is still found), by row range otherwise. Each job re-scores its neighbours exactly and returns
an edge list; union-find runs over the edges afterwards (``groups``)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from .. import vectors as vec

Edges = tuple[np.ndarray, np.ndarray, np.ndarray]


def partitions(faiss_index, n: int, rows_per_job: int) -> list[np.ndarray]:
    """Rows per job: whole inverted lists packed to about ``rows_per_job`` rows, or row ranges."""
    if vec.kind_of(faiss_index) != "ivfpq":
        return [np.arange(start, min(n, start + rows_per_job)) for start in range(0, n, rows_per_job)]
    import faiss

    lists = faiss.extract_index_ivf(faiss_index).invlists
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


@lru_cache(maxsize=2)
def _open(path: str, generation: int):
    from ..store import read_manifest
    from ..store.snapshot import Snapshot

    return Snapshot(Path(path), read_manifest(Path(path)), generation)


def neighbour_edges(source, rows: np.ndarray, k: int, floor: float) -> Edges:
    """For each row, its ``k`` nearest other rows with exact cosine >= ``floor``, as ``(row, other, cosine)``
    arrays. ``source`` is a snapshot or, on a cluster, ``(path, generation)`` of one every worker can read."""
    index = _open(*source) if isinstance(source, tuple) else source
    left, right, scores = [], [], []
    for start in range(0, len(rows), 2048):
        block = rows[start:start + 2048]
        queries = np.asarray(index.embeddings[block], dtype=np.float32)
        for row, hits in zip(block.tolist(), index.dense(queries, k, exclude=block.tolist())):
            for other, cosine in hits:
                if cosine >= floor:
                    left.append(row)
                    right.append(other)
                    scores.append(cosine)
    return np.asarray(left, np.int64), np.asarray(right, np.int64), np.asarray(scores, np.float32)
