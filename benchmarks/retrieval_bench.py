"""Retrieval quality on BEIR SciFact: dense (truncated vs windowed long abstracts), BM25 variants,
fusion variants tuned on the train split and reported on test, and query latency per mode.

Run: .venv/bin/python -m benchmarks.retrieval_bench   (first run embeds 5,183 abstracts twice,
about 10 minutes on 2 cores; later runs read the embedding cache)
"""

from __future__ import annotations

import itertools
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np

from benchmarks.common import SHARED, percentiles, save, table
from embedsearch import EmbedSettings, Index
from embedsearch.retrieval.beir import load_beir, rank_queries, score_run
from embedsearch.retrieval.bm25 import SegmentedBM25
from embedsearch.retrieval.dense import dense
from embedsearch.retrieval.fusion import fuse, top_lexical
from embedsearch.retrieval.settings import SearchSettings
from embedsearch.store import lexical as lex
from embedsearch.store.settings import LexicalSettings

SCIFACT = SHARED / "eval" / "scifact"
DEPTH = 100


class Runs:
    """Pre-computed signals for one index so that many fusion variants can be scored quickly."""

    def __init__(self, index: Index, queries: dict[str, str]):
        self.index = index
        self.qids = list(queries)
        self.texts = [queries[q] for q in self.qids]
        self.vectors = index.snapshot.encoder.encode(self.texts)
        self.dense = dense(index.snapshot, self.vectors, DEPTH)
        self.ids = index.documents.ids

    def run(self, ranked_rows: list[list[int]]) -> dict[str, list[str]]:
        return {q: [self.ids[r] for r in rows] for q, rows in zip(self.qids, ranked_rows)}

    def dense_run(self):
        return self.run([[r for r, _ in d] for d in self.dense])

    def bm25(self, lexical: SegmentedBM25) -> list[np.ndarray]:
        return [lexical.scores(t) for t in self.texts]

    def lexical_run(self, scores):
        return self.run([[r for r, _ in top_lexical(s, DEPTH)] for s in scores])

    def fused_run(self, scores, settings: SearchSettings, dense=None):
        emb = self.index.embeddings
        out = []
        for vector, ranked, bm in zip(self.vectors, dense or self.dense, scores):
            fused = fuse(ranked[:settings.candidates], top_lexical(bm, settings.candidates),
                         lambda rows: np.asarray(emb[rows]) @ vector, lambda rows: bm[rows], DEPTH, settings)
            out.append([r.row for r in fused])
        return self.run(out)


