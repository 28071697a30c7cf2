"""Topics of a cluster: UMAP + HDBSCAN fitted on one seeded sample drawn across every shard (rows of the
cluster in shard order, so each shard gives in proportion to its size), then each shard's other documents
assigned to the fitted topics by a vote of their nearest sample papers, as ``topics.sample`` assigns them,
in jobs per shard (``map_jobs``: this process, or Ray tasks that read the shard folders). Saved in the
cluster's ``topics/`` folder, keyed by the cut and the settings: an unchanged cut is read back, and a later
one carries the last fit over as one index does (``topics.extend``: each new paper takes the topic of its
nearest placed papers over every shard; labels stay) until too much has changed, or ``refit`` asks for a
new fit."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from pathlib import Path

import numpy as np

from ..dedup.partitions import open_snapshot
from ..engine.jobs import JobRunner, local_map
from ..errors import CorruptIndexError
from ..store.snapshot import Snapshot
from ..topics import TopicModel, TopicSettings
from ..topics.assemble import Corpus, assemble, enough
from ..topics.cluster import enable_numba_cache
from ..topics.extend import carry
from ..topics.model import FORMAT, latest, load, prune, save
from ..topics.sample import ROWS_PER_JOB, VOTERS, assign, fit_sample, sample_rows
from . import rows as cluster_rows

FOLDER = "topics"


def fit(root: Path, cut: int, snapshots: list[Snapshot], encode, settings: TopicSettings = TopicSettings(),
        map_jobs: JobRunner = local_map, refit: bool = False) -> TopicModel:
    """Topics over the live documents of every shard (``snapshots``, one per shard, at cut number ``cut``)."""
    sizes = [len(s) for s in snapshots]
    n = sum(sizes)
    resolved = settings.resolve(n)
    key = json.dumps([asdict(resolved), cut, sizes, FORMAT], sort_keys=True)
    folder = root / FOLDER / hashlib.sha256(key.encode()).hexdigest()[:12]
    if (folder / "model.json").exists() and not refit:
        try:
            return load(folder)
        except CorruptIndexError:
            pass
    offsets = cluster_rows.offsets(sizes)
    base = None if refit else latest(root / FOLDER, settings)
    model = None if base is None else carry(base, [i for s in snapshots for i in s.documents.ids],
                                            lambda rows: cluster_rows.vectors(snapshots, offsets, rows),
                                            lambda queries, kept: _neighbours(snapshots, offsets, queries, kept), cut)
    if model is not None:
        save(model, folder)
        prune(root / FOLDER, settings)
        return model
    enable_numba_cache()
    chosen = sample_rows(n, min(resolved.sample, n), resolved.seed)
    local = [chosen[(chosen >= offsets[s]) & (chosen < offsets[s + 1])] - offsets[s] for s in range(len(snapshots))]
    vectors = np.concatenate([np.asarray(s.embeddings[rows], dtype=np.float32) for s, rows in zip(snapshots, local)])
    fitted, sample_labels, sample_coordinates = fit_sample(vectors, resolved)
    labels = np.full(n, -1, dtype=np.int64)
    coordinates = np.zeros((n, 2), dtype=np.float32)
    labels[chosen], coordinates[chosen] = sample_labels, sample_coordinates
    sources = snapshots if map_jobs.shares_memory else [(str(s.root), s.number) for s in snapshots]
    blocks, jobs = [], []
    for s in range(len(snapshots)):
        rest = np.setdiff1d(np.arange(sizes[s]), local[s])
        for start in range(0, len(rest), ROWS_PER_JOB):
            block = rest[start:start + ROWS_PER_JOB]
            blocks.append(offsets[s] + block)
            jobs.append((fitted, sources[s], block))
    for block, (block_labels, block_coordinates) in zip(blocks, map_jobs(_assign, jobs)):
        labels[block], coordinates[block] = block_labels, block_coordinates
    enough(labels, n, resolved)
    corpus = Corpus(tuple(i for s in snapshots for i in s.documents.ids),
                    [d.embed_text for s in snapshots for d in s.documents],
                    np.concatenate([np.asarray(s.embeddings, dtype=np.float32) for s in snapshots]), encode, cut)
    model = assemble(corpus, labels, coordinates, resolved, settings,
                     {"shards": sizes, "sampled_per_shard": [len(rows) for rows in local]})
    save(model, folder)
    return model


def _assign(fitted, source, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One job: ``topics.sample.assign`` for rows of one shard, read where the job runs (``source``: the
    snapshot, or ``(path, generation)`` of one every Ray worker can open), so no vectors travel with it."""
    snapshot = open_snapshot(*source) if isinstance(source, tuple) else source
    return assign(fitted, np.asarray(snapshot.embeddings[rows], dtype=np.float32))


def _neighbours(snapshots: list[Snapshot], offsets: np.ndarray, queries: np.ndarray,
                allowed: np.ndarray) -> list[np.ndarray]:
    """Each query's ``VOTERS`` nearest allowed cluster rows: the best of every shard's, ties by row."""
    found: list[list[tuple[float, int]]] = [[] for _ in range(len(queries))]
    for t, snapshot in enumerate(snapshots):
        mine = allowed[offsets[t]:offsets[t + 1]]
        if mine.any():
            for hits, answer in zip(found, snapshot.dense(queries, VOTERS, allowed=mine)):
                hits.extend((-cosine, int(offsets[t]) + row) for row, cosine in answer)
    return [np.asarray([row for _, row in sorted(hits)[:VOTERS]], dtype=np.int64) for hits in found]
