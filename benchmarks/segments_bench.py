"""Segments against the whole-folder rewrite they replace: add, remove, query after many adds, compaction,
and a streamed build's memory, side by side in one run.

Texts are built from SciFact sentences (real words for BM25); vectors are clustered synthetic 384-d vectors,
so latencies are real but rankings are not meaningful. "before" is the previous storage (format 1, commit
a3cf315) run from a git worktree on the same data; its add embeds, so it is given the vectors too (its
embedding step is replaced by a lookup), which measures the rewrite alone.

    python benchmarks/segments_bench.py --sizes 100000 1000000 --before-sizes 100000
    python benchmarks/segments_bench.py --stream 10000000          # streamed build: time, peak RSS, bytes/doc
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, SHARED, clustered_vectors, peak_rss_mb, save, table  # noqa: E402

BEFORE_REV = "a3cf315"
QUERIES = ["gene expression in tumour cells", "vaccination reduces mortality in children",
           "insulin resistance and obesity", "antibiotic resistance mechanisms in bacteria",
           "smoking increases the risk of lung cancer"]

RUN = r"""
import json, statistics, sys, time
sys.path.insert(0, sys.argv[1] + "/benchmarks")
import numpy as np
from segments_bench import corpus, model_entry
from embedsearch import Index
n, work, mode = int(sys.argv[2]), sys.argv[3], sys.argv[4]
docs, vectors = corpus(n)
start = time.perf_counter()
index = Index.from_embeddings(docs, vectors, work + "/idx", model_entry())
out = {"build_s": time.perf_counter() - start}
extra, extra_vectors = corpus(2_000, offset=n)
if mode == "before":  # format 1 re-embeds on add: hand it the vectors, so only the rewrite is timed
    import embedsearch.index as module
    given = {}
    module.embed_documents = lambda embedder, documents, *a, **k: given["vectors"]
def add(batch, vecs):
    if mode == "before":
        given["vectors"] = vecs
        index.add(batch)
    else:
        index.add_embedded(batch, vecs)
def timed(fn, *args):
    t = time.perf_counter(); fn(*args); return time.perf_counter() - t
out["add_1_s"] = timed(add, extra[:1], extra_vectors[:1])
out["add_1000_s"] = timed(add, extra[1:1001], extra_vectors[1:1001])
out["remove_10_s"] = timed(index.remove, [d.id for d in docs[100:110]])
def p50():
    samples = []
    for q in json.loads(sys.argv[5]) * 6:
        t = time.perf_counter(); index.search(q, 10); samples.append(time.perf_counter() - t)
    return statistics.median(samples) * 1000
if mode == "after":
    index.compact()
    out["hybrid_p50_compacted_ms"] = p50()
    for i in range(100):
        index.add_embedded(extra[1001 + i:1002 + i], extra_vectors[1001 + i:1002 + i])
    out["segments_after_100_adds"] = len(index.snapshot.segments)
    out["hybrid_p50_after_100_adds_ms"] = p50()
    index.compact()
    out["hybrid_p50_after_compact_ms"] = p50()
    one = work + "/one.jsonl"
    open(one, "w").write(json.dumps({"id": "new-one", "abstract": extra[1500].text}) + "\n")
    import subprocess
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "embedsearch", "add", one, "--index", work + "/idx"], check=True,
                   capture_output=True)
    out["cli_add_one_s"] = time.perf_counter() - t
