"""A whole index (documents, IVF vectors on disk, BM25, metadata) at N abstracts: build time and peak
RSS, bytes per document on disk, and in a fresh process the time to open it and answer the first
query, then warm query latency per mode, with evidence (``find``), and of recommendations. Texts are built from SciFact sentences; vectors are clustered
synthetic 384-d vectors (embedding a million abstracts would take 15 hours here), so latencies are
real but rankings are not meaningful.

    python -m benchmarks.scale_index --n 1000000
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import clustered_vectors, peak_rss_mb, percentiles, save, sentence_pool, table

QUERIES = ["gene expression in tumour cells", "vaccination reduces mortality in children",
           "insulin resistance and obesity", "antibiotic resistance mechanisms in bacteria",
           "smoking increases the risk of lung cancer"]

SERVE = """
import json, sys, time
start = time.perf_counter()
from embedsearch import Index
index = Index.load(sys.argv[1])
first = index.search(sys.argv[2], 10)
opened = time.perf_counter() - start
out = {"first_query_s": opened}
for mode in ("dense", "lexical", "hybrid"):
    samples = []
    for q in json.loads(sys.argv[3]) * 20:
        t = time.perf_counter(); index.search(q, 10, mode=mode); samples.append(time.perf_counter() - t)
    out[mode] = sorted(samples)
for name, call in (("find", lambda q: index.find(q, 10)),
                   ("recommend", lambda q: index.recommend(like=[f"s{i}" for i in range(1, 6)], k=10)),
                   ("recommend_unlike", lambda q: index.recommend(like=["s1", "s2", "s3"], unlike=["s7", "s8"], k=10))):
    call(sys.argv[2])
    samples = []
    for q in json.loads(sys.argv[3]) * 4:
        t = time.perf_counter(); call(q); samples.append(time.perf_counter() - t)
    out[name] = sorted(samples)
hwm = [line for line in open("/proc/self/status") if line.startswith("VmHWM:")][0]
out["serve_rss_mb"] = int(hwm.split()[1]) / 1024
print(json.dumps(out))
"""


def main() -> None:
    from embedsearch import Document, Index
    from embedsearch.store.files import size_on_disk

    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=1_000_000)
    args = parser.parse_args()
    rng = random.Random(0)
    pool = sentence_pool()
    docs = [Document(f"s{i}", " ".join(rng.sample(pool, 6)), metadata={"year": 2000 + i % 26})
            for i in range(args.n)]
    vectors = clustered_vectors(args.n, seed=11)
    model = Index.bundled().manifest.model
    work = Path(tempfile.mkdtemp(prefix="scale-index-"))
    start = time.perf_counter()
    index = Index.from_embeddings(docs, vectors, work / "idx", model)
    build_s = time.perf_counter() - start
    build_rss = peak_rss_mb()
    del docs, vectors
    files = {p.name: p.stat().st_size for p in index.path.rglob("*") if p.is_file()}
    total = size_on_disk(index.path)
    serve = subprocess.run([sys.executable, "-c", SERVE, str(index.path), QUERIES[0], json.dumps(QUERIES)],
                           check=True, capture_output=True, text=True)
    served = json.loads(serve.stdout.strip().splitlines()[-1])
    rows = [["documents", f"{args.n:,}"], ["index type", index.snapshot.index_type],
            ["build (documents, IVF shards merged on disk, BM25, metadata)", f"{build_s:.0f} s"],
            ["peak RSS of the build process (incl. 1.5 KB/doc of input vectors)", f"{build_rss:,.0f} MB"],
            ["index folder, bytes per document", f"{total / args.n:,.0f}"],
            ["  of which vectors.faiss + vectors.ivfdata",
             f"{(files['vectors.faiss'] + files['vectors.ivfdata']) / args.n:,.0f}"],
            ["  of which embeddings.npy (exact re-scoring)", f"{files['embeddings.npy'] / args.n:,.0f}"],
            ["fresh process: open + first hybrid query", f"{served['first_query_s']:.2f} s"],
            ["peak RSS serving", f"{served['serve_rss_mb']:,.0f} MB"]]
    for mode in ("dense", "lexical", "hybrid"):
        p50, p95 = percentiles(served[mode])
        rows.append([f"warm {mode} query p50 / p95", f"{p50:.1f} / {p95:.1f} ms"])
    for name, what in (("find", "warm hybrid query in the grammar, with each hit's evidence (`find`)"),
                       ("recommend", "warm recommendation from 5 liked papers (SVM over 2,000 sampled)"),
                       ("recommend_unlike", "warm recommendation, 3 liked and 2 unliked")):
        p50, p95 = percentiles(served[name])
        rows.append([f"{what} p50 / p95", f"{p50:.1f} / {p95:.1f} ms"])
    print(table(["measure", "value"], rows))
    save("scale_index", {"rows": rows, "files": files})


if __name__ == "__main__":
    main()
