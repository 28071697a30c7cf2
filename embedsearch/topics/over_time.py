"""Topics over time (and per class), as BERTopic's ``topics_over_time`` and what its users asked of it:
for each topic and period, the count, the share of the period's papers (unassigned included, so a period's
shares add up to 1), the topic's own share over time (a topic's shares add up to 1), and the period's
keywords, by the labeller that names the topics (class-based TF-IDF over the topic's papers of that period).
Read from a saved topic fit: nothing is fitted again."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..corpus import Document
from ..errors import InputError
from .labels import keywords
from .periods import periods
from .results import TopicModel

UNASSIGNED = -1


@dataclass(frozen=True)
class TopicPeriod:
    """One topic in one period (``topic`` -1: the papers no topic holds)."""

    topic: int
    label: str
    period: str
    count: int
    share: float
    topic_share: float
    keywords: tuple[str, ...]
    name: str = ""  # the topic's name, as the map, the CLI and the API give it (``label``: its keywords)

    def to_json(self) -> dict[str, Any]:
        return {"topic": self.topic, "name": self.name, "label": self.label, "period": self.period, "count": self.count,
                "share": round(self.share, 6), "topic_share": round(self.topic_share, 6),
                "keywords": list(self.keywords)}


@dataclass(frozen=True)
class TopicsOverTime:
    """Every (topic, period) row, periods in order, and the papers left out (no usable value)."""

    field: str
    by_class: bool
    periods: tuple[str, ...]
    rows: tuple[TopicPeriod, ...]
    left_out: int
    first_left_out: str | None

    def of(self, topic: int) -> list[TopicPeriod]:
        return [r for r in self.rows if r.topic == topic]

    def to_json(self) -> dict[str, Any]:
        return {"field": self.field, "by": "class" if self.by_class else "time", "periods": list(self.periods),
                "left_out": self.left_out, "first_left_out": self.first_left_out,
                "rows": [r.to_json() for r in self.rows]}


def over_time(model: TopicModel, documents: Sequence[Document], field: str, bins: int = 10, level: int = 0,
              by_class: bool = False, strict: bool = False, top_keywords: int = 5) -> TopicsOverTime:
    """``model``'s topics at ``level`` across the periods of ``field`` (``documents`` in the model's row
    order). A field no document has is an error listing the fields there are; values that are not a year or
    a date are left out (an error with ``strict``)."""
    if not any(field in d.metadata for d in documents):
        known = sorted({k for d in documents for k in d.metadata})
        raise InputError(f"no field {field!r} in this index; its fields: {', '.join(known) or 'none'}")
    values = [d.metadata.get(field) for d in documents]
    found = periods(values, bins, by_class)
    first = None if found.first_left_out is None else documents[found.first_left_out].id
    if found.left_out and strict:
        value = values[found.first_left_out]
        shown = "missing" if value is None or value == "" else repr(value)
        raise InputError(f"field {field!r}: {found.left_out:,} papers have no {'value' if by_class else 'year or date'}"
                         f" there (first: {first!r}, {shown}); leave out --strict to skip them")
    topics = {t.id: t for t in model.topics(level)}
    assigned = np.asarray(model.assignments[level])
    rows, classes = [], {}
    pairs = [(row, p) for row, ps in enumerate(found.of_row) for p in ps]
    period_total = {p: 0 for p in found.names}
    for _, p in pairs:
        period_total[p] += 1
    counts: dict[tuple[int, str], int] = {}
    for row, p in pairs:
        key = (int(assigned[row]), p)
        counts[key] = counts.get(key, 0) + 1
        classes.setdefault(key, len(classes))
    words = _keywords(documents, pairs, assigned, classes, top_keywords)
    for topic in [*sorted(topics), UNASSIGNED]:
        total = sum(counts.get((topic, p), 0) for p in found.names)
        label = topics[topic].label if topic in topics else "unassigned"
        name = topics[topic].title if topic in topics else "unassigned"
        for p in found.names:
            count = counts.get((topic, p), 0)
            rows.append(TopicPeriod(topic, label, p, count, count / period_total[p] if period_total[p] else 0.0,
                                    count / total if total else 0.0, tuple(words.get((topic, p), ())), name))
    return TopicsOverTime(field, by_class, found.names, tuple(rows), found.left_out, first)


def _keywords(documents: Sequence[Document], pairs: list[tuple[int, str]], assigned: np.ndarray,
              classes: dict[tuple[int, str], int], top: int) -> dict[tuple[int, str], list[str]]:
    """Each assigned (topic, period)'s keywords, counted against every paper placed in a period."""
    if not pairs:
        return {}
    texts = [documents[row].embed_text for row, _ in pairs]
    labels = np.asarray([classes[(int(assigned[row]), p)] for row, p in pairs])
    wanted = {c: key for key, c in classes.items() if key[0] != UNASSIGNED}
    found = keywords(texts, labels, sorted(wanted), top=top)
    return {wanted[c]: words for c, words in found.items()}
