"""Cluster rows: every shard's live documents numbered shard after shard, each in its own row order. Topics
and duplicates over a cluster key their results by them; these map them back to shards."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from ..store.snapshot import Snapshot


def offsets(sizes: Sequence[int]) -> np.ndarray:
    """Where each shard's rows start, and the total last."""
    return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)


def shard_of(starts: np.ndarray, row: int) -> int:
    return int(np.searchsorted(starts, row, side="right")) - 1


def by_shard(starts: np.ndarray, rows: np.ndarray) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """For each shard holding some of ``rows``: the shard, where they sit in ``rows``, and their rows there."""
    rows = np.asarray(rows, dtype=np.int64)
    shard = np.searchsorted(starts, rows, side="right") - 1
    for s in np.unique(shard).tolist():
        where = np.flatnonzero(shard == s)
        yield s, where, rows[where] - starts[s]


def vectors(snapshots: Sequence[Snapshot], starts: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The stored vectors of cluster ``rows``, in their order."""
    out = np.empty((len(rows), snapshots[0].embeddings.shape[1]), dtype=np.float32)
    for s, where, local in by_shard(starts, rows):
        out[where] = snapshots[s].embeddings[local]
    return out
