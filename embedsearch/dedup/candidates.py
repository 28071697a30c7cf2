"""Candidate pairs from the vector index (k nearest neighbours, never all pairs), re-scored with
exact cosines from the stored embeddings, plus exact matches found by hashing normalised text. The search is
split into jobs that can run anywhere (``neighbour_edges`` over the snapshot's partitions: whole inverted
lists of an IVF index, row ranges otherwise), each returning an edge list; union-find joins them (``groups``)."""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..jobs.runner import JobRunner, local_map
from ..retrieval.dense import dense
from ..store.folders import open_folder
from ..store.manifest import read as read_manifest
from ..store.snapshot import DocumentRows, Rows, Snapshot
from .evidence import Shingled, containment, shared_passages, shingle_hashes, text_hash
from .pending import exact_row
from .report import Candidate
from .settings import DedupSettings

_CHUNK = 2048


def _neighbours(reference: Snapshot, queries: np.ndarray, k: int, floor: float) -> Iterator[tuple[int, int, float]]:
    for start in range(0, len(queries), _CHUNK):
        block = np.asarray(queries[start:start + _CHUNK], dtype=np.float32)
        rows = list(range(start, start + len(block)))
        ranked = dense(reference, block, k)
        for q, hits in zip(rows, ranked):
            for row, cosine in hits:
                if cosine >= floor:
                    yield q, row, cosine


def within(snapshot: Snapshot, settings: DedupSettings, map_jobs: JobRunner = local_map,
           rows: np.ndarray | None = None) -> list[Candidate]:
    """Scored candidate pairs inside one index (a snapshot); the neighbour search runs as jobs through
    ``map_jobs`` (in this process, or ``distributed.RayMap`` on a cluster that can read the index folder).
    With ``rows``, only pairs that involve those rows (new documents against everything): the cost follows
    their number, and identical texts are found as the nearest neighbours they are."""
    source = snapshot if map_jobs.shares_memory else (str(snapshot.root), snapshot.number)
    size = settings.rows_per_job
    parts = snapshot.partitions(size) if rows is None else [rows[i:i + size] for i in range(0, len(rows), size)]
    jobs = [(source, part, settings.neighbours, settings.floor) for part in parts]
    pairs: dict[tuple[int, int], float] = {}
    for left, right, scores in map_jobs(neighbour_edges, jobs):
        for q, row, cosine in zip(left.tolist(), right.tolist(), scores.tolist()):
            pairs[(min(q, row), max(q, row))] = cosine
    hashes: dict[bytes, int] = {}
    for row, doc in enumerate(snapshot.documents if rows is None else ()):
        first = hashes.setdefault(text_hash(doc.text), row)
        if first != row and (first, row) not in pairs:
            pairs[(first, row)] = float(np.dot(snapshot.embeddings[first], snapshot.embeddings[row]))
    documents = snapshot.documents
    return score(pairs, documents, documents, settings, (0, 0))


def across(new: Rows, reference: Snapshot, settings: DedupSettings) -> list[Candidate]:
    """Scored pairs between a set of new abstracts (``a``) and a reference corpus (``b``)."""
    pairs: dict[tuple[int, int], float] = {}
    for q, row, cosine in _neighbours(reference, new.embeddings, settings.neighbours, settings.floor):
        pairs[(q, row)] = cosine
    for row, doc in enumerate(new.documents):
        match = exact_row(reference, doc.text)
        if match is not None and (row, match) not in pairs:
            pairs[(row, match)] = float(np.dot(new.embeddings[row], reference.embeddings[match]))
    return score(pairs, new.documents, reference.documents, settings, (1, 0))


def score(pairs: dict[tuple[int, int], float], docs_a: DocumentRows, docs_b: DocumentRows, settings: DedupSettings,
           sides: tuple[int, int]) -> list[Candidate]:
    """Evidence for every pair of rows ``(a, b)`` (``a`` of ``docs_a``, ``b`` of ``docs_b``). Shingle hashes are kept per document (compact); word lists for quoting
    passages are built only for the pairs that share text."""
    texts = {0: _texts(docs_a, sorted({a for a, _ in pairs})), 1: _texts(docs_b, sorted({b for _, b in pairs}))}
    same = docs_b is docs_a
    hashes: dict[tuple[int, int], tuple[np.ndarray, bytes]] = {}
    for side, rows in texts.items():
        for row, text in rows.items():
            key = (0 if same else side, row)
            if key not in hashes:
                hashes[key] = (shingle_hashes(text, settings.shingle), text_hash(text))
    out = []
    for (a, b), cosine in sorted(pairs.items()):
        text_a, text_b = texts[0][a], texts[1][b]
        (grams_a, norm_a), (grams_b, norm_b) = hashes[(0, a)], hashes[(0 if same else 1, b)]
        share = containment(grams_a, grams_b)
        exact = norm_a == norm_b
        passages = tuple(shared_passages(Shingled.of(text_a), Shingled.of(text_b))) if share > 0 else ()
        out.append(Candidate(docs_a.ids[a], docs_b.ids[b], float(min(cosine, 1.0)), share, exact, passages,
                             (sides[0], a), (sides[1], b)))
    return out


def _texts(docs: DocumentRows, rows: list[int]) -> dict[int, str]:
    return dict(zip(rows, (d.text for d in docs.get(rows))))


Edges = tuple[np.ndarray, np.ndarray, np.ndarray]


@lru_cache(maxsize=16)
def open_snapshot(path: str, generation: int):
    """Version ``generation`` of the index or cluster at ``path``, opened once per worker."""
    return open_folder(Path(path), read_manifest).open(generation)


def neighbour_edges(source, rows: np.ndarray, k: int, floor: float) -> Edges:
    """For each row, its ``k`` nearest other rows with exact cosine >= ``floor``, as ``(row, other, cosine)``
    arrays. ``source`` is a snapshot or, on a cluster, ``(path, generation)`` of one every worker can read."""
    index = open_snapshot(*source) if isinstance(source, tuple) else source
    left, right, scores = [], [], []
    for start in range(0, len(rows), 2048):
        block = rows[start:start + 2048]
        queries = np.asarray(index.embeddings[block], dtype=np.float32)
        for row, hits in zip(block.tolist(), dense(index, queries, k, exclude=block.tolist())):
            for other, cosine in hits:
                if cosine >= floor:
                    left.append(row)
                    right.append(other)
                    scores.append(cosine)
    return np.asarray(left, np.int64), np.asarray(right, np.int64), np.asarray(scores, np.float32)
