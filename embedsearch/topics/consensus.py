"""Topics that do not move with the seed or the CPU: many short UMAP layouts, each clustered by HDBSCAN,
and one consensus partition over how often neighbouring documents share a cluster.

A single UMAP + HDBSCAN fit is chaotic: float noise of 1e-7 (torch's AVX-512 against AVX2 kernels) or
another seed moved the 57 bundled abstracts between 2 and 7 topics. Here the fuzzy neighbour graph and its
spectral initialisation are computed once; ``runs`` layouts of ``member_epochs`` epochs differ only in
UMAP's sampling seed, and each is clustered. For every pair of neighbours the share of runs that put both
in one cluster becomes a distance (``1 - share``, on the neighbour pairs only, so memory grows with
documents x neighbours), and HDBSCAN over that distance gives the consensus, with
``cluster_selection_epsilon = 1 - agreement``: two topics stay apart unless ``agreement`` of the runs
join them. A document the consensus leaves out joins the topic of a neighbour it shared a cluster with in
most runs. Measured over seeds 0-9 and four CPU code paths in ``benchmarks/HISTORY.md``.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse import coo_matrix, csr_matrix
from scipy.sparse.csgraph import connected_components

from .settings import TopicSettings
from .umap_hdbscan import cluster, compilable, reduce

TIE_BREAK = 1e-3  # weight of the embedding distance that orders pairs with the same share of runs
UNREACHABLE = 2.0  # distance joining disconnected parts of the graph: farther than any pair of neighbours


def member_seeds(seed: int, runs: int) -> list[int]:
    """The runs' UMAP seeds, derived from the settings' seed (the same seed gives the same runs)."""
    return [int(s) for s in np.random.SeedSequence(seed).generate_state(runs)]


def layouts(embeddings: np.ndarray, indices: np.ndarray, distances: np.ndarray, settings: TopicSettings):
    """``settings.runs`` UMAP layouts in ``settings.components`` dimensions over one fuzzy graph and one
    spectral initialisation (yielded one at a time: memory holds one layout)."""
    import warnings

    from umap.spectral import spectral_layout
    from umap.umap_ import find_ab_params, fuzzy_simplicial_set, simplicial_set_embedding

    k = settings.neighbours
    rng = np.random.RandomState(settings.seed)
    graph, _, _ = fuzzy_simplicial_set(embeddings, k, rng, "cosine", knn_indices=indices[:, :k],
                                       knn_dists=distances[:, :k])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        init = spectral_layout(embeddings, graph, settings.components, rng, metric="cosine")
    a, b = find_ab_params(1.0, 0.0)
    for member in member_seeds(settings.seed, settings.runs):
        layout, _ = simplicial_set_embedding(embeddings, graph.copy(), settings.components, 1.0, a, b, 1.0, 5,
                                             settings.member_epochs, init, np.random.RandomState(member), "cosine",
                                             {}, False, {}, False)
        yield layout


def member_labels(embeddings: np.ndarray, indices: np.ndarray, distances: np.ndarray,
                  settings: TopicSettings) -> np.ndarray:
    """One HDBSCAN partition per run, as a ``runs x documents`` array (``-1`` = unassigned in that run)."""
    return np.stack([cluster(layout, settings) for layout in layouts(embeddings, indices, distances, settings)])


def neighbour_pairs(indices: np.ndarray, distances: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each unordered pair of neighbours once (``a < b``), with its embedding distance."""
    n, k = indices.shape
    a, b = np.repeat(np.arange(n), k), indices.ravel().astype(np.int64)
    keep = a != b
    a, b, d = np.minimum(a, b)[keep], np.maximum(a, b)[keep], distances.ravel()[keep]
    _, first = np.unique(a * n + b, return_index=True)
    return a[first], b[first], d[first]


def shared_runs(labels: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """For each pair, the share of runs that put both documents in the same cluster."""
    together = np.zeros(len(a), dtype=np.float64)
    for run in labels:
        together += (run[a] == run[b]) & (run[a] >= 0)
    return together / len(labels)


def consensus(labels: np.ndarray, indices: np.ndarray, distances: np.ndarray, settings: TopicSettings) -> np.ndarray:
    """The consensus partition of the runs' ``labels`` (``-1`` = unassigned)."""
    import hdbscan

    n = labels.shape[1]
    a, b, embedded = neighbour_pairs(indices, distances)
    share = shared_runs(labels, a, b)
    evidence = share > 0  # pairs no run put together are no edge: nearness alone joins nothing
    a, b, share, embedded = a[evidence], b[evidence], share[evidence], embedded[evidence]
    weight = (1.0 - share) + TIE_BREAK * np.clip(embedded, 0, 2) + 1e-9
    graph = _connected(coo_matrix((np.r_[weight, weight], (np.r_[a, b], np.r_[b, a])), shape=(n, n)).tocsr())
    found = hdbscan.HDBSCAN(min_cluster_size=settings.min_size, min_samples=settings.min_samples,
                            metric="precomputed", cluster_selection_method="eom",
                            cluster_selection_epsilon=1.0 - settings.agreement,
                            max_dist=UNREACHABLE).fit_predict(graph).astype(np.int64)
    return _attach(found, a, b, share)


def _connected(graph: csr_matrix) -> csr_matrix:
    """The graph with its parts chained at ``UNREACHABLE`` distance (HDBSCAN needs one component)."""
    parts, part = connected_components(graph, directed=False)
    if parts == 1:
        return graph
    firsts = np.array([np.flatnonzero(part == p)[0] for p in range(parts)])
    rows, cols = np.r_[firsts[:-1], firsts[1:]], np.r_[firsts[1:], firsts[:-1]]
    return graph + csr_matrix((np.full(len(rows), UNREACHABLE), (rows, cols)), shape=graph.shape)


def _attach(found: np.ndarray, a: np.ndarray, b: np.ndarray, share: np.ndarray) -> np.ndarray:
    """A document left out joins the topic of the neighbour it shared a cluster with most often, if that
    was in more than half the runs."""
    out = found.copy()
    best = np.full(len(found), 0.5)
    for left, right in ((a, b), (b, a)):
        for i in np.flatnonzero((found[left] < 0) & (found[right] >= 0) & (share > 0.5)):
            if share[i] > best[left[i]]:
                best[left[i]], out[left[i]] = share[i], found[right[i]]
    return out


@compilable()
def fit_labels(embeddings: np.ndarray, indices: np.ndarray, distances: np.ndarray,
               settings: TopicSettings) -> np.ndarray:
    """Topic labels for resolved ``settings``: the consensus of ``settings.runs`` runs, or with one run a
    single full-length UMAP + HDBSCAN fit (the behaviour before the consensus, kept for comparison)."""
    if settings.runs == 1:
        k = settings.neighbours
        return cluster(reduce(embeddings, (indices[:, :k], distances[:, :k], None), settings,
                              settings.components), settings)
    return consensus(member_labels(embeddings, indices, distances, settings), indices, distances, settings)
