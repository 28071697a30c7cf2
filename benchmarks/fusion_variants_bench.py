"""Can a different way of combining this model's signals lift hybrid search on SciFact? Each variant's
parameters are chosen on the train split and reported on test, next to the shipped hybrid:
z-score fusion, power-transformed scores, query-adaptive weights, score propagation over
document-document similarity, a dense title field (titles embedded on their own) and lexical
pseudo-relevance feedback (RM3-style: the query's BM25 extended by the strongest terms of the
shipped ranking's top documents), and learned rankers (logistic regression, gradient-boosted trees)
over eight features of both signals, fitted on the train queries' judgements.

    python benchmarks/fusion_variants_bench.py   (about 4 minutes once the abstracts are cached)
"""

from __future__ import annotations

import itertools
import sys
import tempfile
from pathlib import Path

import numpy as np
from scipy import sparse

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import SHARED, save, table  # noqa: E402

from embedsearch import Index  # noqa: E402
from embedsearch.embedding.embed import Embedder
from embedsearch.embedding.settings import EmbedSettings
from embedsearch.evaluate import load_beir, score_run  # noqa: E402
from embedsearch.retrieval.bm25 import of as bm25_of

SCIFACT = SHARED / "eval" / "scifact"
DEPTH = 100


def scaled(x: np.ndarray) -> np.ndarray:
    """The shipped 'max' scaling: each query's scores divided by its best (negative cosines floored)."""
    return np.maximum(x, 0) / np.maximum(x.max(axis=1, keepdims=True), 1e-9)


def zscored(x: np.ndarray, pool: np.ndarray) -> np.ndarray:
    mean = np.array([row[p].mean() for row, p in zip(x, pool)])[:, None]
    std = np.array([row[p].std() for row, p in zip(x, pool)])[:, None]
    return (x - mean) / np.maximum(std, 1e-9)


class Split:
    """Every query's exact cosine and BM25 against every document, and the fusion candidate pool
    (the union of each signal's top 100, as the shipped search takes)."""

    def __init__(self, index: Index, data, titles: np.ndarray):
        self.qids = list(data.queries)
        self.qrels = data.qrels
        texts = [data.queries[q] for q in self.qids]
        vectors = index.snapshot.encoder.encode(texts)
        embeddings = np.asarray(index.embeddings, dtype=np.float32)
        self.dense = vectors @ embeddings.T
        self.title = vectors @ titles.T
        self.bm25 = np.stack([bm25_of(index.snapshot).scores(t) for t in texts]).astype(np.float32)
        self.pool = np.zeros(self.dense.shape, dtype=bool)
        for signal in (self.dense, self.bm25):
            np.put_along_axis(self.pool, np.argpartition(-signal, DEPTH, axis=1)[:, :DEPTH], True, axis=1)
        self.ids = index.documents.ids
        lexical = bm25_of(index.snapshot)
        vocab = lexical.parts[0][0].vocab  # one segment: the benchmark builds the index whole
        self.terms = [{vocab[t] for t in lexical.tokenizer(text) if t in vocab}
                      for text in texts]

    def ndcg(self, fused: np.ndarray) -> float:
        fused = np.where(self.pool, fused, -np.inf)
        top = np.argsort(-fused, axis=1, kind="stable")[:, :DEPTH]
        run = {q: [self.ids[r] for r in rows] for q, rows in zip(self.qids, top)}
        return score_run(run, self.qrels)["ndcg@10"]


def shipped(s: Split, w: float = 0.6) -> np.ndarray:
    return w * scaled(s.dense) + (1 - w) * scaled(s.bm25)


def zscore(s: Split, w: float) -> np.ndarray:
    return w * zscored(s.dense, s.pool) + (1 - w) * zscored(s.bm25, s.pool)


def power(s: Split, w: float, p: float, q: float) -> np.ndarray:
    return w * scaled(s.dense) ** p + (1 - w) * scaled(s.bm25) ** q


