"""What verifying checksums costs a merge: `compact` of an index of N documents in 8 segments, with the
re-hashing of every file it reads (shipped) and without it, each in a fresh process on a fresh copy.

    python benchmarks/merge_verify_bench.py --sizes 100000 300000
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, save, stamp, table  # noqa: E402

BUILD = r"""
import sys
sys.path.insert(0, sys.argv[1] + "/benchmarks")
from segments_bench import corpus, model_entry
from embedsearch import Index
from embedsearch.store.compact import MergePolicy
from embedsearch.store.writer import StoreSettings
n, path = int(sys.argv[2]), sys.argv[3]
docs, vectors = corpus(n)
part = n // 8
never = StoreSettings(merge=MergePolicy(segments_per_tier=1000))
index = Index.from_embeddings(docs[:part], vectors[:part], path, model_entry(), storage=never)
for start in range(part, n, part):
    index.add_embedded(docs[start:start + part], vectors[start:start + part])
print(len(index.snapshot.segments))
"""

COMPACT = r"""
import json, resource, sys, time
from embedsearch import Index
import embedsearch.store.compact as compact
if sys.argv[2] == "off":
    compact.checksums = lambda *a: []
index = Index.load(sys.argv[1])
start = time.perf_counter()
index.compact()
print(json.dumps({"seconds": time.perf_counter() - start,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="*", default=[100_000, 300_000])
    sizes = parser.parse_args().sizes
    rows = []
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix="merge-verify-") as work:
            built = Path(work) / "built"
            subprocess.run([sys.executable, "-c", BUILD, str(ROOT), str(n), str(built)], check=True,
                           capture_output=True)
            size = sum(f.stat().st_size for f in built.rglob("*") if f.is_file())
            timings = {}
            for mode in ("on", "off"):
                copy = Path(work) / mode
                shutil.copytree(built, copy)
                out = subprocess.run([sys.executable, "-c", COMPACT, str(copy), mode], check=True,
                                     capture_output=True, text=True)
                timings[mode] = json.loads(out.stdout.strip().splitlines()[-1])
            on, off = timings["on"], timings["off"]
            rows.append([f"{n:,}", f"{size / 1e6:,.0f} MB", f"{off['seconds']:.1f} s", f"{on['seconds']:.1f} s",
                         f"{on['seconds'] / off['seconds']:.2f}x", f"{off['peak_mb']:,.0f} / {on['peak_mb']:,.0f} MB"])
    text = stamp() + "\n\n" + table(["documents", "index on disk", "compact without verifying",
                                     "compact verifying (shipped)", "ratio", "peak RSS without / with"], rows)
    print(text)
    save("merge_verify", {"rows": rows, "text": text})


if __name__ == "__main__":
    main()
