"""Exhaustive BM25 against MaxScore on a built index: the lexical top k both ways (equal answers, and how
long each takes, warm), then whole searches (lexical and hybrid, k=10) through ``Index.search``.

The index is any built one, e.g. merge_memory_bench's or shards_bench's streamed 1M build (SciFact-sentence
texts, so common words are in most documents); the queries are SciFact's test claims.

    python -m benchmarks.maxscore_bench --index /tmp/shards-1m/built

``--search-only`` times ``Index.search`` alone, so the library of an earlier commit can be timed with this
script: ``git worktree add /tmp/before a87b86b; PYTHONPATH=/tmp/before python -m benchmarks.maxscore_bench
--index /tmp/shards-1m/built --search-only``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from benchmarks.common import SHARED, save, stamp, table
from embedsearch.retrieval.bm25 import of as bm25_of


def p50_ms(fn, queries: list[str], rounds: int) -> tuple[float, float]:
    times = []
    for _ in range(rounds):
        for q in queries:
            start = time.perf_counter()
            fn(q)
            times.append(time.perf_counter() - start)
    ms = np.asarray(times) * 1000
    return float(np.percentile(ms, 50)), float(np.percentile(ms, 95))


def main() -> None:
    from embedsearch import Index
    from embedsearch.retrieval.beir import load_beir
    parser = argparse.ArgumentParser()
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--search-only", action="store_true", help="only Index.search (any commit's library)")
    args = parser.parse_args()
    index = Index.load(args.index)
    bm25 = bm25_of(index.snapshot)
    queries = list(load_beir(SHARED / "eval" / "scifact").queries.values())[:args.queries]
    postings = [sum(len(p.term(t)[0]) for p, _ in bm25.parts for t in bm25.tokenizer(q)) for q in queries]
    rows, result = [], {"documents": len(index), "segments": len(index.snapshot.segments),
                        "postings_per_query_p50": float(np.median(postings))}
    for q in queries:  # warm: every query's postings once
        index.search(q, 10, mode="hybrid")
    for k in () if args.search_only else (10, 100):
        from embedsearch.retrieval.maxscore import top
        from embedsearch.retrieval.fusion import top_lexical

        equal = sum(top(bm25, q, k) == top_lexical(bm25.scores(q), k) for q in queries)
        full = p50_ms(lambda q: top_lexical(bm25.scores(q), k), queries, args.rounds)
        pruned = p50_ms(lambda q: top(bm25, q, k), queries, args.rounds)
        rows.append([f"lexical top {k}", *full, *pruned, f"{equal}/{len(queries)}"])
        result[f"top{k}"] = {"exhaustive_ms": full, "maxscore_ms": pruned, "equal": equal}
    for mode in ("lexical", "hybrid", "dense"):
        search = p50_ms(lambda q: index.search(q, 10, mode=mode), queries, args.rounds)
        rows.append([f"Index.search {mode}, k=10", "", "", *search, ""])
        result[f"search_{mode}_ms"] = search
    print(stamp())
    print(f"{len(index):,} documents in {len(index.snapshot.segments)} segment(s); postings per query p50 "
          f"{np.median(postings):,.0f} (max {max(postings):,})")
    print(table(["what", "exhaustive p50 ms", "p95 ms", "MaxScore p50 ms", "p95 ms", "equal answers"], rows))
    save(f"maxscore_{len(index)}", result)


if __name__ == "__main__":
    main()
