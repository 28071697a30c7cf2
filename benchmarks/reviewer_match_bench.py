"""Reviewer affinity on the gold standard of Stelmakh, Wieting, Neubig and Shah (2023): 58 researchers'
self-rated expertise on papers they read, each with ten profiles of 20 of their own papers (d_20_1..10).
The loss is the README's: over every pair of papers one researcher rated differently, the rating difference
lost when the affinities order them the other way (half on a tie), over the sum of differences.

Aggregations are chosen on d_20_1..3 only; d_20_4..10 are reported apart, then the mean of all ten. Every
score goes through the library path a chair uses (``Matcher``, ``Submissions``, ``AffinityTable``).

Run: .venv/bin/python -m benchmarks.reviewer_match_bench [--precision int8] [--model static-minilm]   (about 4 minutes the first time, embedding 1,300
texts; then from the embedding cache)
"""

from __future__ import annotations

import csv
import tempfile
from pathlib import Path

import numpy as np

from benchmarks.common import SHARED, save, table
from embedsearch.embedding.precision import DEFAULT_PRECISION
from embedsearch.embedding.settings import DEFAULT_MODEL
from embedsearch.reviewers import AffinitySettings, Matcher, Submissions

DATA = SHARED / "eval" / "reviewer_match"
TUNE, TEST = range(1, 4), range(4, 11)
SETTINGS = {"max": AffinitySettings(top=1), "mean of 20": AffinitySettings(top=20, power=0.0),
            "top 3, 1 + 1/2 + 1/3 (ACL)": AffinitySettings(top=3, power=1.0),
            "top 5, harmonic": AffinitySettings(top=5, power=1.0),
            "top 10, harmonic (default)": AffinitySettings(top=10, power=1.0),
            "top 20, harmonic": AffinitySettings(top=20, power=1.0),
            "top 10, 1/i^0.8": AffinitySettings(top=10, power=0.8),
            "top 10, 1/i^1.2": AffinitySettings(top=10, power=1.2),
            "top 10, 1/i^1.5": AffinitySettings(top=10, power=1.5),
            "top 20, 1/i^1.5": AffinitySettings(top=20, power=1.5)}
PUBLISHED = [("TPMS", 0.28), ("ELMo", 0.34), ("SPECTER", 0.27), ("SPECTER + MFR", 0.24), ("ACL scorer", 0.30),
             ("SPECTER2", 0.22), ("SciNCL", 0.22), ("SPECTER2 + SciNCL", 0.21)]


def ratings() -> dict[str, list[tuple[str, float]]]:
    with (DATA / "evaluations.tsv").open() as fh:
        rows = list(csv.reader(fh, delimiter="\t"))[1:]
    return {r[0]: [(p, float(s)) for p, s in zip(r[1:11], r[11:21]) if p and s] for r in rows}


def loss(matrix: np.ndarray, subs: list[str], reviewers: tuple[str, ...], rated) -> tuple[float, float, float]:
    """(loss, easy accuracy, hard accuracy) of one profile set's affinities."""
    row = {s: i for i, s in enumerate(subs)}
    col = {r.lstrip("~"): j for j, r in enumerate(reviewers)}
    lost = total = easy = easy_n = hard = hard_n = 0.0
    for rid, pairs in rated.items():
        pairs = [(p, v) for p, v in pairs if p in row]
        for i, first in enumerate(pairs):
            for second in pairs[i + 1:]:
                if first[1] == second[1]:
                    continue
                (a, ra), (b, rb) = (first, second) if first[1] > second[1] else (second, first)
                sa, sb = matrix[row[a], col[rid]], matrix[row[b], col[rid]]
                right = 1.0 if sa > sb else 0.5 if sa == sb else 0.0
                lost += (ra - rb) * (1 - right)
                total += ra - rb
                if ra >= 4 and rb <= 2:
                    easy, easy_n = easy + right, easy_n + 1
                if ra >= 4 and rb >= 4:
                    hard, hard_n = hard + right, hard_n + 1
    return lost / total, easy / easy_n, hard / hard_n


