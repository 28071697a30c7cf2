"""Hybrid ranking: the lexical and the dense candidate lists fused into one ranking by normalised score
fusion: each signal is divided by its best score among the candidates (``max``; cosines below 0 count as 0),
then mixed with ``dense_weight``. Min-max scaling and reciprocal rank fusion are available too; the default
method and weight were chosen on SciFact's train split (benchmarks/HISTORY.md)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .settings import SearchSettings


@dataclass(frozen=True)
class Ranked:
    """A ranked row before documents are fetched."""

    row: int
    score: float
    cosine: float | None = None
    bm25: float | None = None


def top_lexical(scores: np.ndarray, k: int, allowed: np.ndarray | None = None) -> list[tuple[int, float]]:
    """Top-``k`` rows of a full score vector, ties by row (as ``maxscore.top``, which reads an index's
    postings instead); rows that match no query term are left out."""
    if allowed is not None:
        scores = np.where(allowed, scores, 0)
    k = min(k, int(np.count_nonzero(scores > 0)))
    if k == 0:
        return []
    rows = np.flatnonzero(scores >= np.partition(scores, len(scores) - k)[len(scores) - k])
    rows = rows[np.lexsort((rows, -scores[rows]))][:k]
    return [(int(r), float(scores[r])) for r in rows]


def _minmax(values: np.ndarray, reference: np.ndarray) -> np.ndarray:
    if len(reference) == 0:
        return np.zeros_like(values)
    low, high = float(reference.min()), float(reference.max())
    return np.clip((values - low) / (high - low), 0, 1) if high > low else (values >= high).astype(np.float64)


def _scaled(values: np.ndarray, ranking: list[tuple[int, float]]) -> np.ndarray:
    best = max((s for _, s in ranking), default=0.0)
    return np.maximum(values, 0) / best if best > 0 else np.zeros_like(values)


def _rrf(rows: np.ndarray, rankings: list[tuple[list[tuple[int, float]], float]], k0: int) -> np.ndarray:
    position = {r: i for i, r in enumerate(rows.tolist())}
    fused = np.zeros(len(rows))
    for ranking, weight in rankings:
        for rank, (row, _) in enumerate(ranking, start=1):
            fused[position[row]] += weight / (k0 + rank)
    return fused


def fuse(dense: list[tuple[int, float]], lexical: list[tuple[int, float]], cosine_of, bm25_of,
         k: int, settings: SearchSettings) -> list[Ranked]:
    """Merge two candidate lists into one ranking; every candidate carries both raw scores."""
    rows = np.asarray(sorted({r for r, _ in dense} | {r for r, _ in lexical}), dtype=np.int64)
    if len(rows) == 0:
        return []
    cos = cosine_of(rows)
    bm = bm25_of(rows)
    if settings.fusion == "rrf":
        fused = _rrf(rows, [(dense, settings.dense_weight), (lexical, 1 - settings.dense_weight)], settings.rrf_k)
    elif settings.fusion == "max":
        fused = settings.dense_weight * _scaled(cos, dense) + (1 - settings.dense_weight) * _scaled(bm, lexical)
    else:
        d_norm = _minmax(cos, np.asarray([s for _, s in dense]))
        l_norm = _minmax(bm, np.asarray([s for _, s in lexical]))
        fused = settings.dense_weight * d_norm + (1 - settings.dense_weight) * l_norm
    order = np.lexsort((rows, -fused))[:k]
    return [Ranked(int(rows[i]), float(fused[i]), float(cos[i]), float(bm[i])) for i in order]
