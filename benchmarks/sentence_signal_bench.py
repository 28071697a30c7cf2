"""Does a sentence-level dense signal lift hybrid search on SciFact? Each abstract is split into
sentences (title prefixed), each sentence embedded; a candidate's signal is its best sentence cosine
with the query, mixed into the shipped hybrid score of the top 100 (weight tuned on train, reported
on test), or replacing the abstract cosine in a three-way mix.

    python benchmarks/sentence_signal_bench.py   (first run embeds ~45,000 sentences: ~10 minutes)
"""

from __future__ import annotations

import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import SHARED, save, table  # noqa: E402

from embedsearch import Document, Index  # noqa: E402
from embedsearch.embedding.embed import Embedder
from embedsearch.embedding.settings import EmbedSettings
from embedsearch.evaluate import load_beir, score_run  # noqa: E402
from embedsearch.retrieval.bm25 import SegmentedBM25
from embedsearch.retrieval.bm25 import of as bm25_of
from embedsearch.retrieval.dense import dense
from embedsearch.retrieval.search import fuse, top_lexical
from embedsearch.store import lexical as lex
from embedsearch.store.settings import LexicalSettings

SCIFACT = SHARED / "eval" / "scifact"
SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\[])")


def main() -> None:
    test, train = load_beir(SCIFACT, "test"), load_beir(SCIFACT, "train")
    index = Index.build(test.documents, Path(tempfile.mkdtemp()) / "scifact")
    sentences, owner = [], []
    for row, doc in enumerate(index.documents):
        for part in [p for p in SENTENCE.split(doc.text) if len(p.split()) >= 3] or [doc.text]:
            sentences.append(f"{doc.title}. {part}" if doc.title else part)
            owner.append(row)
    start = time.perf_counter()
    vectors = Embedder(EmbedSettings(max_windows=1)).embed(sentences, chunk=2048)
    embed_s = time.perf_counter() - start
    owner = np.asarray(owner)
    first = np.searchsorted(owner, np.arange(len(index)))
    last = np.searchsorted(owner, np.arange(len(index)), side="right")
    folder = Path(tempfile.mkdtemp())
    lex.build([Document(str(i), t) for i, t in enumerate(sentences)], folder, LexicalSettings())
    sentence_bm25 = SegmentedBM25([(lex.Postings(folder), None)], LexicalSettings())

    def signals(queries):
        qids = list(queries)
        texts = [queries[q] for q in qids]
        encoded = index.snapshot.encoder.encode(texts)
        out = []
        for qv, dense, text in zip(encoded, dense(index.snapshot, encoded, 100), texts):
            bm = bm25_of(index.snapshot).scores(text)
            fused = fuse(dense, top_lexical(bm, 100), lambda rows: np.asarray(index.embeddings[rows]) @ qv,
                         lambda rows: bm[rows], 100, index.search_settings)
            rows = np.array([r.row for r in fused])
            best = np.array([float((vectors[first[r]:last[r]] @ qv).max()) for r in rows])
            cos = np.asarray(index.embeddings[rows]) @ qv
            per_doc = np.maximum.reduceat(sentence_bm25.scores(text), first)
            out.append((rows, np.array([r.score for r in fused]), best, cos, bm[rows], per_doc[rows]))
        return qids, out

    def run(qids, sig, weights):
        result = {}
        for q, (rows, fused, best, cos, bm, lexical) in zip(qids, sig):
            s = np.maximum(best, 0) / max(best.max(), 1e-9)
            if len(weights) == 1:
                score = (1 - weights[0]) * fused + weights[0] * s
            elif weights[0] == "lexical":
                score = (1 - weights[1]) * fused + weights[1] * lexical / max(lexical.max(), 1e-9)
            else:
                d = np.maximum(cos, 0) / max(cos.max(), 1e-9)
                b = bm / max(bm.max(), 1e-9)
                score = weights[0] * d + weights[1] * b + (1 - sum(weights)) * s
            result[q] = [index.documents.ids[r] for r in rows[np.argsort(-score, kind="stable")]]
        return result

    tr, te = signals(train.queries), signals(test.queries)
    rows = []

    def record(name, weights):
        a, b = score_run(run(*tr, weights), train.qrels), score_run(run(*te, weights), test.qrels)
        rows.append([name, f"{a['ndcg@10']:.3f}", f"{b['ndcg@10']:.3f}", f"{b['recall@100']:.3f}"])

    record("shipped hybrid (no sentence signal)", (0.0,))
    mix = max(np.arange(0, 1.01, 0.05), key=lambda g: score_run(run(*tr, (g,)), train.qrels)["ndcg@10"])
    record(f"hybrid + best-sentence cosine, weight {mix:.2f} (tuned on train)", (float(mix),))
    best_lex = max(np.arange(0, 1.01, 0.05),
                   key=lambda g: score_run(run(*tr, ("lexical", g)), train.qrels)["ndcg@10"])
    record(f"hybrid + best-sentence BM25, weight {best_lex:.2f} (tuned on train)", ("lexical", float(best_lex)))
    grid = [(a, b) for a in np.arange(0, 1.01, 0.1) for b in np.arange(0, 1.01, 0.1) if a + b <= 1.0001]
    three = max(grid, key=lambda g: score_run(run(*tr, g), train.qrels)["ndcg@10"])
    record(f"abstract cosine x{three[0]:.1f} + BM25 x{three[1]:.1f} + best sentence (tuned on train)",
           tuple(map(float, three)))
    print(f"\n{len(sentences):,} sentences embedded in {embed_s:.0f} s\n")
    print(table(["configuration", "train nDCG@10", "test nDCG@10", "test Recall@100"], rows))
    save("sentence_signal_bench", {"rows": rows, "sentences": len(sentences), "embed_s": embed_s})


if __name__ == "__main__":
    main()
