"""Served search, this checkout against another commit, in alternating rounds: ``embedsearch serve`` (one
worker, no topics) over the bundled corpus under 16 concurrent clients x 60 hybrid searches, and the server's
CPU per request (from /proc). One ``serve_bench`` run per commit measures each once, minutes apart, and on
two shared cores that moves throughput by a fifth; alternating rounds and medians take that drift out.

    python -m benchmarks.serve_ab_bench --before 006f04c --rounds 4

Each round also times ``GET /health`` under the same clients: the server's CPU a request with no search at all
(uvicorn, Starlette and FastAPI's routing, dependencies and JSON), the floor under any search's figure.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from benchmarks.common import ROOT, save, stamp, table, worktree
from benchmarks.serve_bench import QUERIES, Process

CLIENTS, EACH = 16, 60


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def load(url: str, clients: int, each: int, path: str = "/search") -> None:
    async def client(c: int) -> None:
        async with httpx.AsyncClient(base_url=url, timeout=60) as http:
            for i in range(each):
                params = {"q": f"{QUERIES[(c + i) % len(QUERIES)]} {c} {i}"} if path == "/search" else {}
                answer = await http.get(path, params=params)
                answer.raise_for_status()

    await asyncio.gather(*[client(c) for c in range(clients)])


def bundled_copy(code: Path, target: Path) -> None:
    """The bundled index as ``code``'s library builds it, copied to ``target``."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    made = subprocess.run([sys.executable, "-c", "from embedsearch import Index; print(Index.bundled().path)"],
                          env=env, cwd=code, capture_output=True, text=True, check=True)
    shutil.copytree(made.stdout.strip().splitlines()[-1], target)


def one_round(code: Path, index: Path, port: int) -> tuple[float, float, float]:
    """Searches per second, server CPU milliseconds per search, and per ``/health`` request (the floor), after
    a warm-up of 10 per client."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    server = Process([sys.executable, "-m", "embedsearch", "serve", "--index", str(index), "--port", str(port),
                      "--no-topics"], f"http://127.0.0.1:{port}", env, "/health", cwd=code)  # -m puts the cwd first
    try:
        asyncio.run(load(server.url, CLIENTS, 10))
        cpu, start = cpu_seconds(server.proc.pid), time.perf_counter()
        asyncio.run(load(server.url, CLIENTS, EACH))
        elapsed, used = time.perf_counter() - start, cpu_seconds(server.proc.pid) - cpu
        cpu = cpu_seconds(server.proc.pid)
        asyncio.run(load(server.url, CLIENTS, EACH, "/health"))
        floor = cpu_seconds(server.proc.pid) - cpu
    finally:
        server.stop()
    return CLIENTS * EACH / elapsed, 1000 * used / (CLIENTS * EACH), 1000 * floor / (CLIENTS * EACH)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the commit to compare with (run from a git worktree)")
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="serve-ab-"))
    try:
        with worktree(args.before, work / "before") as before:
            codes = {f"before ({args.before})": before, "this checkout": ROOT}
            for name, code in codes.items():
                bundled_copy(code, work / f"{code.name}-index")
            runs: dict[str, list[tuple[float, float, float]]] = {name: [] for name in codes}
            for r in range(args.rounds):
                for name in list(codes) if r % 2 == 0 else list(codes)[::-1]:
                    code = codes[name]
                    runs[name].append(one_round(code, work / f"{code.name}-index", 8790 + r))
                    print(name, "round", r + 1, "%.1f searches/s, %.2f ms CPU a search, %.2f ms a /health" % runs[name][-1],
                          flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rows = [[name, statistics.median(s for s, _, _ in v), min(s for s, _, _ in v), max(s for s, _, _ in v),
             statistics.median(c for _, c, _ in v), statistics.median(f for _, _, f in v)] for name, v in runs.items()]
    print(stamp())
    print(table(["library", "searches/s (median)", "min", "max", "server CPU ms a search (median)",
                 "server CPU ms a /health (median)"], rows))
    save("serve_ab_bench", {"before": args.before, "rounds": {k: v for k, v in runs.items()}})


if __name__ == "__main__":
    main()
