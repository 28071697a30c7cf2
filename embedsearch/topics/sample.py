"""Topics for corpora too large to cluster whole: fit UMAP + HDBSCAN on a seeded sample, then assign
every other document in parallel jobs, in this process or as Ray tasks; the fitted models travel to
the workers in memory only.

A document takes the topic most of its nearest sample papers (cosine, in embedding space) hold, if
at least a third of them do. ``hdbscan.approximate_predict`` in UMAP space left up to 38% of real
abstracts unassigned where the sample itself left at most 17%, and scored lower against labels
(benchmarks/README.md). Its 2-D map position comes from ``UMAP.transform``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..engine.jobs import JobRunner, local_map
from .consensus import fit_labels
from .settings import TopicSettings
from .umap_hdbscan import compilable, enable_numba_cache

ROWS_PER_JOB = 20_000
VOTERS = 15


@dataclass(frozen=True)
class SampleFit:
    """What assignment needs from the sample: its embeddings and topic labels, and the 2-d UMAP."""

    vectors: np.ndarray
    labels: np.ndarray
    mapper: Any


def sample_rows(n: int, size: int, seed: int) -> np.ndarray:
    """A seeded, sorted sample of ``size`` rows out of ``n``."""
    return np.sort(np.random.default_rng(seed).choice(n, size, replace=False))


@compilable()
def fit_sample(vectors: np.ndarray, settings: TopicSettings) -> tuple[SampleFit, np.ndarray, np.ndarray]:
    """Fit on the sample (the consensus of ``settings.runs`` runs over its neighbour graph); returns what
    assignment needs, the sample's labels and its 2-D coordinates."""
    import warnings

    import umap
    from umap.umap_ import nearest_neighbors

    enable_numba_cache()
    warnings.filterwarnings("ignore", message=".*n_jobs value 1 overridden.*", category=UserWarning)
    indices, distances, _ = nearest_neighbors(vectors, settings.graph_neighbours, "cosine", {}, False,
                                              np.random.RandomState(settings.seed), n_jobs=1)
    labels = fit_labels(vectors, indices, distances, settings)
    mapper = umap.UMAP(n_components=2, min_dist=0.1, n_neighbors=settings.neighbours, metric="cosine",
                       random_state=settings.seed, n_jobs=1).fit(vectors)
    return SampleFit(vectors, labels, mapper), labels, mapper.embedding_.astype(np.float32)


def vote(neighbour_labels: np.ndarray) -> np.ndarray:
    """Per row, the topic held by most of its neighbours if at least a third hold it (ties: lower id),
    else ``-1``."""
    topics = int(neighbour_labels.max()) + 1
    if topics == 0:
        return np.full(len(neighbour_labels), -1, dtype=np.int64)
    counts = np.zeros((len(neighbour_labels), topics), dtype=np.int64)
    for column in neighbour_labels.T:
        assigned = column >= 0
        np.add.at(counts, (np.flatnonzero(assigned), column[assigned]), 1)
    best = counts.argmax(axis=1)
    return np.where(counts.max(axis=1) * 3 >= neighbour_labels.shape[1], best, -1).astype(np.int64)


@compilable()
def assign(fitted: SampleFit, vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Topic labels (``-1`` = unassigned) and 2-D coordinates for documents outside the sample.
    The one batch function of both the local and the Ray path."""
    import faiss

    enable_numba_cache()
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    sample = faiss.IndexFlatIP(fitted.vectors.shape[1])
    sample.add(np.ascontiguousarray(fitted.vectors, dtype=np.float32))
    _, nearest = sample.search(vectors, min(VOTERS, len(fitted.vectors)))
    return vote(fitted.labels[nearest]), fitted.mapper.transform(vectors).astype(np.float32)


def fit_and_assign(embeddings: np.ndarray, settings: TopicSettings,
                   map_jobs: JobRunner = local_map) -> tuple[np.ndarray, np.ndarray]:
    """Labels and 2-D coordinates for every row: ``settings.sample`` rows from the fit, the rest from
    ``assign`` jobs."""
    n = len(embeddings)
    chosen = sample_rows(n, settings.sample, settings.seed)
    fitted, sample_labels, sample_coords = fit_sample(np.asarray(embeddings[chosen], dtype=np.float32), settings)
    labels = np.full(n, -1, dtype=np.int64)
    coordinates = np.zeros((n, 2), dtype=np.float32)
    labels[chosen], coordinates[chosen] = sample_labels, sample_coords
    rest = np.setdiff1d(np.arange(n), chosen)
    blocks = [rest[start:start + ROWS_PER_JOB] for start in range(0, len(rest), ROWS_PER_JOB)]
    jobs = [(fitted, np.asarray(embeddings[block], dtype=np.float32)) for block in blocks]
    for block, (block_labels, block_coords) in zip(blocks, map_jobs(assign, jobs)):
        labels[block], coordinates[block] = block_labels, block_coords
    return labels, coordinates
