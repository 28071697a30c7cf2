"""Topics after adds and removes, without refitting: the fitted hierarchy and its labels stay, each new
paper takes the topic most of its 15 nearest already-placed papers hold (at least a third, as sample-fit
assignment decides) and sits at their mean position on the map, and removed papers leave their topics.
Once more than ``REFIT_SHARE`` of the fitted corpus has been added or removed since the fit (counted across
every carry-over), ``fit`` refits instead; ``topics --refit``
asks for it at any time."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from ..retrieval.dense import dense
from ..store.snapshot import Snapshot
from .results import Topic, TopicModel
from .sample import VOTERS, vote

REFIT_SHARE = 0.2


Neighbours = Callable[[np.ndarray, np.ndarray], list[np.ndarray]]  # (queries, rows allowed) -> voters' rows


def extend(base: TopicModel, snapshot: Snapshot) -> TopicModel | None:
    """``base`` carried over to the documents of ``snapshot``; None when too much changed (refit)."""
    def neighbours(queries: np.ndarray, allowed: np.ndarray) -> list[np.ndarray]:
        return [np.asarray([r for r, _ in hits], dtype=np.int64)
                for hits in dense(snapshot, queries, VOTERS, allowed=allowed)]

    return carry(base, snapshot.documents.ids, lambda rows: np.asarray(snapshot.embeddings[rows], dtype=np.float32),
                 neighbours, snapshot.generation.corpus_version)


def carry(base: TopicModel, ids: Sequence[str], vectors: Callable[[np.ndarray], np.ndarray], neighbours: Neighbours,
          version: int) -> TopicModel | None:
    """``base`` carried over to the documents ``ids`` (by row; ``vectors`` reads rows' vectors, ``neighbours``
    finds each query's ``VOTERS`` nearest among allowed rows) at corpus version ``version``: ``extend`` for
    one index, and for a cluster whose rows run over every shard. None when too much changed (refit)."""
    ids = list(ids)
    known = {doc_id: row for row, doc_id in enumerate(base.ids)}
    before = np.fromiter((known.get(i, -1) for i in ids), dtype=np.int64, count=len(ids))
    new = np.flatnonzero(before < 0)
    removed = len(base.ids) - int((before >= 0).sum())
    changed = base.settings.get("changed", 0) + len(new) + removed
    if changed > REFIT_SHARE * base.settings.get("fitted_documents", len(base.ids)) or not (before >= 0).any():
        return None
    kept = before >= 0
    labels = np.full(len(ids), -1, dtype=np.int64)
    labels[kept] = np.asarray(base.assignments[0])[before[kept]]
    coordinates = np.zeros((len(ids), 2), dtype=np.float32)
    coordinates[kept] = base.coordinates[before[kept]]
    for start in range(0, len(new), 2048):
        rows = new[start:start + 2048]
        for row, voters in zip(rows, neighbours(vectors(rows), kept)):
            labels[row] = vote(np.concatenate([labels[voters], np.full(VOTERS - len(voters), -1)])[None, :])[0]
            coordinates[row] = coordinates[voters].mean(axis=0)
    settings = {**base.settings, "changed": changed, "corpus_version": version}
    return _rebuild(base, tuple(ids), labels, coordinates, settings)


def _rebuild(base: TopicModel, ids: tuple[str, ...], labels: np.ndarray, coordinates: np.ndarray,
             settings: dict) -> TopicModel:
    """The same topics (ids, labels, keywords, parents) with the new members, sizes and assignments."""
    per_level = [labels]
    for level in base.levels[:-1]:
        parent = np.asarray([t.parent for t in level], dtype=np.int64)
        previous = per_level[-1]
        per_level.append(np.where(previous >= 0, parent[np.maximum(previous, 0)], -1))
    live = set(ids)
    levels = []
    for level, assigned in zip(base.levels, per_level):
        members = {t.id: [] for t in level}
        for doc_id, topic in zip(ids, assigned.tolist()):
            if topic >= 0:
                members[topic].append(doc_id)
        levels.append(tuple(replace(t, size=len(members[t.id]), members=tuple(members[t.id]),
                                    representatives=tuple(r for r in t.representatives if r in live)
                                    or tuple(members[t.id][:3])) for t in level))
    return TopicModel(tuple(levels), tuple(tuple(int(x) for x in a) for a in per_level), ids,
                      tuple(a for a in base.attached if a in live), settings, coordinates, base.centroids)


__all__ = ["REFIT_SHARE", "Topic", "carry", "extend"]
