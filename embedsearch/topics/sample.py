"""Topics for corpora too large to cluster whole: fit UMAP + HDBSCAN on a seeded sample, then assign
every other document in parallel jobs, in this process or as Ray tasks; the fitted models travel to
the workers in memory only.

The sample's neighbour graph is exact (FAISS), in the form UMAP takes, so no approximate search runs (and
pynndescent's search code, which numba cannot cache, is never compiled: 90 s in each new process here). A
document outside the sample takes the topic most of its nearest sample papers (cosine, in embedding space)
hold, if at least a third of them do, and sits at their mean position on the map, as papers added after a
fit do (``extend``). ``hdbscan.approximate_predict`` in UMAP space left up to 38% of real abstracts
unassigned where the sample itself left at most 17%, and scored lower against labels (benchmarks/HISTORY.md)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..jobs.runner import JobRunner, local_map
from .consensus import fit_labels
from .settings import TopicSettings
from .umap_hdbscan import compilable, enable_numba_cache, reduce

ROWS_PER_JOB = 20_000
VOTERS = 15


@dataclass(frozen=True)
class SampleFit:
    """What assignment needs from the sample: its embeddings, topic labels and map positions."""

    vectors: np.ndarray
    labels: np.ndarray
    coordinates: np.ndarray


def sample_rows(n: int, size: int, seed: int) -> np.ndarray:
    """A seeded, sorted sample of ``size`` rows out of ``n``."""
    return np.sort(np.random.default_rng(seed).choice(n, size, replace=False))


def exact_graph(vectors: np.ndarray, neighbours: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's ``neighbours`` nearest rows by cosine (itself first), exactly, in UMAP's ``precomputed_knn``
    form: indices and cosine distances."""
    import faiss

    index = faiss.IndexFlatIP(vectors.shape[1])
    index.add(vectors)
    indices = np.zeros((len(vectors), neighbours), dtype=np.int32)
    distances = np.zeros((len(vectors), neighbours), dtype=np.float32)
    for start in range(0, len(vectors), 4096):
        scores, found = index.search(vectors[start:start + 4096], min(neighbours + 1, len(vectors)))
        for offset, (row_scores, rows) in enumerate(zip(scores, found)):
            row = start + offset
            kept = [(r, s) for r, s in zip(rows.tolist(), row_scores.tolist()) if r != row][:neighbours - 1]
            kept = [(row, 1.0)] + kept + [kept[-1] if kept else (row, 1.0)] * (neighbours - 1 - len(kept))
            indices[row] = [r for r, _ in kept]
            distances[row] = np.maximum(0, 1 - np.asarray([s for _, s in kept], dtype=np.float32))
    distances[:, 0] = 0
    return indices, distances


@compilable()
def fit_sample(vectors: np.ndarray, settings: TopicSettings) -> tuple[SampleFit, np.ndarray, np.ndarray]:
    """Fit on the sample (the consensus of ``settings.runs`` runs over its exact neighbour graph); returns
    what assignment needs, the sample's labels and its 2-D coordinates (UMAP over the same graph)."""
    enable_numba_cache()
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    indices, distances = exact_graph(vectors, settings.graph_neighbours)
    labels = fit_labels(vectors, indices, distances, settings)
    coordinates = reduce(vectors, (indices[:, :settings.neighbours], distances[:, :settings.neighbours], None),
                         settings, 2)
    return SampleFit(vectors, labels, coordinates), labels, coordinates


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


def assign(fitted: SampleFit, vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Topic labels (``-1`` = unassigned) and 2-D coordinates for documents outside the sample.
    The one batch function of both the local and the Ray path."""
    import faiss

    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    sample = faiss.IndexFlatIP(fitted.vectors.shape[1])
    sample.add(np.ascontiguousarray(fitted.vectors, dtype=np.float32))
    _, nearest = sample.search(vectors, min(VOTERS, len(fitted.vectors)))
    return vote(fitted.labels[nearest]), fitted.coordinates[nearest].mean(axis=1).astype(np.float32)


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