def adaptive(s: Split, base: float, slope: float) -> np.ndarray:
    """Dense weight moved per query by how peaked its BM25 list is (a clear lexical winner -> less dense)."""
    top = -np.sort(-s.bm25, axis=1)[:, :10]
    peak = (top[:, 0] - top[:, 9]) / np.maximum(top[:, 0], 1e-9)
    w = np.clip(base + slope * (peak - 0.5), 0, 1)[:, None]
    return w * scaled(s.dense) + (1 - w) * scaled(s.bm25)


def propagate(s: Split, embeddings: np.ndarray, share: float, top: int, temperature: float) -> np.ndarray:
    """Each candidate also scored by its similarity to the shipped ranking's top documents."""
    fused = np.where(s.pool, shipped(s), -np.inf)
    out = fused.copy()
    for i, row in enumerate(fused):
        best = np.argsort(-row)[:top]
        weights = np.exp(row[best] / temperature)
        pool = np.flatnonzero(s.pool[i])
        out[i, pool] = (1 - share) * row[pool] + share * (embeddings[pool] @ embeddings[best].T) @ (weights / weights.sum())
    return out


def feedback(s: Split, by_term, by_doc, top: int, terms: int, share: float) -> np.ndarray:
    """BM25 plus the ``terms`` heaviest BM25 terms of the shipped top ``top`` documents (query terms
    excluded), scaled to ``share`` of the query's own best BM25 score; the pool is redrawn."""
    fused = np.where(s.pool, shipped(s), -np.inf)
    bm25 = s.bm25.copy()
    for i, row in enumerate(fused):
        best = np.argsort(-row)[:top]
        weight = np.asarray(by_doc[best].multiply((row[best] / row[best].sum())[:, None]).sum(axis=0)).ravel()
        weight[list(s.terms[i])] = 0
        chosen = np.argsort(-weight)[:terms]
        chosen = chosen[weight[chosen] > 0]
        if len(chosen):
            extra = np.asarray(by_term[:, chosen] @ (weight[chosen] / weight[chosen].max())).ravel()
            bm25[i] += share * extra * bm25[i].max() / max(extra.max(), 1e-9)
    pool = np.zeros(bm25.shape, dtype=bool)
    for signal in (s.dense, bm25):
        np.put_along_axis(pool, np.argpartition(-signal, DEPTH, axis=1)[:, :DEPTH], True, axis=1)
    return np.where(pool, 0.6 * scaled(s.dense) + 0.4 * scaled(bm25), -np.inf)


def title_field(s: Split, w: float, title: float) -> np.ndarray:
    return w * scaled(s.dense) + title * scaled(s.title) + (1 - w - title) * scaled(s.bm25)


