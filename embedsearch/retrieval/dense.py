"""The dense side of a search: each segment's FAISS shortlist (its own kind's search, filtered rows only),
re-scored exactly from the stored vectors, and the cut of shortlists gathered from segments or shards to
one index's top ``k``. The vector kind comes from the segment, which records it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from ..store.snapshot import Snapshot
from ..store.vectors import BACKENDS, IVFPQ


def search(faiss_index, kind: str, queries: np.ndarray, k: int,
           allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Top-``k`` scores and rows per query of a ``kind`` index, optionally only among rows where
    ``allowed`` is true; missing slots have row -1."""
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    if allowed is None:
        return faiss_index.search(queries, max(1, min(k, faiss_index.ntotal)))
    import faiss

    ids = np.flatnonzero(allowed).astype(np.int64)
    if len(ids) == 0:
        return np.zeros((len(queries), 0), np.float32), np.zeros((len(queries), 0), np.int64)
    params = BACKENDS[kind].parameters(faiss_index, faiss.IDSelectorBatch(ids), k)
    return faiss_index.search(queries, max(1, min(k, len(ids))), params=params)


class Shortlisted(NamedTuple):
    """A row a dense search re-scores: its ``key`` (a row, or whatever the caller keys rows by), the
    backend's ``approximate`` score (None where that score is exact) and its exact ``cosine``."""

    key: Any
    approximate: float | None
    cosine: float


def exact(embeddings: np.ndarray, queries: np.ndarray, k: int,
          allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``search`` of a flat index, in numpy over the stored vectors: the same top ``k`` by inner product,
    without importing faiss or reading its copy of the vectors (a tenth of a search command)."""
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    rows = None if allowed is None else np.flatnonzero(allowed)
    matrix = embeddings if rows is None else embeddings[rows]
    if len(matrix) == 0:
        return np.zeros((len(queries), 0), np.float32), np.zeros((len(queries), 0), np.int64)
    scores = queries @ np.asarray(matrix, dtype=np.float32).T
    k = max(1, min(k, len(matrix)))
    top = np.argpartition(-scores, k - 1, axis=1)[:, :k]
    chosen = np.take_along_axis(scores, top, axis=1)
    order = np.lexsort((top, -chosen), axis=1)
    top, chosen = np.take_along_axis(top, order, axis=1), np.take_along_axis(chosen, order, axis=1)
    return chosen, (top if rows is None else rows[top]).astype(np.int64)


EXACT_SCORES = 1 << 22  # scores one numpy product may hold (16 MB); past it, faiss's blocked search


def shortlist(faiss_index, kind: str, embeddings: np.ndarray, queries: np.ndarray, k: int,
              exclude: Sequence[int | None] | None = None, allowed: np.ndarray | None = None,
              scan: Callable[[], np.ndarray] | None = None) -> list[list[Shortlisted]]:
    """Per query, what a search for ``k`` re-scores: ``(row, approximate, cosine)`` for the ``fetch(k)`` best
    by the backend's own score (``approximate`` None and only ``k`` where that score is exact), each with its
    cosine from ``embeddings``; ``exclude`` drops one row per query before the cut. ``faiss_index`` may be a
    function that opens it: a flat index searched by a few queries is never opened, ``scan()`` (else
    ``embeddings``) is searched in numpy instead."""
    backend = BACKENDS[kind]
    keep = backend.fetch(k)
    fetch = backend.fetch(k + (1 if exclude is not None else 0))
    if kind == "flat" and len(queries) * len(embeddings) <= EXACT_SCORES:
        approx, rows = exact(embeddings if scan is None else scan(), queries, fetch, allowed)
    else:
        approx, rows = search(faiss_index() if callable(faiss_index) else faiss_index, kind, queries, fetch, allowed)
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


def dense_rows(faiss_index, kind: str, embeddings: np.ndarray, queries: np.ndarray, k: int,
               exclude: Sequence[int | None] | None = None,
               allowed: np.ndarray | None = None) -> list[list[tuple[int, float]]]:
    """Top-``k`` ``(row, cosine)`` per query of one vector index; candidates re-scored exactly from ``embeddings``."""
    return [[(r, c) for r, _, c in best(found, k)]
            for found in shortlist(faiss_index, kind, embeddings, queries, k, exclude, allowed)]


def shortlists(snapshot: Snapshot, queries: np.ndarray, k: int, exclude: Sequence[int | None] | None = None,
               allowed: np.ndarray | None = None) -> list[list[Shortlisted]]:
    """Every segment's shortlist per query, keyed by live row: ``best`` of it is ``dense``, and of
    shortlists from several shards, one index's answer over all of them."""
    merged: list[list[Shortlisted]] = [[] for _ in range(len(queries))]
    for s, segment in enumerate(snapshot.segments):
        start, stop = int(snapshot.offsets[s]), int(snapshot.offsets[s + 1])
        if stop == start:
            continue
        mask = snapshot.live[s] if allowed is None else snapshot.physical(s, allowed[start:stop])
        if mask is not None and not mask.any():
            continue
        local_exclude = None
        if exclude is not None:
            local_exclude = [None if x is None or not start <= x < stop else
                             int(next(snapshot.locate(np.asarray([x])))[2][0]) for x in exclude]
        found = shortlist(lambda: segment.vectors, segment.index_type, segment.scattered, queries, k, local_exclude,
                          mask, scan=lambda: segment.scanned)
        for q, hits in enumerate(found):
            if hits:
                live = snapshot.to_live(s, np.asarray([r for r, _, _ in hits])).tolist()
                merged[q].extend(Shortlisted(row, a, c) for row, (_, a, c) in zip(live, hits))
    return merged


def dense(snapshot: Snapshot, queries: np.ndarray, k: int, exclude: Sequence[int | None] | None = None,
          allowed: np.ndarray | None = None) -> list[list[tuple[int, float]]]:
    """Top-``k`` ``(row, cosine)`` per query over every segment, re-scored exactly, deleted rows never
    returned; ``exclude`` drops one row per query, ``allowed`` keeps only rows where it is true."""
    return [[(r, c) for r, _, c in best(found, k)] for found in shortlists(snapshot, queries, k, exclude, allowed)]
