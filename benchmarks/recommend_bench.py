"""Recommendations from seed papers, on two protocols, against the two simple baselines (the seeds' centroid;
the best seed's cosine):

1. arXiv categories (``eval/arxiv``, 2,000 abstracts, 18 archives): seeds are 5 papers of one archive (every
   archive with at least 40 papers, 10 draws each); success is the share of the top 10 (and average precision
   over the top 100) in the same archive, seeds left out. With unlikes: 3 papers of the neighbouring archive
   (the one whose centroid is nearest) as ``unlike``; their archive's share of the top 10 should fall.
   Draws with an even number tune, odd ones are reported.
2. The reviewer gold standard (``eval/reviewer_match``): a researcher's 20-paper profile is their library,
   and the papers they rated are ranked by the recommendation's score; the loss is the data set's (lower is
   better). The corpus (background) is the 463 rated papers. Tuned on d_20_1..3; d_20_4..10 reported apart.

Every score comes from the library's ``recommend.model.direction`` (what ``Index.recommend`` searches along).

Run: .venv/bin/python -m benchmarks.recommend_bench   (embeds 3,300 texts the first time, about 5 minutes)
"""

from __future__ import annotations

import json

import numpy as np

from benchmarks.common import SHARED, save, table
from benchmarks.reviewer_match_bench import loss, ratings
from embedsearch.embedding.embed import Embedder
from embedsearch.embedding.settings import EmbedSettings
from embedsearch.recommend.model import direction, unit
from embedsearch.recommend.settings import RecommendSettings

ARXIV = SHARED / "eval" / "arxiv" / "arxiv_kaggle_0704_2000.jsonl"
REVIEWERS = SHARED / "eval" / "reviewer_match"
METHODS = {"centroid (baseline)": None, "best seed (baseline)": None,
           **{f"svm C={c} alone": RecommendSettings(c=c, centroid_weight=0) for c in (0.01, 0.1, 1.0)},
           **{f"svm C={c} + {w} x centroid": RecommendSettings(c=c, centroid_weight=w)
              for c in (0.01, 0.1) for w in (0.5, 1.0, 2.0)},
           **{f"svm C=0.1 + centroid, unlike weight {u}": RecommendSettings(unlike_weight=u) for u in (0, 0.25, 1.0)},
           "default: svm C=0.1 + centroid, unlike weight 0.5": RecommendSettings(),
           "svm C=0.1 + centroid, background 500": RecommendSettings(background=500),
           "centroid, unlike weight 0.5": RecommendSettings(method="centroid")}


def scores(name: str, likes: np.ndarray, unlikes: np.ndarray, corpus: np.ndarray, rng) -> np.ndarray:
    """Every corpus paper's score under ``name`` (higher ranks first)."""
    if name == "best seed (baseline)":
        return (corpus @ likes.T).max(1)
    if name == "centroid (baseline)":  # unlikes ignored
        return corpus @ unit(likes.mean(0))
    settings = METHODS[name]
    sample = corpus[rng.choice(len(corpus), min(settings.background, len(corpus)), replace=False)]
    return corpus @ direction(likes, unlikes, sample, settings)


def arxiv(embedder: Embedder) -> dict:
    rows = [json.loads(line) for line in ARXIV.open()]
    x = embedder.embed([f"{r['title']} {r['abstract']}" for r in rows])
    labels = np.array([r["label"] for r in rows])
    big = [c for c in sorted(set(labels)) if (labels == c).sum() >= 40]
    centres = {c: unit(x[labels == c].mean(0)) for c in big}
    neighbour = {c: max((d for d in big if d != c), key=lambda d: float(centres[c] @ centres[d])) for c in big}
    found: dict = {}
    for name in METHODS:
        for c in big:
            for draw in range(10):
                rng = np.random.default_rng([draw, big.index(c)])
                members, others = np.flatnonzero(labels == c), np.flatnonzero(labels == neighbour[c])
                likes, unlikes = rng.choice(members, 5, replace=False), rng.choice(others, 3, replace=False)
                for with_unlikes in (False, True):
                    chosen = np.r_[likes, unlikes] if with_unlikes else likes
                    s = scores(name, x[likes], x[unlikes] if with_unlikes else x[:0], x, rng)
                    s[chosen] = -np.inf
                    order = np.argsort(-s)[:100]
                    hits = labels[order] == c
                    ap = float((np.cumsum(hits) / np.arange(1, 101))[hits].sum() / max(1, min(100, len(members) - 5)))
                    key = (name, with_unlikes, "tune" if draw % 2 == 0 else "test")
                    found.setdefault(key, []).append((hits[:10].mean(), ap, (labels[order[:10]] == neighbour[c]).mean()))
    return {k: tuple(float(v) for v in np.mean(vals, 0)) for k, vals in found.items()}


def reviewers(embedder: Embedder) -> dict:
    rated = ratings()
    found: dict = {}
    for d in range(1, 11):
        folder = REVIEWERS / f"d_20_{d}"
        subs = json.loads((folder / "submissions.json").read_text())
        ids = list(subs)
        corpus = embedder.embed([f"{subs[i]['content'].get('title', '')} {subs[i]['content'].get('abstract', '')}"
                                 for i in ids])
        names, profiles = [], []
        for file in sorted((folder / "archives").glob("*.jsonl")):
            papers = [json.loads(line)["content"] for line in file.open() if line.strip()]
            names.append(file.stem)
            profiles.append(embedder.embed([f"{p.get('title', '')} {p.get('abstract', '')}" for p in papers]))
        for name in METHODS:
            rng = np.random.default_rng(d)
            matrix = np.stack([scores(name, p, p[:0], corpus, rng) for p in profiles], axis=1)
            found[(name, d)] = loss(matrix, ids, tuple(names), rated)[0]
    return found


def main() -> None:
    embedder = Embedder(EmbedSettings())
    arx, rev = arxiv(embedder), reviewers(embedder)
    rows = []
    for name in METHODS:
        tune, test = arx[(name, False, "tune")], arx[(name, False, "test")]
        unl = arx[(name, True, "test")]
        rows.append([name, f"{tune[0]:.3f}", f"{test[0]:.3f}", f"{test[1]:.3f}", f"{unl[0]:.3f}",
                     f"{test[2]:.3f} -> {unl[2]:.3f}",
                     f"{np.mean([rev[(name, d)] for d in range(1, 4)]):.4f}",
                     f"{np.mean([rev[(name, d)] for d in range(4, 11)]):.4f}"])
    print(table(["method", "arXiv P@10 tune", "P@10 test", "AP@100 test", "P@10 test, 3 unlikes",
                 "neighbour's share of top 10 (test), without -> with unlikes", "reviewer loss d1-3 (tune)",
                 "d4-10 (test)"], rows))
    save("recommend_bench", {"arxiv": {"|".join(map(str, k)): v for k, v in arx.items()},
                             "reviewers": {f"{k[0]}|{k[1]}": v for k, v in rev.items()}})


if __name__ == "__main__":
    main()