hwm = [line for line in open("/proc/self/status") if line.startswith("VmHWM:")][0]
out["peak_rss_mb"] = int(hwm.split()[1]) / 1024
print(json.dumps(out))
"""


def _pool() -> list[str]:
    from planted import sentences

    from embedsearch.evaluate import load_beir

    return [s for d in load_beir(SHARED / "eval" / "scifact").documents for s in sentences(d.text) if len(s) > 40]


def corpus(n: int, offset: int = 0, pool: list[str] | None = None):
    """``n`` documents of six SciFact sentences each and clustered vectors, the same for every run."""
    from embedsearch import Document

    pool = pool or _pool()
    rng = random.Random(offset)
    docs = [Document(f"s{offset + i}", " ".join(rng.sample(pool, 6)), metadata={"year": 2000 + i % 26})
            for i in range(n)]
    return docs, clustered_vectors(n, seed=11 + offset)


def model_entry() -> dict:
    from embedsearch import Index

    return Index.bundled().manifest["model"]


def run(mode: str, n: int) -> dict:
    """One size in a fresh process: ``after`` with this checkout, ``before`` with the format 1 commit."""
    with tempfile.TemporaryDirectory(prefix=f"segments-{mode}-") as work:
        env = os.environ.copy()
        code_root = str(ROOT)
        if mode == "before":
            code_root = str(Path(work) / "before")
            subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", code_root, BEFORE_REV], check=True,
                           capture_output=True)
            env["PYTHONPATH"] = code_root
        try:
            done = subprocess.run([sys.executable, "-c", RUN, str(ROOT), str(n), work, mode, json.dumps(QUERIES)],
                                  capture_output=True, text=True, env=env, cwd=code_root)
        finally:
            if mode == "before":
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", code_root],
                               capture_output=True)
        if done.returncode != 0:
            raise SystemExit(done.stderr[-3000:])
        return json.loads(done.stdout.strip().splitlines()[-1])


def stream(n: int, batch: int = 250_000) -> dict:
    """A streamed build of ``n`` documents from precomputed vectors: batches made one at a time."""
    from embedsearch import Index
    from embedsearch.store.settings import StoreSettings

    pool = _pool()
    work = Path(tempfile.mkdtemp(prefix="segments-stream-"))
    try:
        batches = (corpus(min(batch, n - start), offset=start, pool=pool) for start in range(0, n, batch))
        start = time.perf_counter()
        index = Index.from_batches(batches, work / "idx", model_entry(), n, storage=StoreSettings(segment_rows=batch))
        took = time.perf_counter() - start
        size = sum(f.stat().st_size for f in (work / "idx").rglob("*") if f.is_file())
        t = time.perf_counter()
        index.search(QUERIES[0], 10)
        first = time.perf_counter() - t
        return {"documents": n, "build_s": took, "peak_rss_mb": peak_rss_mb(), "bytes_per_doc": size / n,
                "segments": len(index.snapshot.segments), "first_query_s": first}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="*", default=[100_000, 1_000_000])
    parser.add_argument("--before-sizes", type=int, nargs="*", default=[100_000])
    parser.add_argument("--stream", type=int, default=0, help="only the streamed build, at this many documents")
    args = parser.parse_args()
    if args.stream:
        result = stream(args.stream)
        print(json.dumps(result))
        save(f"segments_stream_{args.stream}", result)
        return
    rows, raw = [], {}
    for n in args.sizes:
        for mode in (["before"] if n in args.before_sizes else []) + ["after"]:
            result = run(mode, n)
            raw[f"{mode}-{n}"] = result
            print(mode, n, json.dumps(result), flush=True)
            rows.append([f"{n:,}", mode, result["add_1_s"], result["add_1000_s"], result["remove_10_s"],
                         result.get("cli_add_one_s", "-"), result.get("hybrid_p50_compacted_ms", "-"),
                         result.get("hybrid_p50_after_100_adds_ms", "-"), result.get("hybrid_p50_after_compact_ms", "-"),
                         result.get("segments_after_100_adds", "-"), result["peak_rss_mb"]])
    print(table(["docs", "store", "add 1 (s)", "add 1,000 (s)", "remove 10 (s)", "CLI add 1 (s)",
                 "hybrid p50 compacted (ms)", "after 100 adds (ms)", "after compact (ms)", "segments", "peak RSS (MB)"],
                rows))
    save("segments", raw)


if __name__ == "__main__":
    main()
