"""UMAP + HDBSCAN clustering with parameters that scale with corpus size, and a topic hierarchy
built by merging topic centroids.

numba compiles umap/hdbscan code in every new process; ``enable_numba_cache`` points numba at a
folder under the user's cache and turns caching on for their jitted functions, so a second process
loads the machine code instead of compiling it again.
"""

from __future__ import annotations

import builtins
import os
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from ..embedding.cache import default_cache_dir
from ..retrieval.dense import dense
from ..store.snapshot import Snapshot
from .settings import TopicSettings

_JITTED_MODULES = ("umap.umap_", "umap.layouts", "umap.utils", "umap.distances", "umap.sparse", "umap.spectral",
                   "pynndescent.pynndescent_", "pynndescent.utils", "pynndescent.distances", "pynndescent.rp_trees")


_PRINT = builtins.print  # kept at import, before Ray Serve's shutdown or Ray Data's progress bars replace it


@contextmanager
def compilable() -> Iterator[None]:
    """Run with the real ``print`` in place: numba compiles umap and pynndescent code that calls it and
    cannot compile a Python-level replacement, which Ray (``serve.shutdown``, Ray Data's progress bars)
    leaves in the calling process. Also a decorator."""
    current = builtins.print
    builtins.print = _PRINT
    try:
        yield
    finally:
        builtins.print = current


def enable_numba_cache() -> None:
    """Cache numba machine code on disk for umap and pynndescent (call before they compile anything)."""
    folder = os.environ.setdefault("NUMBA_CACHE_DIR", str(default_cache_dir() / "numba"))
    import importlib

    import numba
    from numba.core.registry import CPUDispatcher

    numba.config.CACHE_DIR = folder

    for name in _JITTED_MODULES:
        module = importlib.import_module(name)
        for value in vars(module).values():
            if isinstance(value, CPUDispatcher):
                try:
                    value.enable_caching()
                except Exception:  # a dispatcher numba cannot cache (closures, dynamic globals): compile as usual
                    pass


def neighbour_graph(snapshot: Snapshot, neighbours: int) -> tuple[np.ndarray, np.ndarray, None]:
    """Each document's nearest neighbours (itself first) from the index's own FAISS search, in the
    ``precomputed_knn`` form UMAP takes, so UMAP never searches again (and the 2-D map reuses it)."""
    embeddings = snapshot.embeddings
    indices = np.zeros((len(snapshot), neighbours), dtype=np.int32)
    distances = np.zeros((len(snapshot), neighbours), dtype=np.float32)
    for start in range(0, len(snapshot), 4096):
        block = np.asarray(embeddings[start:start + 4096], dtype=np.float32)
        for offset, ranked in enumerate(dense(snapshot, block, neighbours)):
            row = start + offset
            found = [row] + [r for r, _ in ranked if r != row][: neighbours - 1]
            found += [found[-1]] * (neighbours - len(found))
            indices[row] = found
            distances[row] = np.maximum(0, 1 - np.asarray(embeddings[found], dtype=np.float32) @ block[offset])
    distances[:, 0] = 0
    return indices, distances, None


@compilable()
def reduce(embeddings: np.ndarray, knn: tuple, settings: TopicSettings, components: int) -> np.ndarray:
    """UMAP on cosine distance over a precomputed neighbour graph; deterministic for a seed."""
    import warnings

    import umap

    warnings.filterwarnings("ignore", message=r"precomputed_knn\[2\]", category=UserWarning)
    reducer = umap.UMAP(n_components=components, n_neighbors=settings.neighbours, min_dist=0.0 if components > 2
                        else 0.1, metric="cosine", random_state=settings.seed, n_jobs=1, precomputed_knn=knn)
    return reducer.fit_transform(np.asarray(embeddings, dtype=np.float32)).astype(np.float32)


def cluster(reduced: np.ndarray, settings: TopicSettings) -> np.ndarray:
    """HDBSCAN labels (``-1`` = unassigned)."""
    import hdbscan

    clusterer = hdbscan.HDBSCAN(min_cluster_size=settings.min_size, min_samples=settings.min_samples,
                                cluster_selection_method="eom")
    return clusterer.fit_predict(reduced).astype(np.int64)


def centroids(embeddings: np.ndarray, labels: np.ndarray) -> np.ndarray:
    topics = sorted(set(labels.tolist()) - {-1})
    out = np.stack([np.asarray(embeddings)[labels == t].mean(axis=0) for t in topics])
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def nearest_topic(embeddings: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Every document's most similar topic centroid (used to attach unassigned papers)."""
    return np.argmax(np.asarray(embeddings) @ centroids(embeddings, labels).T, axis=1)


def merge_levels(centre: np.ndarray, smallest: int = 2) -> list[np.ndarray]:
    """Coarser levels over topic centroids: each maps the previous level's topics to about half as many."""
    from scipy.cluster.hierarchy import fcluster, linkage

    levels = []
    current = centre
    while len(current) > smallest + 1:
        target = max(smallest, len(current) // 2)
        tree = linkage(current, method="average", metric="cosine")
        parent = fcluster(tree, t=target, criterion="maxclust") - 1
        parent = _renumber(parent)
        levels.append(parent)
        current = np.stack([current[parent == p].mean(axis=0) for p in range(parent.max() + 1)])
        current /= np.linalg.norm(current, axis=1, keepdims=True)
    return levels


def _renumber(labels: np.ndarray) -> np.ndarray:
    order = {old: new for new, old in enumerate(dict.fromkeys(labels.tolist()))}
    return np.array([order[x] for x in labels.tolist()], dtype=np.int64)
