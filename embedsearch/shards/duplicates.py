"""Near-duplicates across shards. Each document's nearest neighbours are the best ``neighbours`` of the
union of every shard's answer (its own shard's, the others'), which is what one index over all the
documents gives; identical texts are matched across shards by hash; every pair is judged with the same
evidence as inside one index. So a duplicate whose two records the id hash sent to different shards is
found as if they shared one. Records are ordered by shard, then row: a group keeps its first record in
that order. ``of`` limits the search to some documents' groups, and ``against`` judges new abstracts
against every shard, as one index's ``duplicates(of=)`` and ``check_duplicates`` do."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from ..dedup import DedupSettings, DuplicateReport
from ..dedup.candidates import score
from ..dedup.evidence import text_hash
from ..dedup.partitions import Edges, open_snapshot
from ..dedup.pending import Pending, exact_row
from ..engine.jobs import JobRunner, local_map
from ..errors import UnknownIdError
from ..store import vectors as vec
from ..store.snapshot import Snapshot
from . import rows as cluster_rows
from .cut import owner

_BLOCK = 2048


def find(snapshots: Sequence[Snapshot], settings: DedupSettings, of: Sequence[str] | None = None,
         map_jobs: JobRunner = local_map) -> DuplicateReport:
    """Duplicate groups over every shard's live documents (``snapshots``, one per shard, at one cut); with
    ``of``, only those involving these ids (their neighbours are searched, not every document's). The
    neighbour search runs as jobs of ``rows_per_job`` rows of one shard through ``map_jobs`` (in this
    process, or Ray tasks that read the shard folders)."""
    offsets = cluster_rows.offsets([len(s) for s in snapshots])
    ids = [i for snapshot in snapshots for i in snapshot.documents.ids]
    rows = None if of is None else _rows_of(snapshots, offsets, of)
    sources = snapshots if map_jobs.shares_memory else [(str(s.root), s.number) for s in snapshots]
    jobs = []
    for s, snapshot in enumerate(snapshots):
        mine = np.arange(len(snapshot)) if rows is None else \
            np.sort(rows[(rows >= offsets[s]) & (rows < offsets[s + 1])] - offsets[s])
        jobs += [(sources, s, mine[start:start + settings.rows_per_job], settings.neighbours, settings.floor)
                 for start in range(0, len(mine), settings.rows_per_job)]
    pairs: dict[tuple[int, int], float] = {}
    for left, right, scores in map_jobs(edges, jobs):
        for row, other, cosine in zip(left.tolist(), right.tolist(), scores.tolist()):
            pairs[(min(row, other), max(row, other))] = cosine
    first: dict[bytes, int] = {}
    for s, snapshot in enumerate(snapshots if rows is None else ()):  # with ``of``, copies are nearest neighbours
        for local, doc in enumerate(snapshot.documents):
            row = int(offsets[s]) + local
            seen = first.setdefault(text_hash(doc.text), row)
            if seen != row and (seen, row) not in pairs:
                pairs[(seen, row)] = float(np.dot(*cluster_rows.vectors(snapshots, offsets, [seen, row])))
    by_shards: dict[tuple[int, int], dict[tuple[int, int], float]] = {}
    for (a, b), cosine in pairs.items():
        sa, sb = cluster_rows.shard_of(offsets, a), cluster_rows.shard_of(offsets, b)
        by_shards.setdefault((sa, sb), {})[(a - int(offsets[sa]), b - int(offsets[sb]))] = cosine
    candidates = []
    for (sa, sb), local in sorted(by_shards.items()):
        docs_a = snapshots[sa].documents
        docs_b = docs_a if sa == sb else snapshots[sb].documents
        for c in score(local, docs_a, docs_b, settings, (0, 0)):
            candidates.append(replace(c, a_order=(0, int(offsets[sa]) + c.a_order[1]),
                                      b_order=(0, int(offsets[sb]) + c.b_order[1])))
    return DuplicateReport.from_candidates(candidates, settings, ids if of is None else list(of))


def against(new: Pending, snapshots: Sequence[Snapshot], settings: DedupSettings) -> DuplicateReport:
    """Each new abstract's matches over every shard, as ``Index.check_duplicates`` judges them in one index:
    its nearest neighbours are the best of every shard's shortlist, an exact copy is found by hash in each."""
    offsets = cluster_rows.offsets([len(s) for s in snapshots])
    pairs: dict[tuple[int, int], float] = {}
    for start in range(0, len(new.documents), _BLOCK):
        queries = new.embeddings[start:start + _BLOCK]
        for q, hits in enumerate(_best(snapshots, offsets, queries, settings.neighbours)):
            pairs.update(((start + q, other), cosine) for other, _, cosine in hits if cosine >= settings.floor)
    for q, doc in enumerate(new.documents):
        for t, snapshot in enumerate(snapshots):
            match = exact_row(snapshot, doc.text)
            if match is not None:
                row = int(offsets[t]) + match
                pairs.setdefault((q, row), float(np.dot(new.embeddings[q], cluster_rows.vectors(snapshots, offsets, [row])[0])))
                break
    by_shard: dict[int, dict[tuple[int, int], float]] = {}
    for (q, row), cosine in pairs.items():
        s = cluster_rows.shard_of(offsets, row)
        by_shard.setdefault(s, {})[(q, row - int(offsets[s]))] = cosine
    candidates = [replace(c, b_order=(0, int(offsets[s]) + c.b_order[1]))
                  for s, local in sorted(by_shard.items())
                  for c in score(local, new.documents, snapshots[s].documents, settings, (1, 0))]
    return DuplicateReport.from_candidates(candidates, settings, new.documents.ids)


def _rows_of(snapshots: Sequence[Snapshot], offsets: np.ndarray, ids: Sequence[str]) -> np.ndarray:
    """The cluster rows of ``ids`` (each looked up in the shard its id routes to)."""
    rows = []
    for doc_id in ids:
        s = owner(doc_id, len(snapshots))
        local = snapshots[s].documents.row_of.get(doc_id)
        if local is None:
            raise UnknownIdError(f"no document with id {doc_id[:200]!r} in the cluster")
        rows.append(int(offsets[s]) + local)
    return np.asarray(rows, dtype=np.int64)


def _best(snapshots: Sequence[Snapshot], offsets: np.ndarray, queries: np.ndarray, k: int,
          own: tuple[int, list[int]] | None = None) -> list[list[vec.Shortlisted]]:
    """Per query, the ``k`` best over every shard's shortlist, keyed by cluster row (``vectors.best``: one
    index's answer); ``own`` is the queries' shard and rows there, each left out of its own answer."""
    found: list[list[vec.Shortlisted]] = [[] for _ in range(len(queries))]
    for t, other in enumerate(snapshots):
        exclude = own[1] if own is not None and own[0] == t else None
        for hits, answer in zip(found, other.shortlist(queries, k, exclude=exclude)):
            hits.extend(hit._replace(key=int(offsets[t]) + hit.key) for hit in answer)
    return [vec.best(hits, k) for hits in found]


def edges(sources: Sequence, s: int, rows: np.ndarray, k: int, floor: float) -> Edges:
    """One job: each of ``rows`` (of shard ``s``) with its ``k`` nearest over every shard at ``floor`` or above,
    as ``(row, other, cosine)`` arrays in cluster rows. ``sources`` are the shards' snapshots or, on a Ray
    cluster, ``(path, generation)`` of each, which every worker can read."""
    snapshots = [open_snapshot(*x) if isinstance(x, tuple) else x for x in sources]
    offsets = cluster_rows.offsets([len(x) for x in snapshots])
    left, right, scores = [], [], []
    for start in range(0, len(rows), _BLOCK):
        block = rows[start:start + _BLOCK].tolist()
        queries = np.asarray(snapshots[s].embeddings[block], dtype=np.float32)
        for local, hits in zip(block, _best(snapshots, offsets, queries, k, (s, block))):
            for other, _, cosine in hits:
                if cosine >= floor:
                    left.append(int(offsets[s]) + local)
                    right.append(other)
                    scores.append(cosine)
    return np.asarray(left, np.int64), np.asarray(right, np.int64), np.asarray(scores, np.float32)
