"""Topics for corpora too large to cluster whole: fit UMAP + HDBSCAN on a seeded sample, then assign
every other document in parallel jobs (``UMAP.transform`` + ``hdbscan.approximate_predict``), in this
process or as Ray tasks; the fitted models travel to the workers in memory only."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ivf import ShardMap, local_map
from .cluster import TopicSettings, enable_numba_cache

ROWS_PER_JOB = 20_000


@dataclass(frozen=True)
class SampleFit:
    """The models fitted on the sample: 5-d and 2-d UMAP, and HDBSCAN with its prediction data."""

    reducer: Any
    mapper: Any
    clusterer: Any


def sample_rows(n: int, size: int, seed: int) -> np.ndarray:
    """A seeded, sorted sample of ``size`` rows out of ``n``."""
    return np.sort(np.random.default_rng(seed).choice(n, size, replace=False))


def fit_sample(vectors: np.ndarray, settings: TopicSettings) -> tuple[SampleFit, np.ndarray, np.ndarray]:
    """Fit on the sample; returns the models, the sample's labels and its 2-D coordinates."""
    import warnings

    import hdbscan
    import umap

    enable_numba_cache()
    warnings.filterwarnings("ignore", message=".*n_jobs value 1 overridden.*", category=UserWarning)
    common = {"n_neighbors": settings.neighbours, "metric": "cosine", "random_state": settings.seed, "n_jobs": 1}
    reducer = umap.UMAP(n_components=settings.components, min_dist=0.0, **common).fit(vectors)
    mapper = umap.UMAP(n_components=2, min_dist=0.1, **common).fit(vectors)
    clusterer = hdbscan.HDBSCAN(min_cluster_size=settings.min_size, min_samples=settings.min_samples,
                                cluster_selection_method="eom", prediction_data=True).fit(reducer.embedding_)
    return (SampleFit(reducer, mapper, clusterer), clusterer.labels_.astype(np.int64),
            mapper.embedding_.astype(np.float32))


def assign(fitted: SampleFit, vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Topic labels (``-1`` = unassigned) and 2-D coordinates for documents outside the sample.
    The one batch function of both the local and the Ray path."""
    import hdbscan

    enable_numba_cache()
    vectors = np.asarray(vectors, dtype=np.float32)
    labels, _ = hdbscan.approximate_predict(fitted.clusterer, fitted.reducer.transform(vectors))
    return labels.astype(np.int64), fitted.mapper.transform(vectors).astype(np.float32)


def fit_and_assign(embeddings: np.ndarray, settings: TopicSettings, size: int,
                   map_jobs: ShardMap = local_map) -> tuple[np.ndarray, np.ndarray]:
    """Labels and 2-D coordinates for every row: sample rows from the fit, the rest from ``assign`` jobs."""
    n = len(embeddings)
    chosen = sample_rows(n, size, settings.seed)
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