def ceiling(rated) -> tuple[float, tuple]:
    """The best mix, chosen on all ten sets (so on its own test: a bound, not a result), of the signals at hand:
    the default aggregate, plus TF-IDF cosines, title-only embeddings and the cosine to the profile's centroid,
    each aggregated alike and standardised per reviewer."""
    import itertools

    from sklearn.feature_extraction.text import TfidfVectorizer

    from embedsearch.embedding.embed import Embedder
    from embedsearch.embedding.settings import EmbedSettings
    from embedsearch.reviewers.affinity import scores

    embedder, found = Embedder(EmbedSettings()), {}
    with tempfile.TemporaryDirectory() as scratch:
        for d in range(1, 11):
            folder = DATA / f"d_20_{d}"
            subs = Submissions.read([folder / "submissions.json"], DEFAULT_MODEL)
            matcher = Matcher.open(folder / "archives", subs.model, Path(scratch) / f"p{d}")
            pubs, owner, n = matcher.reviewers.publications, matcher.reviewers.owner, len(matcher.reviewers)
            tfidf = TfidfVectorizer(stop_words="english", sublinear_tf=True).fit(
                [p.embed_text for p in pubs] + [s.embed_text for s in subs.documents])
            dense = matcher.table(subs).matrix
            signals = [np.asarray((tfidf.transform([s.embed_text for s in subs.documents]) @
                                   tfidf.transform([p.embed_text for p in pubs]).T).todense())]
            signals.append(embedder.embed([s.title or s.text for s in subs.documents]) @
                           embedder.embed([p.title or p.text for p in pubs]).T)
            centroids = np.stack([np.asarray(matcher.publications.embeddings)[owner == r].mean(0) for r in range(n)])
            found[d] = (subs.ids, matcher.reviewers.ids, dense,
                        [_aggregate(x, owner, n, scores) for x in signals], subs.vectors @ centroids.T)
    best = None
    for weights in itertools.product((0, 0.1, 0.2, 0.4), (0, 0.1, 0.2, 0.4), (0, 0.15, 0.3)):
        value = np.mean([loss(_z(dense) + weights[0] * _z(a) + weights[1] * _z(b) + weights[2] * _z(c), subs, revs,
                              rated)[0] for subs, revs, dense, (a, b), c in found.values()])
        best = (value, weights) if best is None or value < best[0] else best
    return best


def _aggregate(cosines: np.ndarray, owner: np.ndarray, n: int, scores) -> np.ndarray:
    """Another signal's submission x publication matrix, aggregated per reviewer as the default does."""
    eye = np.eye(cosines.shape[1], dtype=np.float32)
    return scores(np.asarray(cosines, dtype=np.float32), eye, owner, n)


def _z(matrix: np.ndarray) -> np.ndarray:
    return (matrix - matrix.mean(0)) / (matrix.std(0) + 1e-9)


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--precision", default=DEFAULT_PRECISION)
    parser.add_argument("--model", default=DEFAULT_MODEL, help="e.g. static-minilm, the static draft model")
    parser.add_argument("--no-ceiling", action="store_true")
    args = parser.parse_args()
    rated = ratings()
    results: dict[str, dict[int, tuple[float, float, float]]] = {name: {} for name in SETTINGS}
    with tempfile.TemporaryDirectory() as scratch:
        for d in range(1, 11):
            folder = DATA / f"d_20_{d}"
            subs = Submissions.read([folder / "submissions.json"], args.model, precision=args.precision)
            for name, settings in SETTINGS.items():
                matcher = Matcher.open(folder / "archives", subs.model, Path(scratch) / f"p{d}", settings,
                                       precision=args.precision)
                table_ = matcher.table(subs)
                results[name][d] = loss(table_.matrix, subs.ids, matcher.reviewers.ids, rated)
    rows = []
    for name, by_split in results.items():
        parts = [np.mean([by_split[d] for d in split], axis=0) for split in (TUNE, TEST, range(1, 11))]
        rows.append([name, *(f"{p[0]:.3f}" for p in parts), f"{parts[2][1]:.3f}", f"{parts[2][2]:.3f}"])
    rows += [[f"{n} (published)", "", "", f"{v:.2f}", "", ""] for n, v in PUBLISHED]
    print(table(["affinity", "loss d_20_1..3 (tune)", "loss d_20_4..10", "loss all ten", "easy (all)", "hard (all)"],
                rows))
    print(f"precision {args.precision}")
    if args.no_ceiling:
        return
    bound, mix = ceiling(rated)
    print(f"ceiling: the best mix on all ten of dense + TF-IDF + title + centroid (weights {mix}): loss {bound:.3f}")
    save("reviewer_match", {"ceiling": {"loss": bound, "weights": mix},
                            **{name: {str(d): v for d, v in by.items()} for name, by in results.items()}})


if __name__ == "__main__":
    main()
