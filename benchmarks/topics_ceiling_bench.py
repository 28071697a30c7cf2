"""How far can topics on these embeddings go on the arXiv labels? A supervised reference (each paper
given the majority label of its nearest neighbours, leave-one-out, or the nearest true-label
centroid) bounds what an unsupervised partition of the same vectors can reach; a grid over UMAP
neighbours and HDBSCAN sizes, with unassigned papers attached by a vote of their neighbours, shows
where the unsupervised scores land.

    python benchmarks/topics_ceiling_bench.py   (about 5 minutes on 2 cores once the abstracts are cached)
"""

from __future__ import annotations

import itertools
import json
import sys
import tempfile
import warnings
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import SHARED, save, table  # noqa: E402

from embedsearch import Index  # noqa: E402
from embedsearch.corpus import read_sources  # noqa: E402
from embedsearch.topics.umap_hdbscan import enable_numba_cache  # noqa: E402

ARXIV = SHARED / "eval" / "arxiv" / "arxiv_kaggle_0704_2000.jsonl"


def neighbours(embeddings: np.ndarray, k: int) -> np.ndarray:
    sims = embeddings @ embeddings.T
    np.fill_diagonal(sims, -np.inf)
    return np.argsort(-sims, axis=1)[:, :k]


def vote_attach(labels: np.ndarray, near: np.ndarray) -> np.ndarray:
    """Unassigned papers take the most common topic among their neighbours (repeated so chains resolve)."""
    labels = labels.copy()
    for _ in range(5):
        for i in np.flatnonzero(labels < 0):
            votes = Counter(int(labels[j]) for j in near[i] if labels[j] >= 0)
            if votes:
                labels[i] = votes.most_common(1)[0][0]
    return labels


def main() -> None:
    from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

    warnings.filterwarnings("ignore")
    enable_numba_cache()
    import hdbscan
    import umap

    docs = read_sources([ARXIV]).documents
    truth = {json.loads(line)["id"]: json.loads(line)["label"] for line in ARXIV.open()}
    index = Index.build(docs, Path(tempfile.mkdtemp()) / "arxiv")
    labels = np.array([truth[d] for d in index.documents.ids])
    embeddings = np.asarray(index.embeddings, dtype=np.float32)
    near = neighbours(embeddings, 30)

    def row(name: str, assigned, note: str = "") -> list:
        assigned = np.asarray(assigned)
        return [name, f"{normalized_mutual_info_score(labels, assigned):.3f}",
                f"{adjusted_rand_score(labels, assigned):.3f}",
                f"{np.mean(assigned < 0) if assigned.dtype.kind == 'i' else 0:.1%}", len(set(assigned.tolist()) - {-1}), note]

    rows = []
    for k in (5, 15, 30):
        voted = [Counter(labels[near[i, :k]]).most_common(1)[0][0] for i in range(len(labels))]
        rows.append(row(f"supervised: majority label of {k} nearest neighbours (leave-one-out)", voted,
                        f"accuracy {np.mean(np.array(voted) == labels):.3f}"))
    names = sorted(set(labels))
    centres = np.stack([embeddings[labels == n].mean(axis=0) for n in names])
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    nearest = np.array(names)[np.argmax(embeddings @ centres.T, axis=1)]
    rows.append(row("supervised: nearest true-label centroid", nearest,
                    f"accuracy {np.mean(nearest == labels):.3f}"))
    print(table(["partition", "NMI", "ARI", "unassigned", "topics", "note"], rows), flush=True)

    for n_neighbours in (15, 50, 100):
        reduced = umap.UMAP(n_components=5, n_neighbors=n_neighbours, min_dist=0.0, metric="cosine",
                            random_state=42).fit_transform(embeddings)
        for min_size, min_samples in itertools.product((15, 22, 35), (1, 5)):
            found = hdbscan.HDBSCAN(min_cluster_size=min_size, min_samples=min_samples).fit_predict(reduced)
            name = f"UMAP {n_neighbours} neighbours + HDBSCAN min_size {min_size}, min_samples {min_samples}"
            rows.append(row(name, found))
            rows.append(row(name + ", unassigned attached by neighbour vote", vote_attach(found, near[:, :15])))
            print(rows[-2], rows[-1], flush=True)
    print(table(["partition", "NMI", "ARI", "unassigned", "topics", "note"], rows))
    save("topics_ceiling_bench", {"rows": rows})


if __name__ == "__main__":
    main()