def lexical_variant(index: Index, settings: LexicalSettings, work: Path) -> SegmentedBM25:
    folder = Path(tempfile.mkdtemp(dir=work))
    lex.build(list(index.documents), folder, settings)
    return SegmentedBM25([(lex.Postings(folder), None)], settings)


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="retrieval-bench-"))
    test, train = load_beir(SCIFACT, "test"), load_beir(SCIFACT, "train")
    rows, log = [], {}

    def record(name, train_run, test_run, note=""):
        tr = score_run(train_run, train.qrels) if train_run is not None else None
        te = score_run(test_run, test.qrels)
        rows.append([name, f"{tr['ndcg@10']:.3f}" if tr else "", f"{te['ndcg@10']:.3f}", f"{te['recall@100']:.3f}",
                     f"{te['mrr@10']:.3f}", note])
        log[name] = {"train": tr, "test": te}
        print(rows[-1], flush=True)
        return tr["ndcg@10"] if tr else te["ndcg@10"]

    indexes = {}
    variants = {"trunc": EmbedSettings(max_windows=1), "equal": EmbedSettings(max_windows=8, tail_weight=1.0),
                "default": EmbedSettings()}
    for name, settings in variants.items():
        start = time.perf_counter()
        indexes[name] = Index.build(test.documents, work / name, embed=settings, progress=True)
        print(f"built {name} in {time.perf_counter() - start:.0f} s", flush=True)
    runs = {w: (Runs(indexes[w], train.queries), Runs(indexes[w], test.queries)) for w in indexes}
    record("dense, truncated at 256 tokens", runs["trunc"][0].dense_run(), runs["trunc"][1].dense_run(),
           "published 0.645")
    record("dense, all windows weighted by tokens", runs["equal"][0].dense_run(), runs["equal"][1].dense_run())
    record("dense, first window + tails at weight 0.25 (default)", runs["default"][0].dense_run(),
           runs["default"][1].dense_run())

    tr_runs, te_runs = runs["default"]
    best_lex, best_lex_score = None, -1.0
    for k1, b, title in itertools.product((0.9, 1.2, 1.5), (0.6, 0.75, 0.9), (1, 2)):
        settings = LexicalSettings(k1=k1, b=b, title_weight=title)
        lexical = lexical_variant(indexes["default"], settings, work)
        score = score_run(tr_runs.lexical_run(tr_runs.bm25(lexical)), train.qrels)["ndcg@10"]
        if score > best_lex_score:
            best_lex, best_lex_score = settings, score
    default_lex = lexical_variant(indexes["default"], LexicalSettings(k1=1.2, b=0.75, title_weight=1), work)
    record("BM25 k1=1.2 b=0.75, stop words + stemming", tr_runs.lexical_run(tr_runs.bm25(default_lex)),
           te_runs.lexical_run(te_runs.bm25(default_lex)), "published 0.665 / 0.679")
    tuned_lex = lexical_variant(indexes["default"], best_lex, work)
    tr_bm, te_bm = tr_runs.bm25(tuned_lex), te_runs.bm25(tuned_lex)
    record(f"BM25 tuned on train: k1={best_lex.k1} b={best_lex.b} title x{best_lex.title_weight}",
           tr_runs.lexical_run(tr_bm), te_runs.lexical_run(te_bm))

    rrf = SearchSettings(fusion="rrf", dense_weight=0.5)
    record("hybrid: reciprocal rank fusion (k=60, equal weights)", tr_runs.fused_run(tr_bm, rrf),
           te_runs.fused_run(te_bm, rrf))
    half = SearchSettings(fusion="minmax", dense_weight=0.5)
    record("hybrid: min-max score fusion, weight 0.5", tr_runs.fused_run(tr_bm, half), te_runs.fused_run(te_bm, half))
    scaled = SearchSettings(fusion="max", dense_weight=0.5)
    record("hybrid: max-scaled score fusion, weight 0.5", tr_runs.fused_run(tr_bm, scaled),
           te_runs.fused_run(te_bm, scaled))
    best, best_score = None, -1.0
    for fusion, weight, depth in itertools.product(("max", "minmax", "rrf"), np.arange(0.2, 0.81, 0.05), (50, 100)):
        settings = SearchSettings(fusion=fusion, dense_weight=round(float(weight), 2), candidates=depth)
        score = score_run(tr_runs.fused_run(tr_bm, settings), train.qrels)["ndcg@10"]
        if score > best_score:
            best, best_score = settings, score
    record(f"hybrid tuned on train: {best.fusion}, dense weight {best.dense_weight}, depth {best.candidates}",
           tr_runs.fused_run(tr_bm, best), te_runs.fused_run(te_bm, best))

    # End to end through the public API with the shipped defaults.
    end_to_end = Index.build(test.documents, work / "default")
    e2e = {}
    for mode in ("dense", "lexical", "hybrid"):
        e2e[mode] = score_run(rank_queries(end_to_end, test.queries, mode), test.qrels)
    default_mode = end_to_end.search_settings.mode
    rows.append([f"shipped default (`embedsearch eval`, mode {default_mode})", "", f"{e2e[default_mode]['ndcg@10']:.3f}",
                 f"{e2e[default_mode]['recall@100']:.3f}", f"{e2e[default_mode]['mrr@10']:.3f}", "end to end"])

    latency = []
    bundled = Index.bundled()
    for name, index, queries in (("bundled (57)", bundled, list(test.queries.values())[:100]),
                                 ("SciFact (5,183)", end_to_end, list(test.queries.values())[:100])):
        for mode in ("dense", "lexical", "hybrid"):
            index.search(queries[0], 10, mode=mode)
            samples = []
            for q in queries:
                start = time.perf_counter()
                index.search(q, 10, mode=mode)
                samples.append(time.perf_counter() - start)
            p50, p95 = percentiles(samples)
            latency.append([name, mode, f"{p50:.1f} ms", f"{p95:.1f} ms"])

    print("\n## SciFact (BEIR), nDCG@10; tuned on train (809 queries), reported on test (300)\n")
    print(table(["configuration", "train nDCG@10", "test nDCG@10", "test Recall@100", "test MRR@10", "note"], rows))
    print("\nChosen: lexical", asdict(best_lex), "search", asdict(best))
    print("\n## Query latency per mode (warm, in process, k=10, 100 queries)\n")
    print(table(["corpus", "mode", "p50", "p95"], latency))
    save("retrieval_bench", {"rows": rows, "log": log, "latency": latency, "best_lexical": asdict(best_lex),
                             "best_search": asdict(best), "end_to_end": e2e})


if __name__ == "__main__":
    main()
