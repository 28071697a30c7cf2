"""Two shards on a local Ray cluster against the single index they were split from, both over HTTP on this
machine: throughput and latency under the same load, answer equality, and memory and disk per shard.

The index is merge_memory_bench's streamed build (SciFact-sentence texts, clustered vectors, 1% removed),
compacted. ``Index.split`` cuts it into two shards by id hash. The single index is served by `embedsearch
serve --workers 1`; the cluster by `embedsearch serve --index CLUSTER --engine ray --replicas 1` (an ingress
and one replica per shard, on Ray Serve). Each server is alone on the machine while measured; the load client shares the two
cores with it. Queries are SciFact's test claims (hybrid, k=10), each asked once of both for equality.

    python -m benchmarks.shards_bench --n 1000000 --work /tmp/shards-1m
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import numpy as np

from benchmarks.common import ROOT, SHARED, rss_mb, save, stamp, table
from benchmarks.merge_memory_bench import BUILD, COMPACT, step

SPLIT = r"""
import json, sys, time
sys.path.append(sys.argv[1])  # the benchmarks package; embedsearch stays the one PYTHONPATH names
from benchmarks.common import peak_rss_mb
from embedsearch import Index
start = time.perf_counter()
cluster = Index.load(sys.argv[2]).split(sys.argv[3], 2)
print(json.dumps({"split_s": time.perf_counter() - start, "split_peak_mb": peak_rss_mb(),
                  "shard_documents": [len(s) for s in cluster.shards]}))
