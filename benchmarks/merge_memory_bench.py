"""A streamed merge's memory: `compact` of a large index in its own process (peak RSS, time, segments left),
then a fresh process's first query and warm hybrid latency with dense recall@10 against exact search.

The index is a streamed build of N documents (segments_bench's SciFact-sentence texts and clustered vectors,
segments of 250,000), with 1% of the documents removed so the merge drops rows. Each step is a fresh process;
peak RSS is that process's own VmHWM, file-backed pages it maps included.

    python -m benchmarks.merge_memory_bench --n 1000000 --work /tmp/merge-1m --before f537b56
    python -m benchmarks.merge_memory_bench --n 10000000 --work /tmp/merge-10m --in-place   # 35 GB of disk
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.common import ROOT, save, stamp, table, worktree

BUILD = r"""
import json, sys, time
sys.path.append(sys.argv[1])  # the benchmarks package; embedsearch stays the one PYTHONPATH names
from benchmarks.common import peak_rss_mb
from benchmarks.common import sentence_pool
from benchmarks.segments_bench import corpus, model_entry
from embedsearch import Index
from embedsearch.store.settings import StoreSettings
n, path, batch = int(sys.argv[2]), sys.argv[3], 250_000
pool = sentence_pool()
batches = (corpus(min(batch, n - s), offset=s, pool=pool) for s in range(0, n, batch))
start = time.perf_counter()
index = Index.from_batches(batches, path, model_entry(), n, storage=StoreSettings(segment_rows=batch, grace_seconds=0))
built = time.perf_counter() - start
index.remove([f"s{i}" for i in range(0, n, 100)])
print(json.dumps({"build_s": built, "segments": len(index.snapshot.segments), "build_peak_mb": peak_rss_mb()}))
"""

COMPACT = r"""
import json, sys, time
sys.path.append(sys.argv[1])  # the benchmarks package; embedsearch stays the one PYTHONPATH names
from benchmarks.common import peak_rss_mb
from embedsearch import Index
index = Index.load(sys.argv[2])
start = time.perf_counter()
index.compact()
print(json.dumps({"compact_s": time.perf_counter() - start, "compact_peak_mb": peak_rss_mb(),
                  "segments_after": len(index.snapshot.segments), "live": len(index)}))
"""

QUERY = r"""
import json, statistics, sys, time
sys.path.append(sys.argv[1])  # the benchmarks package; embedsearch stays the one PYTHONPATH names
import numpy as np
from benchmarks.common import clustered_vectors, peak_rss_mb
from benchmarks.segments_bench import QUERIES
t = time.perf_counter()
from embedsearch import Index
from embedsearch.retrieval.dense import dense
index = Index.load(sys.argv[2])
index.search(QUERIES[0], 10)
first = time.perf_counter() - t
samples = []
for q in QUERIES * 6:
    t = time.perf_counter(); index.search(q, 10); samples.append(time.perf_counter() - t)
snapshot = index.snapshot
queries = clustered_vectors(250_000 + 40, seed=11)[-40:]  # held out, from the first batch's topic centres
found = dense(snapshot, queries, 10)
best = [[] for _ in queries]
start = 0
for segment, live in zip(snapshot.segments, snapshot.live):
    for lo in range(0, segment.rows, 200_000):
        block = np.asarray(segment.embeddings[lo:lo + 200_000])
        before = lo if live is None else int(live[:lo].sum())
        if live is not None:
            block = block[live[lo:lo + len(block)]]
        scores = queries @ block.T
        for q in range(len(queries)):
            top = np.argpartition(-scores[q], 10)[:10]
            best[q].extend(zip(scores[q][top].tolist(), (start + before + top).tolist()))
    start += segment.rows if live is None else int(live.sum())
recall = []
for q, hits in enumerate(found):
    exact = {row for _, row in sorted(best[q], reverse=True)[:10]}
    recall.append(len(exact & {row for row, _ in hits}) / 10)
print(json.dumps({"first_query_s": first, "hybrid_p50_ms": statistics.median(samples) * 1000,
                  "hybrid_p95_ms": float(np.percentile(samples, 95)) * 1000,
                  "dense_recall_at_10": float(np.mean(recall)), "query_peak_mb": peak_rss_mb()}))
"""


def step(code: str, *args: str, code_root: Path | None = None) -> dict:
    """One step in a fresh process, with this checkout's package or the one at ``code_root``."""
    env = {**os.environ, "PYTHONPATH": str(code_root)} if code_root else None
    done = subprocess.run([sys.executable, "-c", code, str(ROOT), *args], capture_output=True, text=True, env=env,
                          cwd=tempfile.gettempdir())  # not a checkout: embedsearch is PYTHONPATH's, or the installed one
    if done.returncode != 0:
        raise SystemExit(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def before(rev: str, built: Path, work: Path) -> dict:
    """``compact`` of a copy by the code of commit ``rev``, told to build the IVF kind the streamed merge keeps
    (left to choose, it would build an HNSW graph of every row)."""
    index = work / "before-idx"
    with worktree(rev, work / "before-code") as code:
        try:
            shutil.copytree(built, index)
            manifest = json.loads((index / "manifest.json").read_text())
            manifest["index"]["settings"]["index_type"] = "ivfpq"
            (index / "manifest.json").write_text(json.dumps(manifest, indent=1))
            return {f"before_{k}": v for k, v in step(COMPACT, str(index), code_root=code).items()}
        finally:
            shutil.rmtree(index, ignore_errors=True)


def drop_caches() -> bool:
    """Empty the page cache so the first query reads from disk (root only; False where not allowed)."""
    try:
        subprocess.run(["sync"], check=True)
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
        return True
    except OSError:
        return False


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--skip-build", action="store_true", help="reuse the index built before in --work")
    parser.add_argument("--before", help="also compact a copy with the code of this commit, for its peak memory")
    parser.add_argument("--in-place", action="store_true", help="compact the built index itself, not a copy")
    args = parser.parse_args()
    index, built = args.work / "idx", args.work / "built"
    result: dict = {"documents": args.n}
    if not args.skip_build:
        shutil.rmtree(args.work, ignore_errors=True)
        args.work.mkdir(parents=True)
        result.update(step(BUILD, str(args.n), str(built)))
        print(json.dumps(result), flush=True)
    if args.before:
        result.update(before(args.before, built, args.work))
        print(json.dumps(result), flush=True)
    if args.in_place:
        index = built
    else:
        shutil.rmtree(index, ignore_errors=True)
        shutil.copytree(built, index)
    result.update(step(COMPACT, str(index)))
    print(json.dumps(result), flush=True)
    result["cold_cache"] = drop_caches()
    result.update(step(QUERY, str(index)))
    print(json.dumps(result), flush=True)
    print(stamp())
    print(table(["documents", "segments before", "compact s", "compact peak RSS MB", "before: s", "before: peak MB",
                 "segments after", "first query s (cold cache)", "hybrid p50 ms", "hybrid p95 ms", "dense recall@10"],
                [[f"{args.n:,}", result.get("segments", "-"), result["compact_s"], result["compact_peak_mb"],
                  result.get("before_compact_s", "-"), result.get("before_compact_peak_mb", "-"),
                  result["segments_after"], f"{result['first_query_s']:.2f} ({result['cold_cache']})",
                  result["hybrid_p50_ms"], result["hybrid_p95_ms"], result["dense_recall_at_10"]]]))
    save(f"merge_memory_{args.n}", result)


if __name__ == "__main__":
    main()
