"""UMAP + HDBSCAN clustering with parameters that scale with corpus size, and a topic hierarchy
built by merging topic centroids.

numba compiles umap/hdbscan code in every new process; ``enable_numba_cache`` points numba at a
folder under the user's cache and turns caching on for their jitted functions, so a second process
loads the machine code instead of compiling it again.
"""

from __future__ import annotations

import builtins
import math
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from ..embedding.cache import default_cache_dir
from ..errors import InputError
from ..retrieval.dense import dense
from ..store.snapshot import Snapshot

MIN_DOCUMENTS = 8
SHORT_EPOCHS = 15  # each consensus run's UMAP epochs from 1,000 documents: 60 runs cost under 2x one full fit
SMALL_EPOCHS = 25  # below 1,000 the runs cost under a second, and 15 epochs left 57 abstracts under-converged


@dataclass(frozen=True)
class TopicSettings:
    """Clustering parameters; ``None`` means scaled to the corpus size (see ``resolve``). Corpora larger
    than ``sample`` are fitted on a seeded sample of that many documents and the rest are assigned to
    the fitted topics (``topics.sample``). Topics are the consensus of ``runs`` UMAP layouts of
    ``member_epochs`` epochs each, two topics kept apart unless a share ``agreement`` of the runs join
    them (``topics.consensus``); ``runs=1`` is a single full-length fit, which moves with the seed and CPU."""

    min_size: int | None = None
    min_samples: int | None = None
    neighbours: int | None = None
    components: int = 5
    seed: int = 42
    assign_outliers: bool = False
    sample: int = 50_000
    runs: int = 60
    member_epochs: int | None = None
    agreement: float = 0.8

    def __post_init__(self) -> None:
        if not 1 <= self.runs <= 1000:
            raise InputError(f"runs must be between 1 and 1000 (60 is the default), got {self.runs}")
        if self.member_epochs is not None and not 5 <= self.member_epochs <= 2000:
            raise InputError(f"member_epochs must be between 5 and 2000, got {self.member_epochs}")
        if not 0.5 <= self.agreement <= 1.0:
            raise InputError(f"agreement must be between 0.5 and 1 (0.8 is the default), got {self.agreement}")
        if self.sample < MIN_DOCUMENTS * 4:
            raise InputError(f"the topic sample must hold at least {MIN_DOCUMENTS * 4} documents, got {self.sample}")
        if self.min_size is not None and self.min_size < 2:
            raise InputError(f"--min-size must be at least 2, got {self.min_size}")
        if self.min_samples is not None and self.min_samples < 1:
            raise InputError(f"min_samples must be at least 1, got {self.min_samples}")
        if self.neighbours is not None and self.neighbours < 2:
            raise InputError(f"neighbours must be at least 2 (UMAP needs a neighbour graph), got {self.neighbours}")
        if self.components < 2:
            raise InputError(f"components must be at least 2 (5 is the default), got {self.components}")

    def max_levels(self, n: int) -> int:
        """An upper bound on the levels a fit of ``n`` documents can have (a topic holds at least ``min_size``
        papers and each level above halves the topics), so a ``--level`` past it fails before any fitting."""
        resolved = self.resolve(n)
        topics, levels = max(2, min(n, resolved.sample) // resolved.min_size), 1
        while topics > 3:
            topics, levels = max(2, topics // 2), levels + 1
        return levels

    def resolve(self, n: int) -> TopicSettings:
        """Concrete values for ``n`` documents (or the sample fitted on): small corpora get small topics,
        large ones larger."""
        if n < MIN_DOCUMENTS:
            raise InputError(f"topics need at least {MIN_DOCUMENTS} documents, this index has {n}; add more abstracts")
        n = min(n, self.sample)
        min_size = self.min_size or max(3, round(math.sqrt(n) / 2))
        if 2 * min_size > n:
            raise InputError(f"--min-size {min_size} leaves room for fewer than two topics among {n} documents; "
                             f"use --min-size {max(2, n // 4)} or less")
        return TopicSettings(min_size=min_size, min_samples=self.min_samples or max(1, min_size // 4),
                             neighbours=self.neighbours or max(5, min(15, n // 4, round(math.sqrt(n)))),
                             components=min(self.components, n - 2), seed=self.seed,
                             assign_outliers=self.assign_outliers, sample=self.sample, runs=self.runs,
                             member_epochs=self.member_epochs or (SHORT_EPOCHS if n >= 1000 else SMALL_EPOCHS),
                             agreement=self.agreement)

    @property
    def graph_neighbours(self) -> int:
        """Neighbours per document in the graph the fit reads: UMAP's, and enough for HDBSCAN's core
        distance over the consensus (``min_samples`` + 1). Only for resolved settings."""
        return max(self.neighbours, self.min_samples + 1)


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