"""


def queries() -> list[str]:
    from embedsearch.retrieval.beir import load_beir

    return list(load_beir(SHARED / "eval" / "scifact").queries.values())


def processes(marker: str) -> list[int]:
    """Pids whose command line holds ``marker`` (Ray names a replica's process after its deployment)."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if marker in (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"):
                    found.append(int(proc.name))
            except OSError:
                continue
    return found


def wait_ready(url: str, server: subprocess.Popen) -> None:
    deadline = time.time() + 600
    while time.time() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the server for {url} exited with {server.returncode}")
        try:
            if httpx.get(url + "/health", timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(1)
    raise SystemExit(f"{url} did not start")


async def load(url: str, asked: list[str], clients: int) -> tuple[float, list[float], int]:
    """Every query of ``asked`` once, ``clients`` at a time: wall seconds, latencies, errors."""
    latencies: list[float] = []
    errors = 0

    made = [httpx.AsyncClient(base_url=url, timeout=120) for _ in range(clients)]  # before any timing (as serve_bench)

    async def client(n: int) -> None:
        nonlocal errors
        async with made[n] as c:
            for q in asked[n::clients]:
                start = time.perf_counter()
                r = await c.get("/search", params={"q": q, "k": 10})
                latencies.append(time.perf_counter() - start)
                errors += r.status_code != 200
    start = time.perf_counter()
    await asyncio.gather(*(client(n) for n in range(clients)))
    return time.perf_counter() - start, latencies, errors


def measure(name: str, url: str, asked: list[str], clients: int, pids) -> dict:
    answers = {}
    with httpx.Client(base_url=url, timeout=120) as c:
        for q in asked[:60]:
            for mode in ("hybrid", "lexical", "dense"):
                hits = c.get("/search", params={"q": q, "k": 10, "mode": mode}).json()["hits"]
                answers[(mode, q)] = [(h["id"], h["score"]) for h in hits]
    wall, latencies, errors = asyncio.run(load(url, asked, clients))
    ms = np.asarray(latencies) * 1000
    return {"name": name, "qps": len(asked) / wall, "p50_ms": float(np.percentile(ms, 50)),
            "p99_ms": float(np.percentile(ms, 99)), "errors": errors, "answers": answers,
            "rss_mb": {label: sum(rss_mb(p) for p in found) for label, found in pids().items()}}


def serve_single(index: Path, port: int, asked: list[str], clients: int) -> dict:
    server = subprocess.Popen([sys.executable, "-m", "embedsearch", "serve", "--index", str(index), "--port",
                               str(port), "--workers", "1", "--no-topics"], cwd=ROOT, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        wait_ready(f"http://127.0.0.1:{port}", server)
        return measure("single", f"http://127.0.0.1:{port}", asked, clients, lambda: {"server": [server.pid]})
    finally:
        server.terminate()
        server.wait(60)


def serve_cluster(cluster: Path, port: int, asked: list[str], clients: int) -> dict:
    server = subprocess.Popen([sys.executable, "-m", "embedsearch", "serve", "--index", str(cluster), "--engine", "ray",
                               "--port", str(port), "--replicas", "1", "--cpus", "0.25"], cwd=ROOT,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_ready(f"http://127.0.0.1:{port}", server)
        pids = {name: processes(f"ServeReplica:embedsearch:{name}") for name in ("shard-000", "shard-001", "ingress")}
        return measure("cluster", f"http://127.0.0.1:{port}", asked, clients, lambda: pids)
    finally:
        server.terminate()
        server.wait(120)
        ray = Path(sys.executable).with_name("ray")
        subprocess.run([str(ray), "stop", "--force"], capture_output=True)


def _same(a: list, b: list) -> bool:
    """Equal rankings: the same scores, and the same ids at each score (exact ties may come in either order)."""
    if len(a) != len(b) or not np.allclose([s for _, s in a], [s for _, s in b], atol=1e-5):
        return False
    return all({i for i, s in a if abs(s - x) < 1e-5} == {i for i, s in b if abs(s - x) < 1e-5} for _, x in a)


def in_process(single: Path, cluster: Path, asked: list[str]) -> dict[str, str]:
    """Answer equality alone, both opened in this process (no servers): the cluster's ``Index.search`` against
    the single index's over the first 60 claims in each mode."""
    from embedsearch import Index

    one, many = Index.load(single), Index.load(cluster)
    equal = {}
    for mode in ("hybrid", "lexical", "dense"):
        same = sum(_same([(h.id, h.score) for h in one.search(q, 10, mode=mode)],
                         [(h.id, h.score) for h in many.search(q, 10, mode=mode).hits]) for q in asked[:60])
        equal[mode] = f"{same}/{len(asked[:60])}"
    return equal


def du_mb(folder: Path) -> float:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) / 2**20


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--skip-build", action="store_true", help="reuse the index and cluster made before in --work")
    parser.add_argument("--build-only", action="store_true", help="build, compact and split, then stop")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--equality", action="store_true", help="only compare answers, in this process")
    args = parser.parse_args()
    single, cluster = args.work / "built", args.work / "cluster"
    result: dict = {"documents": args.n}
    if not args.skip_build:
        shutil.rmtree(args.work, ignore_errors=True)
        args.work.mkdir(parents=True)
        result.update(step(BUILD, str(args.n), str(single)))
        result.update(step(COMPACT, str(single)))
        result.update(step(SPLIT, str(single), str(cluster)))
        print(json.dumps(result), flush=True)
        (args.work / "built.json").write_text(json.dumps(result))
    if args.build_only:
        return
    result.update(json.loads((args.work / "built.json").read_text()))
    asked = (queries() * 10)[:args.requests]
    if args.equality:
        print(stamp())
        print(f"answers equal (ids and scores to 1e-5, ties either way), first 60 queries: "
              f"{in_process(single, cluster, asked)}")
        return
    one = serve_single(single, 8311, asked, args.clients)
    two = serve_cluster(cluster, 8312, asked, args.clients)
    equal, overlap = {}, {}
    for mode in ("hybrid", "lexical", "dense"):
        keys = [key for key in one["answers"] if key[0] == mode]
        equal[mode] = f"{sum(_same(one['answers'][k], two['answers'][k]) for k in keys)}/{len(keys)}"
        overlap[mode] = float(np.mean([len({i for i, _ in one["answers"][k]} & {i for i, _ in two["answers"][k]}) / 10
                                       for k in keys]))
    same, close = equal, overlap
    disk = {"single": du_mb(single), **{p.name: du_mb(p) for p in sorted((cluster / "shards").iterdir())}}
    result.update({"clients": args.clients, "requests": len(asked), "equal_answers": same, "overlap_at_10": close,
                   "disk_mb": disk,
                   **{f"{r['name']}_{k}": v for r in (one, two) for k, v in r.items() if k not in ("name", "answers")}})
    print(stamp())
    print(table(["server", "q/s", "p50 ms", "p99 ms", "errors", "RSS MB (per process)", "disk MB"],
                [["single index, 1 worker", one["qps"], one["p50_ms"], one["p99_ms"], one["errors"],
                  f"{one['rss_mb']['server']:,.0f}", f"{disk['single']:,.0f}"],
                 ["2 shards on Ray Serve", two["qps"], two["p50_ms"], two["p99_ms"], two["errors"],
                  ", ".join(f"{k} {v:,.0f}" for k, v in two["rss_mb"].items()),
                  ", ".join(f"{k} {v:,.0f}" for k, v in disk.items() if k != "single")]]))
    print(f"answers equal (ids and scores to 1e-5, ties either way), first 60 queries: {same}; overlap@10: {close}")
    save(f"shards_{args.n}", result)


if __name__ == "__main__":
    os.environ.setdefault("RAY_DEDUP_LOGS", "0")
    main()
