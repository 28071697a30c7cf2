"""Near-duplicates across shards. Each document's nearest neighbours are the best ``neighbours`` of the
union of every shard's answer (its own shard's, the others'), which is what one index over all the
documents gives; identical texts are matched across shards by hash; every pair is judged with the same
evidence as inside one index. So a duplicate whose two records the id hash sent to different shards is
found as if they shared one. Records are ordered by shard, then row: a group keeps its first record in
that order."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace

import numpy as np

from ..dedup import DedupSettings, DuplicateReport
from ..dedup.candidates import score
from ..dedup.evidence import text_hash
from ..store import vectors as vec
from ..store.snapshot import Snapshot

_BLOCK = 2048


def find(snapshots: Sequence[Snapshot], settings: DedupSettings) -> DuplicateReport:
    """Duplicate groups over every shard's live documents (``snapshots``, one per shard, at one cut)."""
    offsets = np.concatenate([[0], np.cumsum([len(s) for s in snapshots])]).astype(np.int64)
    pairs: dict[tuple[int, int], float] = {}
    for row, other, cosine in _neighbours(snapshots, offsets, settings):
        pairs[(min(row, other), max(row, other))] = cosine
    first: dict[bytes, int] = {}
    for s, snapshot in enumerate(snapshots):
        for local, doc in enumerate(snapshot.documents):
            row = int(offsets[s]) + local
            seen = first.setdefault(text_hash(doc.text), row)
            if seen != row and (seen, row) not in pairs:
                pairs[(seen, row)] = float(np.dot(_vector(snapshots, offsets, seen), _vector(snapshots, offsets, row)))
    by_shards: dict[tuple[int, int], dict[tuple[int, int], float]] = {}
    for (a, b), cosine in pairs.items():
        sa, sb = _shard(offsets, a), _shard(offsets, b)
        by_shards.setdefault((sa, sb), {})[(a - int(offsets[sa]), b - int(offsets[sb]))] = cosine
    candidates = []
    for (sa, sb), local in sorted(by_shards.items()):
        docs_a = snapshots[sa].documents
        docs_b = docs_a if sa == sb else snapshots[sb].documents
        for c in score(local, docs_a, docs_b, settings, (0, 0)):
            candidates.append(replace(c, a_order=(0, int(offsets[sa]) + c.a_order[1]),
                                      b_order=(0, int(offsets[sb]) + c.b_order[1])))
    ids = [i for snapshot in snapshots for i in snapshot.documents.ids]
    return DuplicateReport.from_candidates(candidates, settings, ids)


def _neighbours(snapshots: Sequence[Snapshot], offsets: np.ndarray,
                settings: DedupSettings) -> Iterator[tuple[int, int, float]]:
    """``(row, other, cosine)`` in cluster rows: each row's ``neighbours`` nearest over all shards, at ``floor``
    or above."""
    k = settings.neighbours
    for s, snapshot in enumerate(snapshots):
        for start in range(0, len(snapshot), _BLOCK):
            block = list(range(start, min(start + _BLOCK, len(snapshot))))
            queries = np.asarray(snapshot.embeddings[block], dtype=np.float32)
            found: list[list[vec.Shortlisted]] = [[] for _ in block]
            for t, other in enumerate(snapshots):
                answers = other.shortlist(queries, k, exclude=block if t == s else None)
                for hits, answer in zip(found, answers):
                    hits.extend((int(offsets[t]) + row, approximate, cosine) for row, approximate, cosine in answer)
            for local, hits in zip(block, found):
                for other, _, cosine in vec.best(hits, k):
                    if cosine >= settings.floor:
                        yield int(offsets[s]) + local, other, cosine


def _shard(offsets: np.ndarray, row: int) -> int:
    return int(np.searchsorted(offsets, row, side="right")) - 1


def _vector(snapshots: Sequence[Snapshot], offsets: np.ndarray, row: int) -> np.ndarray:
    s = _shard(offsets, row)
    return np.asarray(snapshots[s].embeddings[[row - int(offsets[s])]], dtype=np.float32)[0]
