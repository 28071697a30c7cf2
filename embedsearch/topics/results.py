"""What a topic fit returns: topics at every level, per-document assignments and map coordinates."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from ..errors import InputError


@dataclass(frozen=True)
class Topic:
    """One topic at one level: a phrase that names it, its keyword label and keywords, representative and
    member ids, enclosing topic."""

    id: int
    label: str
    size: int
    keywords: tuple[str, ...]
    representatives: tuple[str, ...]
    members: tuple[str, ...]
    parent: int | None
    name: str = ""

    @property
    def title(self) -> str:
        """The name a person reads: the phrase, or the keyword label where no phrase was chosen."""
        return self.name or self.label

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.title, "label": self.label, "size": self.size, "keywords": list(self.keywords),
                "representatives": list(self.representatives), "members": list(self.members),
                "parent": self.parent}


@dataclass(frozen=True)
class TopicModel:
    """Topics at every level (0 = finest), per-document assignments and 2-D map coordinates."""

    levels: tuple[tuple[Topic, ...], ...]
    assignments: tuple[tuple[int, ...], ...]
    ids: tuple[str, ...]
    attached: tuple[str, ...]
    settings: dict[str, Any]
    coordinates: np.ndarray = field(repr=False, compare=False)
    centroids: tuple[np.ndarray, ...] = field(repr=False, compare=False)

    def topics(self, level: int = 0) -> tuple[Topic, ...]:
        if not 0 <= level < len(self.levels):
            raise InputError(f"--level {level} does not exist; this model has levels 0 to {len(self.levels) - 1}")
        return self.levels[level]

    def unassigned(self, level: int = 0) -> tuple[str, ...]:
        return tuple(i for i, t in zip(self.ids, self.assignments[level]) if t < 0)

    @cached_property
    def row_of(self) -> dict[str, int]:
        return {doc_id: row for row, doc_id in enumerate(self.ids)}

    def topic_of(self, doc_id: str, level: int = 0) -> Topic | None:
        row = self.row_of[doc_id]
        topic = self.assignments[level][row]
        return self.levels[level][topic] if topic >= 0 else None

    def nearest(self, vector: np.ndarray, level: int = 0, k: int = 5) -> list[tuple[Topic, float]]:
        """Topics whose centroids are closest to a (query) vector, with cosine similarities."""
        scores = self.centroids[level] @ vector
        return [(self.levels[level][i], float(scores[i])) for i in np.argsort(-scores)[:k]]

    def to_json(self, level: int = 0) -> dict[str, Any]:
        return {"topics": [t.to_json() for t in self.topics(level)], "unassigned": list(self.unassigned(level))}
