"""From cluster labels to a ``TopicModel``: topics numbered largest first, outliers attached when asked, a
coarser hierarchy over topic centroids, each topic named (``labels``, ``names``: a coarse topic from all its
children alike) and given its representatives. It
reads plain data (ids, texts, vectors, an encoder), so one index and a cluster of shards share it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

import numpy as np

from ..errors import InputError
from . import umap_hdbscan as cl
from .labels import CANDIDATES, by_meaning, keywords, label
from .names import names
from .results import Topic, TopicModel


@dataclass(frozen=True)
class Corpus:
    """What naming and placing topics reads: ids, texts and unit vectors by row, the encoder of the
    index (labels are chosen by meaning), and the corpus version the fit belongs to."""

    ids: tuple[str, ...]
    texts: Sequence[str]
    embeddings: np.ndarray
    encode: Callable[[list[str]], np.ndarray]
    version: int


def enough(labels: np.ndarray, n: int, resolved: cl.TopicSettings) -> None:
    """Refuse a fit that found fewer than two topics, with the setting to change."""
    if labels.max() < 1:
        raise InputError(f"found {labels.max() + 1} topic(s) among {n} documents; try a smaller --min-size "
                         f"(now {resolved.min_size})")


def assemble(corpus: Corpus, labels: np.ndarray, coordinates: np.ndarray, resolved: cl.TopicSettings,
             requested: cl.TopicSettings, evidence: dict | None = None) -> TopicModel:
    """The topic model of ``labels`` (``-1`` = unassigned) over ``corpus``; ``evidence`` joins its settings."""
    embeddings, ids = corpus.embeddings, corpus.ids
    labels = by_size(labels)
    attached: tuple[str, ...] = ()
    if resolved.assign_outliers and (labels < 0).any():
        nearest = cl.nearest_topic(embeddings, labels)
        attached = tuple(ids[r] for r in np.flatnonzero(labels < 0))
        labels = np.where(labels < 0, nearest, labels)
    per_level = [labels]
    for parent in cl.merge_levels(cl.centroids(embeddings, labels)):
        previous = per_level[-1]
        per_level.append(np.where(previous >= 0, parent[np.maximum(previous, 0)], -1))
    levels, centres = [], []
    for depth, assigned in enumerate(per_level):
        topic_ids = list(range(assigned.max() + 1))
        centre = cl.centroids(embeddings, assigned)
        words = by_meaning(keywords(corpus.texts, assigned, topic_ids, top=CANDIDATES), centre, corpus.encode)
        if depth:
            avoid = {t: frozenset(c.title for c in levels[-1] if c.parent == t) for t in topic_ids}
            named = names(corpus.texts, assigned, topic_ids, centre, corpus.encode, per_level[depth - 1], avoid)
            named |= {t: levels[-1][int(only[0])].title for t in topic_ids  # one child: the same papers, one name
                      if len(only := np.unique(per_level[depth - 1][assigned == t])) == 1}
        else:
            named = names(corpus.texts, assigned, topic_ids, centre, corpus.encode)
        above = per_level[depth + 1] if depth + 1 < len(per_level) else None
        topics = []
        for t in topic_ids:
            rows = np.flatnonzero(assigned == t)
            closest = rows[np.argsort(-(embeddings[rows] @ centre[t]), kind="stable")[:3]]
            topics.append(Topic(t, label(words[t]), len(rows), tuple(words[t][:10]), tuple(ids[r] for r in closest),
                                tuple(ids[r] for r in rows), int(above[rows[0]]) if above is not None else None,
                                named[t]))
        levels.append(tuple(topics))
        centres.append(centre)
    meta = {**asdict(resolved), "requested": asdict(requested), "fitted_documents": len(ids),
            "corpus_version": corpus.version, **(evidence or {})}
    return TopicModel(tuple(levels), tuple(tuple(int(x) for x in a) for a in per_level), ids, attached,
                      meta, coordinates, tuple(centres))


def by_size(labels: np.ndarray) -> np.ndarray:
    """Renumber topics largest first (ties by first member), so ids are stable and meaningful."""
    topics = sorted(set(labels.tolist()) - {-1}, key=lambda t: (-(labels == t).sum(), np.argmax(labels == t)))
    mapping = {old: new for new, old in enumerate(topics)}
    return np.array([mapping.get(x, -1) for x in labels.tolist()], dtype=np.int64)
