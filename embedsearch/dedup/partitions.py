"""Candidate search split into jobs that can run anywhere (the snapshot splits its rows: whole inverted
lists of an IVF index, row ranges otherwise). Each job re-scores its neighbours exactly and returns
an edge list; union-find runs over the edges afterwards (``groups``)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from ..retrieval.dense import dense
from ..store.folders import open_folder
from ..store.manifest import read as read_manifest

Edges = tuple[np.ndarray, np.ndarray, np.ndarray]


@lru_cache(maxsize=16)
def open_snapshot(path: str, generation: int):
    """Version ``generation`` of the index or cluster at ``path``, opened once per worker."""
    return open_folder(Path(path), read_manifest).open(generation)


def neighbour_edges(source, rows: np.ndarray, k: int, floor: float) -> Edges:
    """For each row, its ``k`` nearest other rows with exact cosine >= ``floor``, as ``(row, other, cosine)``
    arrays. ``source`` is a snapshot or, on a cluster, ``(path, generation)`` of one every worker can read."""
    index = open_snapshot(*source) if isinstance(source, tuple) else source
    left, right, scores = [], [], []
    for start in range(0, len(rows), 2048):
        block = rows[start:start + 2048]
        queries = np.asarray(index.embeddings[block], dtype=np.float32)
        for row, hits in zip(block.tolist(), dense(index, queries, k, exclude=block.tolist())):
            for other, cosine in hits:
                if cosine >= floor:
                    left.append(row)
                    right.append(other)
                    scores.append(cosine)
    return np.asarray(left, np.int64), np.asarray(right, np.int64), np.asarray(scores, np.float32)
