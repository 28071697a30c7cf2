"""Ranking: turn query vectors into ``Hit`` results with their evidence."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import vectors as vec
from .corpus import Document
from .errors import InputError

MAX_QUERY_CHARS = 20_000
RERANK_FACTOR = 4
RERANK_MIN = 100


@dataclass(frozen=True)
class Hit:
    """One related paper: its rank, id, cosine score and the document itself."""

    rank: int
    id: str
    score: float
    title: str | None
    text: str
    metadata: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def preview(self) -> str:
        """The title, or the first sentence when the source has no titles."""
        return self.title or Document(self.id, self.text).first_sentence()

    def to_json(self) -> dict[str, Any]:
        return {"rank": self.rank, "id": self.id, "score": round(self.score, 6), "title": self.title,
                "text": self.text}


def check_query(query: str) -> str:
    if not isinstance(query, str) or not query.strip():
        raise InputError("empty query; type some words to search for")
    if len(query) > MAX_QUERY_CHARS:
        raise InputError(f"query is {len(query):,} characters; the limit is {MAX_QUERY_CHARS:,} "
                         "(pass an abstract, not a whole paper)")
    return query.strip()


def dense_rows(index, embeddings: np.ndarray, queries: np.ndarray, k: int,
               exclude: Sequence[int | None] | None = None) -> list[list[tuple[int, float]]]:
    """Top-``k`` ``(row, cosine)`` per query; compressed indexes are re-scored exactly."""
    extra = 1 if exclude is not None else 0
    fetch = k + extra if vec.is_exact(index) else max((k + extra) * RERANK_FACTOR, RERANK_MIN)
    _, rows = vec.search(index, queries, fetch)
    results = []
    for q, found in enumerate(rows):
        found = found[found >= 0]
        if exclude is not None and exclude[q] is not None:
            found = found[found != exclude[q]]
        ordered = np.sort(found)
        scores = np.asarray(embeddings[ordered], dtype=np.float32) @ queries[q]
        order = np.argsort(-scores, kind="stable")[:k]
        results.append([(int(ordered[i]), float(scores[i])) for i in order])
    return results


def to_hits(ranked: list[tuple[int, float]], documents: list[Document]) -> list[Hit]:
    return [Hit(rank, doc.id, score, doc.title, doc.text, doc.metadata)
            for rank, ((_, score), doc) in enumerate(zip(ranked, documents), start=1)]
