"""Cost growth of the large-corpus path (IVF trained on a sample, filled in shards, merged on disk,
memory-mapped) for N clustered synthetic 384-d vectors, and embedding docs/s local vs Ray.

Each N is built in a fresh subprocess so peak RSS is that build's own. Queries are 1,000 held-out
vectors from the same distribution, answered one at a time through the search path users get
(``dense_rows``: IVF candidates re-scored exactly from the memory-mapped embeddings).

    python -m benchmarks.scale_bench                 # N = 10k, 30k, 100k, 300k, 1M + embedding docs/s
    python -m benchmarks.scale_bench --sizes 10000 30000 --skip-embedding
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.common import SHARED, clustered_vectors, peak_rss_mb, percentiles, save, table
from embedsearch.store.settings import VectorSettings

QUERIES = 1000
DIM = 384


def make_data(folder: Path, n: int) -> tuple[Path, Path]:
    """Corpus and held-out queries drawn from one clustered distribution, written as .npy files."""
    data = clustered_vectors(n + QUERIES, DIM, clusters=max(10, int(np.sqrt(n))), seed=n)
    corpus, queries = folder / "corpus.npy", folder / "queries.npy"
    np.save(corpus, data[:n])
    np.save(queries, data[n:])
    return corpus, queries


def build_and_query(corpus: Path, queries: Path, folder: Path) -> dict:
    """Runs in a child process: build the index in stages, then measure recall and latency."""
    import faiss

    from embedsearch.jobs.runner import local_map
    from embedsearch.retrieval.dense import dense_rows
    from embedsearch.store import vectors as vec
    from embedsearch.store.vectors import ivf

    x = np.load(corpus, mmap_mode="r")
    settings = VectorSettings(index_type="ivfpq")
    n = len(x)
    start = time.perf_counter()
    trained = ivf.train(x, settings)
    train_s = time.perf_counter() - start
    fill = {}

    def timed_local(fn, jobs):
        begin = time.perf_counter()
        out = list(local_map(fn, jobs))  # timed apart from the merge
        fill["s"] = time.perf_counter() - begin
        return out

    start = time.perf_counter()
    ivf.write_sharded(folder, "vectors.faiss", x, settings, trained, timed_local)
    write_s = time.perf_counter() - start
    build_rss = peak_rss_mb()
    index_bytes = (folder / "vectors.faiss").stat().st_size + (folder / ivf.IVFDATA).stat().st_size

    index = vec.read(folder / "vectors.faiss")
    q = np.load(queries)
    _, truth = faiss.knn(q, np.ascontiguousarray(x), 10, metric=faiss.METRIC_INNER_PRODUCT)
    faiss.omp_set_num_threads(1)
    latencies, found = [], []
    for i in range(len(q)):
        begin = time.perf_counter()
        hits = dense_rows(index, "ivfpq", x, q[i:i + 1], 10)[0]
        latencies.append(time.perf_counter() - begin)
        found.append([r for r, _ in hits])
    recall = float(np.mean([len(set(t) & set(f)) / 10 for t, f in zip(truth.tolist(), found)]))
    p50, p95 = percentiles(latencies)
    spec, lists = ivf.factory(n, DIM, settings)
    return {"n": n, "spec": spec, "train_s": train_s, "fill_s": fill["s"], "merge_s": write_s - fill["s"],
            "build_s": train_s + write_s, "peak_rss_mb": build_rss, "bytes_per_vector": index_bytes / n,
            "recall@10": recall, "p50_ms": p50, "p95_ms": p95, "nprobe": settings.nprobe}


def run_size(n: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="scale-") as tmp:
        folder = Path(tmp)
        corpus, queries = make_data(folder, n)
        out = folder / "index"
        out.mkdir()
        done = subprocess.run([sys.executable, __file__, "--child", str(corpus), str(queries), str(out)],
                              check=True, capture_output=True, text=True)
        return json.loads(done.stdout.strip().splitlines()[-1])


def slope(ns: list[int], values: list[float]) -> float:
    return float(np.polyfit(np.log(ns), np.log(np.maximum(values, 1e-6)), 1)[0])


def embedding_rates(count: int) -> list[list]:
    """Docs/s for the same abstracts embedded from scratch locally and on a local Ray cluster."""
    import ray

    from embedsearch.embedding.embed import Embedder
    from embedsearch.jobs.on_ray import ray_encoder
    from embedsearch.jobs.settings import RaySettings

    texts = []
    with (SHARED / "eval" / "scifact" / "corpus.jsonl").open() as fh:
        for line in fh:
            record = json.loads(line)
            texts.append(f"{record.get('title', '')}. {record['text']}")
            if len(texts) == count:
                break
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        local = Embedder(cache_dir=Path(tmp) / "local")
        local.model  # noqa: B018 (load outside the timing)
        start = time.perf_counter()
        local.embed(texts)
        rows.append(["local (1 process, 2 cores)", count, count / (time.perf_counter() - start)])
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
        try:
            remote = Embedder(cache_dir=Path(tmp) / "ray")
            start = time.perf_counter()
            settings = RaySettings(workers=2)
            remote.embed(texts, encode=ray_encoder(remote.settings, settings), chunk=settings.chunk)
            rows.append(["Ray Data, 2 actors x 1 core (incl. actor start)", count,
                         count / (time.perf_counter() - start)])
        finally:
            ray.shutdown()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 30_000, 100_000, 300_000, 1_000_000])
    parser.add_argument("--embed-docs", type=int, default=400)
    parser.add_argument("--skip-embedding", action="store_true")
    parser.add_argument("--child", nargs=3)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(build_and_query(*map(Path, args.child))))
        return
    results = []
    for n in args.sizes:
        results.append(run_size(n))
        print(json.dumps(results[-1]), file=sys.stderr, flush=True)
    rows = [[r["n"], r["spec"], r["train_s"], r["fill_s"], r["merge_s"], r["build_s"], r["peak_rss_mb"],
             r["bytes_per_vector"], r["recall@10"], r["p50_ms"], r["p95_ms"]] for r in results]
    print(table(["N", "index", "train s", "fill shards s", "merge on disk s", "build s", "peak RSS MB",
                 "bytes/vector", "recall@10", "p50 ms", "p95 ms"], rows))
    if len(results) > 1:
        ns = [r["n"] for r in results]
        print()
        print(table(["stage", "log-log slope of time vs N"],
                    [[stage, slope(ns, [r[key] for r in results])] for stage, key in
                     [("train", "train_s"), ("fill shards", "fill_s"), ("merge on disk", "merge_s"),
                      ("whole build", "build_s"), ("query p50", "p50_ms")]]))
    payload = {"sizes": results}
    if not args.skip_embedding:
        embed_rows = embedding_rates(args.embed_docs)
        print()
        print(table(["engine", "abstracts", "docs/s"], embed_rows))
        payload["embedding"] = embed_rows
    payload["cpus"] = os.cpu_count()
    save("scale_bench", payload)


if __name__ == "__main__":
    main()
