"""Helpers shared by the benchmarks: timing, percentiles, synthetic clustered vectors, the SciFact sentence
pool synthetic corpora are drawn from, memory of this or another process, table output. Run a benchmark
from the repository root as a module: ``python -m benchmarks.search_bench``."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
OUT = ROOT / "benchmarks" / "out"  # scratch a benchmark may keep (not committed)
RESULTS = ROOT / "benchmarks" / "results"  # one committed file a benchmark: what README.md is rendered from


def percentiles(samples_s: list[float]) -> tuple[float, float]:
    """p50 and p95 in milliseconds."""
    arr = np.asarray(samples_s) * 1000
    return float(np.percentile(arr, 50)), float(np.percentile(arr, 95))


def timed(fn, *args, **kwargs):
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    return result, time.perf_counter() - start


def median_wall(cmd: list[str], runs: int, env: dict | None = None) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True, env=env or os.environ.copy())
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def clustered_vectors(n: int, dim: int = 384, clusters: int | None = None, seed: int = 0,
                      spread: float = 0.6) -> np.ndarray:
    """Unit vectors around random topic centres, like real embeddings (uniform noise breaks every ANN index)."""
    rng = np.random.default_rng(seed)
    clusters = clusters or max(10, int(np.sqrt(n)))
    centres = rng.normal(size=(clusters, dim)).astype(np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    out = np.empty((n, dim), dtype=np.float32)
    for start in range(0, n, 100_000):
        stop = min(n, start + 100_000)
        labels = rng.integers(0, clusters, stop - start)
        noise = rng.normal(size=(stop - start, dim)).astype(np.float32) * (spread / np.sqrt(dim))
        block = centres[labels] + noise
        out[start:stop] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return out


def peak_rss_mb() -> float:
    """This process's own peak RSS. Linux's ``ru_maxrss`` survives ``exec``, so a child started by a
    big parent would report the parent's peak; ``VmHWM`` is reset by ``exec``."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rss_mb(pid: int, children: bool = False) -> float:
    """Resident memory of process ``pid`` now (with its direct children: a server's workers)."""
    pids = [pid]
    if children:
        pids += [int(p) for p in subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()]
    total = 0
    for p in pids:
        try:
            total += int(Path(f"/proc/{p}/status").read_text().split("VmRSS:")[1].split()[0])
        except (OSError, IndexError):
            pass
    return total / 1024


def sentence_pool() -> list[str]:
    """Every SciFact sentence over 40 characters: what the synthetic corpora of the scale benchmarks are made of."""
    from embedsearch.retrieval.beir import load_beir

    from .planted import sentences

    return [s for d in load_beir(SHARED / "eval" / "scifact").documents for s in sentences(d.text) if len(s) > 40]


def table(headers: list[str], rows: list[list]) -> str:
    def cell(v):
        return f"{v:,.3f}" if isinstance(v, float) and abs(v) < 10 else (f"{v:,.1f}" if isinstance(v, float) else str(v))
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def cpu_model() -> str:
    try:
        return next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name"))
    except (OSError, StopIteration):
        import platform

        return platform.processor() or platform.machine()


def stamp() -> str:
    """One line naming the machine and the versions a table was measured with (print it above the table)."""
    from embedsearch.store.provenance import provenance

    made = provenance()
    versions = ", ".join(f"{k} {v}" for k, v in made["versions"].items() if v)
    capability = made["torch_cpu_capability"] or "torch not loaded here"
    return f"Measured on {cpu_model()}, {os.cpu_count()} cores, torch kernels {capability}; {versions}."


def save(name: str, payload: dict, headline: str | None = None) -> None:
    """Write a benchmark's result file, ``results/NAME.json``: the command, date, commit and machine that
    produced ``payload`` (its figures), keeping the area, title and write-up of an earlier result of the
    same name; ``python -m benchmarks.report`` renders README.md from these files (commit them)."""
    import datetime

    file = RESULTS / f"{name}.json"
    before = json.loads(file.read_text()) if file.exists() else {}
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or None
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--", "embedsearch", "benchmarks"],
                           capture_output=True, text=True).stdout.strip()
    module = sys.modules["__main__"].__spec__.name if getattr(sys.modules["__main__"], "__spec__", None) else name
    doc = (sys.modules["__main__"].__doc__ or name).strip().splitlines()[0]
    result = {"name": name, "area": before.get("area", "New results"), "title": before.get("title", doc),
              "order": before.get("order", 10_000), "command": [" ".join([".venv/bin/python -m", module, *sys.argv[1:]])],
              "date": datetime.date.today().isoformat(), "commit": (commit + "+changes" if dirty else commit),
              "dated_by": "the run that wrote this file", "machine": stamp(),
              "headline": headline or f"rerun {datetime.date.today().isoformat()}: figures in the result file",
              "figures": payload, **({"write_up": before["write_up"]} if "write_up" in before else {})}
    RESULTS.mkdir(parents=True, exist_ok=True)
    file.write_text(json.dumps(result, indent=1, ensure_ascii=False, default=str) + "\n")


def python() -> str:
    return sys.executable


@contextlib.contextmanager
def worktree(rev: str, folder: Path):
    """Commit ``rev`` checked out at ``folder`` (a git worktree) for as long as the block runs: run its
    library with ``folder`` first on ``PYTHONPATH``; its ``../shared`` is linked to this checkout's."""
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(folder), rev], check=True,
                   capture_output=True)
    try:
        if not (folder.parent / "shared").exists():
            (folder.parent / "shared").symlink_to(SHARED)
        yield folder
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(folder)], capture_output=True)
