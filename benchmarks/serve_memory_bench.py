"""Resident memory of a read-only server through a standard session of use (issue #22, item 8): start,
searches from the page, a paper's page, topics ready, the map, a duplicate check, an abstract's similar
papers. RSS of the server process (and of its children while they run) after each step, at 57 documents
(the bundled corpus, topics not yet fitted) and at 100,000 (six SciFact sentences each, clustered vectors,
as `segments_bench`).

Run: .venv/bin/python -m benchmarks.serve_memory_bench [--sizes 57 100000]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from benchmarks.common import rss_mb, save, table

STEPS = ["started", "one search", "five searches", "paper page", "topics ready", "map", "duplicate check",
         "similar to text"]


def session(index: Path, port: int = 8791) -> dict[str, int]:
    proc = subprocess.Popen([sys.executable, "-m", "embedsearch", "serve", "--index", str(index), "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url, seen = f"http://127.0.0.1:{port}", {}
    try:
        while True:
            try:
                if httpx.get(url + "/health").status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.3)
        c = httpx.Client(base_url=url, timeout=600)
        seen["started"] = round(rss_mb(proc.pid, children=True))
        c.get("/search", params={"q": "robot world models", "display": 1})
        seen["one search"] = round(rss_mb(proc.pid, children=True))
        for q in ["spiking neural networks", "regret of bandits", "diffusion language models", "zzzqqq"]:
            c.get("/search", params={"q": q, "display": 1})
        seen["five searches"] = round(rss_mb(proc.pid, children=True))
        doc = c.get("/search", params={"q": "robots"}).json()["hits"][0]["id"]
        c.get("/")
        c.get(f"/documents/{doc}", params={"display": 1})
        c.get(f"/similar/{doc}", params={"display": 1})
        c.get(f"/duplicates/of/{doc}")
        seen["paper page"] = round(rss_mb(proc.pid, children=True))
        while c.get("/topics").status_code == 503:
            time.sleep(1)
        seen["topics ready"] = round(rss_mb(proc.pid, children=True))
        c.get("/map")
        seen["map"] = round(rss_mb(proc.pid, children=True))
        c.post("/duplicates/check", json={"text": "Discrete diffusion models on continuous-time Markov chains. " * 4,
                                          "display": True})
        seen["duplicate check"] = round(rss_mb(proc.pid, children=True))
        c.post("/similar", json={"text": "Robots that learn manipulation from video demonstrations.", "display": True})
        seen["similar to text"] = round(rss_mb(proc.pid, children=True))
    finally:
        proc.terminate()
        proc.wait()
    return seen


def index_of(size: int, work: Path) -> Path:
    from embedsearch import Index

    if size == 57:
        shutil.copytree(Index.bundled().path, work / "idx", ignore=shutil.ignore_patterns("topics"))
        return work / "idx"
    from benchmarks.segments_bench import corpus, model_entry

    docs, vectors = corpus(size)
    return Index.from_embeddings(docs, vectors, work / "idx", model_entry()).path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[57, 100_000])
    sizes = parser.parse_args().sizes
    results = {}
    for size in sizes:
        with tempfile.TemporaryDirectory(prefix="serve-memory-") as work:
            results[size] = session(index_of(size, Path(work)))
    print(table(["step", *[f"{s:,} documents (MB)" for s in sizes]],
                [[step, *[results[s][step] for s in sizes]] for step in STEPS]))
    save("serve_memory", {str(s): r for s, r in results.items()})


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    main()
