"""The segmented store at work: add, remove, query after many adds, compaction, a CLI add, and a streamed
build's memory. With ``--before REV``, the same steps on the same data with that commit's library (a git
worktree, in its own process), side by side in one run.

Texts are built from SciFact sentences (real words for BM25); vectors are clustered synthetic 384-d vectors,
so latencies are real but rankings are not meaningful.

    python -m benchmarks.segments_bench --sizes 100000 --before 006f04c
    python -m benchmarks.segments_bench --stream 10000000          # streamed build: time, peak RSS, bytes/doc
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import ROOT, clustered_vectors, peak_rss_mb, save, sentence_pool, table, worktree

QUERIES = ["gene expression in tumour cells", "vaccination reduces mortality in children",
           "insulin resistance and obesity", "antibiotic resistance mechanisms in bacteria",
           "smoking increases the risk of lung cancer"]

RUN = r"""
import importlib.util, json, statistics, sys, time
# this checkout's benchmarks package, even where PYTHONPATH names another commit's tree (for its embedsearch)
spec = importlib.util.spec_from_file_location("benchmarks", sys.argv[1] + "/benchmarks/__init__.py",
                                              submodule_search_locations=[sys.argv[1] + "/benchmarks"])
sys.modules["benchmarks"] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sys.modules["benchmarks"])
import numpy as np
from benchmarks.segments_bench import corpus, model_entry
from embedsearch import Index
n, work, mode = int(sys.argv[2]), sys.argv[3], sys.argv[4]
docs, vectors = corpus(n)
start = time.perf_counter()
index = Index.from_embeddings(docs, vectors, work + "/idx", model_entry())
out = {"build_s": time.perf_counter() - start}
extra, extra_vectors = corpus(2_000, offset=n)
add = index.add_embedded
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


def corpus(n: int, offset: int = 0, pool: list[str] | None = None):
    """``n`` documents of six SciFact sentences each and clustered vectors, the same for every run."""
    from embedsearch import Document

    pool = pool or sentence_pool()
    rng = random.Random(offset)
    docs = [Document(f"s{offset + i}", " ".join(rng.sample(pool, 6)), metadata={"year": 2000 + i % 26})
            for i in range(n)]
    return docs, clustered_vectors(n, seed=11 + offset)


def model_entry() -> dict:
    from embedsearch import Index

    manifest = Index.bundled().manifest
    return manifest["model"] if isinstance(manifest, dict) else manifest.model  # a "before" library's is JSON


def run(mode: str, n: int, before: str | None = None) -> dict:
    """One size in a fresh process: ``after`` with this checkout, ``before`` with commit ``before``."""
    with tempfile.TemporaryDirectory(prefix=f"segments-{mode}-") as work, contextlib.ExitStack() as stack:
        env = os.environ.copy()
        if mode == "before":
            env["PYTHONPATH"] = str(stack.enter_context(worktree(before, Path(work) / "before")))
        done = subprocess.run([sys.executable, "-c", RUN, str(ROOT), str(n), work, mode, json.dumps(QUERIES)],
                              capture_output=True, text=True, env=env, cwd=work)
        if done.returncode != 0:
            raise SystemExit(done.stderr[-3000:])
        return json.loads(done.stdout.strip().splitlines()[-1])


def stream(n: int, batch: int = 250_000) -> dict:
    """A streamed build of ``n`` documents from precomputed vectors: batches made one at a time."""
    from embedsearch import Index
    from embedsearch.store.settings import StoreSettings

    pool = sentence_pool()
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
    parser.add_argument("--before", help="also run each size with this commit's library (a git worktree)")
    parser.add_argument("--stream", type=int, default=0, help="only the streamed build, at this many documents")
    args = parser.parse_args()
    if args.stream:
        result = stream(args.stream)
        print(json.dumps(result))
        save(f"segments_stream_{args.stream}", result)
        return
    rows, raw = [], {}
    for n in args.sizes:
        for mode in (["before"] if args.before else []) + ["after"]:
            result = run(mode, n, args.before)
            raw[f"{mode}-{n}"] = result
            print(mode, n, json.dumps(result), flush=True)
            rows.append([f"{n:,}", f"before ({args.before})" if mode == "before" else "this checkout", result["add_1_s"], result["add_1000_s"], result["remove_10_s"],
                         result.get("cli_add_one_s", "-"), result.get("hybrid_p50_compacted_ms", "-"),
                         result.get("hybrid_p50_after_100_adds_ms", "-"), result.get("hybrid_p50_after_compact_ms", "-"),
                         result.get("segments_after_100_adds", "-"), result["peak_rss_mb"]])
    print(table(["docs", "store", "add 1 (s)", "add 1,000 (s)", "remove 10 (s)", "CLI add 1 (s)",
                 "hybrid p50 compacted (ms)", "after 100 adds (ms)", "after compact (ms)", "segments", "peak RSS (MB)"],
                rows))
    save("segments", raw)


if __name__ == "__main__":
    main()
