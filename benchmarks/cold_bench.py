"""A built index's first query with the page cache emptied: per mode, a fresh process after ``drop_caches``
times the import, the open, the first search and a second search with other terms, with this checkout's
library or (``--before REV``) an earlier commit's, alternating so that both see the same disk.

The index is any built one, e.g. shards_bench's streamed 1M build or merge_memory_bench's 10M one. Emptying
the page cache needs root; where that is refused the figures are warm and the table says so.

    python -m benchmarks.cold_bench --index /tmp/shards-1m/built --before 0bb2776
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.common import ROOT, save, stamp, table, worktree
from benchmarks.merge_memory_bench import drop_caches

FIRST = r"""
import json, sys, time
t0 = time.perf_counter()
from embedsearch import Index
t1 = time.perf_counter()
index = Index.load(sys.argv[1])
t2 = time.perf_counter()
index.search("gene expression in tumour cells", 10, mode=sys.argv[2])
t3 = time.perf_counter()
index.search("vaccination reduces mortality in children", 10, mode=sys.argv[2])
t4 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "open_s": t2 - t1, "first_s": t3 - t2, "second_s": t4 - t3}))
"""


def once(index: Path, mode: str, code_root: Path | None) -> dict:
    env = None if code_root is None else {**os.environ, "PYTHONPATH": str(code_root)}
    done = subprocess.run([sys.executable, "-c", FIRST, str(index), mode], capture_output=True, text=True,
                          env=env, cwd=code_root or ROOT)
    if done.returncode != 0:
        raise SystemExit(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--before", help="also time the library of this commit (from a git worktree)")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    cold = True
    with tempfile.TemporaryDirectory(prefix="cold-bench-") as work, contextlib.ExitStack() as stack:
        sides: dict[str, Path | None] = {"after": None}
        if args.before:
            sides = {"before": stack.enter_context(worktree(args.before, Path(work) / "before")), "after": None}
        results: dict[str, dict[str, list[dict]]] = {side: {} for side in sides}
        for mode in ("hybrid", "dense", "lexical"):
            for _ in range(args.runs):
                for side, code_root in sides.items():
                    cold = drop_caches() and cold
                    results[side].setdefault(mode, []).append(once(args.index, mode, code_root))
    rows = []
    for mode in ("hybrid", "dense", "lexical"):
        for side in sides:
            runs = results[side][mode]
            rows.append([mode, side if side == "after" else f"before ({args.before})",
                         *(statistics.median(r[key] for r in runs) for key in ("import_s", "open_s", "first_s",
                                                                                "second_s"))])
    print(stamp())
    print(f"index {args.index}; page cache emptied before each run: {cold}; median of {args.runs} runs")
    print(table(["mode", "library", "import s", "open s", "first query s", "second query s"], rows))
    save(f"cold_{args.index.name}", {"index": str(args.index), "cold": cold, "results": results})


if __name__ == "__main__":
    main()
