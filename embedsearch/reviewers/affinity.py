"""Affinity of each submission to each reviewer from the reviewer's own publications: the cosines of the
submission to every publication, the best ``top`` weighted ``1 / i ** power`` and summed. Computed in blocks
of submissions, so 10,000 submissions against 40,000 publications never hold more than one block's cosines."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from ..corpus import Document
from .settings import AffinitySettings

BLOCK = 256


@dataclass(frozen=True)
class Evidence:
    """A publication of the reviewer that makes the score, and its cosine to the submission."""

    id: str
    title: str | None
    similarity: float

    def to_json(self) -> dict:
        return {"id": self.id, "title": self.title, "similarity": round(self.similarity, 4)}


@dataclass(frozen=True)
class Affinity:
    """One submission-reviewer pair: its score, whether they conflict (never assigned) and why, and the
    reviewer's publications closest to the submission."""

    submission: str
    reviewer: str
    score: float
    conflict: str | None = None
    evidence: tuple[Evidence, ...] = ()

    def to_json(self) -> dict:
        return {"submission": self.submission, "reviewer": self.reviewer, "score": round(self.score, 6),
                "conflict": self.conflict, "evidence": [e.to_json() for e in self.evidence]}


def weights(settings: AffinitySettings) -> np.ndarray:
    return 1.0 / np.arange(1, settings.top + 1, dtype=np.float64) ** settings.power


def scores(submissions: np.ndarray, publications: np.ndarray, owner: np.ndarray, reviewers: int,
           settings: AffinitySettings = AffinitySettings()) -> np.ndarray:
    """The ``(submissions, reviewers)`` affinity matrix (float32) from unit vectors of both sides."""
    columns = _columns(owner, reviewers)
    w = weights(settings)
    k = min(settings.top, columns.shape[1])
    pubs = np.ascontiguousarray(publications, dtype=np.float32).T
    out = np.zeros((len(submissions), reviewers), dtype=np.float32)
    for start in range(0, len(submissions), BLOCK):
        block = np.asarray(submissions[start:start + BLOCK], dtype=np.float32) @ pubs
        padded = np.concatenate([block, np.full((len(block), 1), -np.inf, dtype=np.float32)], axis=1)
        grouped = padded[:, columns]
        if k < grouped.shape[2]:
            grouped = np.partition(grouped, grouped.shape[2] - k, axis=2)[:, :, -k:]
        best = -np.sort(-grouped, axis=2)
        out[start:start + BLOCK] = np.where(np.isfinite(best), best, 0.0) @ w[:k]
    return out


def _columns(owner: np.ndarray, reviewers: int) -> np.ndarray:
    """Each reviewer's publication positions, padded with the index of an always ``-inf`` column."""
    counts = np.bincount(owner, minlength=reviewers)
    order = np.argsort(owner, kind="stable")
    columns = np.full((reviewers, max(int(counts.max(initial=0)), 1)), len(owner), dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(counts)])
    for r in range(reviewers):
        columns[r, :counts[r]] = order[starts[r]:starts[r + 1]]
    return columns


def evidence(submission: np.ndarray, publications: np.ndarray, documents: Sequence[Document], mine: np.ndarray,
             count: int) -> tuple[Evidence, ...]:
    """The ``count`` publications at positions ``mine`` closest to one submission's vector."""
    cosines = np.asarray(publications[mine], dtype=np.float32) @ np.asarray(submission, dtype=np.float32)
    best = np.argsort(-cosines, kind="stable")[:count]
    return tuple(Evidence(documents[mine[i]].id, documents[mine[i]].title, float(cosines[i])) for i in best)


def ranked(matrix: np.ndarray, keep: int | None) -> Iterator[tuple[int, np.ndarray]]:
    """Each submission's reviewer positions, best first: all of them, or the ``keep`` best."""
    for row in range(len(matrix)):
        values = matrix[row]
        if keep is not None and keep < len(values):
            top = np.argpartition(-values, keep - 1)[:keep]
            yield row, top[np.argsort(-values[top], kind="stable")]
        else:
            yield row, np.argsort(-values, kind="stable")