def features(s: Split) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per pool candidate: scaled, raw and rank features of dense, BM25 and title; its label and position."""
    dense_rank = np.argsort(np.argsort(-s.dense, axis=1), axis=1)
    bm25_rank = np.argsort(np.argsort(-s.bm25, axis=1), axis=1)
    query, doc = np.nonzero(s.pool)
    sd, sb = scaled(s.dense)[query, doc], scaled(s.bm25)[query, doc]
    x = np.stack([sd, sb, scaled(s.title)[query, doc], s.dense[query, doc], s.bm25[query, doc] / 10,
                  np.log1p(dense_rank[query, doc]), np.log1p(bm25_rank[query, doc]), sd * sb], axis=1)
    judged = [{d for d, grade in s.qrels.get(q, {}).items() if grade > 0} for q in s.qids]
    y = np.array([s.ids[j] in judged[i] for i, j in zip(query, doc)], dtype=int)
    return x, y, query, doc


def learned(s: Split, model, table_: tuple) -> np.ndarray:
    x, _, query, doc = table_
    out = np.full(s.dense.shape, -np.inf)
    out[query, doc] = model.predict_proba(x)[:, 1]
    return out


def bm25_matrix(index: Index) -> sparse.csc_matrix:
    """Every (document, term) BM25 weight of a one-segment index, as ``SegmentedBM25.scores`` adds them up."""
    lexical = bm25_of(index.snapshot)
    postings, settings = lexical.parts[0][0], lexical.settings
    indptr, rows, tf = (np.asarray(a) for a in (postings.indptr, postings.rows, postings.tf))
    df = np.diff(indptr)
    idf = np.log(1 + (lexical.live - df + 0.5) / (df + 0.5))
    norm = settings.k1 * ((1 - settings.b) + settings.b * np.asarray(postings.lengths)[rows] / lexical.average_length)
    data = np.repeat(idf, df) * tf / (norm + tf)
    return sparse.csc_matrix((data, rows, indptr), shape=(len(index), len(indptr) - 1))


def main() -> None:
    test, train = load_beir(SCIFACT, "test"), load_beir(SCIFACT, "train")
    index = Index.build(test.documents, Path(tempfile.mkdtemp()) / "scifact")
    titles = Embedder(EmbedSettings(max_windows=1)).embed([d.title or d.text for d in index.documents])
    embeddings = np.asarray(index.embeddings, dtype=np.float32)
    tr, te = Split(index, train, titles), Split(index, test, titles)
    by_term = bm25_matrix(index)
    by_doc = by_term.tocsr()
    weights = [round(float(w), 2) for w in np.arange(0.3, 0.81, 0.05)]
    variants = {
        "z-score fusion over the candidate pool": (zscore, [(w,) for w in weights]),
        "power-transformed max-scaled scores": (power, list(itertools.product((0.5, 0.6, 0.7), (1, 2, 3),
                                                                               (0.5, 1, 2)))),
        "query-adaptive dense weight (BM25 peakedness)": (adaptive, list(itertools.product(
            (0.5, 0.6, 0.7), (-0.4, -0.2, 0.0, 0.2, 0.4)))),
        "score propagation over document similarity": (
            lambda s, *a: propagate(s, embeddings, *a), list(itertools.product((0.1, 0.2, 0.3), (3, 5, 10),
                                                                               (0.05, 0.2, 1.0)))),
        "dense title field (titles embedded alone)": (title_field, [(w, t) for w in weights for t in
                                                                    (0.05, 0.1, 0.15, 0.2, 0.3) if w + t <= 1]),
        "lexical pseudo-relevance feedback, RM3-style": (
            lambda s, *a: feedback(s, by_term, by_doc, *a), list(itertools.product((3, 5, 10), (5, 10, 20),
                                                                                   (0.1, 0.2, 0.4)))),
    }
    rows = [["shipped hybrid: max-scaled, dense weight 0.6", "", f"{tr.ndcg(shipped(tr)):.3f}",
             f"{te.ndcg(shipped(te)):.3f}"]]
    print(rows[-1], flush=True)
    for name, (fn, grid) in variants.items():
        best = max(grid, key=lambda params: tr.ndcg(fn(tr, *params)))
        rows.append([name, ", ".join(map(str, best)), f"{tr.ndcg(fn(tr, *best)):.3f}", f"{te.ndcg(fn(te, *best)):.3f}"])
        print(rows[-1], flush=True)
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression

    tables = {"train": features(tr), "test": features(te)}
    for name, model in [("learned ranker: logistic regression, C 0.1", LogisticRegression(C=0.1, max_iter=2000)),
                        ("learned ranker: gradient-boosted trees, depth 2, 100 rounds",
                         HistGradientBoostingClassifier(max_depth=2, max_iter=100, learning_rate=0.05, random_state=0)),
                        ("learned ranker: gradient-boosted trees, depth 3, 200 rounds",
                         HistGradientBoostingClassifier(max_depth=3, max_iter=200, learning_rate=0.05, random_state=0))]:
        model.fit(tables["train"][0], tables["train"][1])
        rows.append([name, "fitted on train judgements", f"{tr.ndcg(learned(tr, model, tables['train'])):.3f}",
                     f"{te.ndcg(learned(te, model, tables['test'])):.3f}"])
        print(rows[-1], flush=True)
    print(table(["configuration", "chosen on train", "train nDCG@10", "test nDCG@10"], rows))
    save("fusion_variants_bench", {"rows": rows})


if __name__ == "__main__":
    main()
