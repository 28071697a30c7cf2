"""The whole `embedsearch search` command on the bundled index, as a user runs it (issue 62): the median wall
time of fresh processes (page cache warm: one unmeasured run first), with this checkout's library and, with
``--before REV``, an earlier commit's from a git worktree, alternating; then where the time goes: the
``python -X importtime`` totals of the packages a search imports, and the floor no code of ours can go
under (a process that imports numpy, onnxruntime, faiss, tokenizers and typer, reads the model's tokenizer and
opens an ONNX session of it, and ends without teardown: what any search must do, with no code of ours).
Every process runs with bytecode caches on (``PYTHONDONTWRITEBYTECODE`` dropped), as an installed package
runs: this machine's shell sets it, which made every earlier run compile our 111 modules from source (0.1 s).

    python -m benchmarks.cli_bench --before e37a1e9
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import nullcontext
from pathlib import Path

from benchmarks.common import ROOT, save, table, worktree

QUERY = "discrete diffusion with continuous-time Markov chains"
PACKAGES = ("all", "embedsearch.cli", "numpy", "typer", "pydantic", "onnxruntime", "faiss", "tokenizers", "scipy", "pyarrow")
FLOOR = r"""
import sys
import numpy, onnxruntime, faiss, tokenizers, typer
tokenizers.Tokenizer.from_file(sys.argv[1] + "/tokenizer.json")
options = onnxruntime.SessionOptions()
options.intra_op_num_threads = 2
onnxruntime.InferenceSession(sys.argv[1] + "/model.onnx", options, providers=["CPUExecutionProvider"])
import os; os._exit(0)
"""


SESSION = r"""
import os, sys, time
import onnxruntime
options = onnxruntime.SessionOptions()
options.intra_op_num_threads = 2
start = time.perf_counter()
onnxruntime.InferenceSession(sys.argv[1], options, providers=["CPUExecutionProvider"])
print(time.perf_counter() - start)
os._exit(0)
"""


def session_open(folder: Path, runs: int) -> dict[str, list[float]]:
    """Seconds to open the export's ONNX session in a fresh process: as exported (format 3, the weights beside
    the graph) and with the same model saved as one protobuf holding its weights (format 2), alternating."""
    import onnx

    with tempfile.TemporaryDirectory(prefix="cli-bench-onnx-") as tmp:
        inside = Path(tmp) / "model.onnx"
        onnx.save(onnx.load(str(folder / "model.onnx")), str(inside))
        out: dict[str, list[float]] = {"weights beside the graph (format 3)": [], "weights inside (format 2)": []}
        for _ in range(runs):
            for name, path in zip(out, (folder / "model.onnx", inside)):
                done = subprocess.run([sys.executable, "-c", SESSION, str(path)], capture_output=True, text=True,
                                      check=True)
                out[name].append(float(done.stdout))
    return out


def command(index: Path) -> list[str]:
    return [sys.executable, "-m", "embedsearch", "search", QUERY, "-k", "10", "--index", str(index)]


def environment(library: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPATH": str(library)}


def wall(cmd: list[str], cwd: Path) -> float:
    env = environment(cwd)
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    took = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed in {cwd}: {done.stderr[-500:]}")
    return took


def imports(library: Path, index: Path) -> dict[str, float]:
    """Cumulative import time (s) of each package in ``PACKAGES``, as the search command imports them."""
    env = environment(library)
    done = subprocess.run([sys.executable, "-X", "importtime", *command(index)[1:]], cwd=library, env=env,
                          capture_output=True, text=True)
    out = {"all": 0.0}
    for line in done.stderr.splitlines():
        found = re.match(r"import time:\s+\d+ \|\s+(\d+) \| ( *)(\S+)$", line)
        if not found:
            continue
        seconds, top = int(found.group(1)) / 1e6, found.group(2) == ""
        out["all"] += seconds if top else 0.0
        if found.group(3) in PACKAGES and found.group(3) not in out:
            out[found.group(3)] = seconds
    return out


def model_folder(index: Path) -> Path:
    """The ONNX export a search of ``index`` opens."""
    from embedsearch.embedding.query_encoder import exported
    from embedsearch.index import Index

    return exported(Index.load(index).manifest.model.fingerprint)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", help="an earlier commit to run alternately with this checkout")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--index", type=Path, default=ROOT / "indexes" / "neurips2026")
    args = parser.parse_args()
    if not (args.index / "manifest.json").exists():
        subprocess.run([sys.executable, "-m", "embedsearch", "info"], cwd=ROOT, check=True, capture_output=True)
    with tempfile.TemporaryDirectory(prefix="cli-bench-") as tmp, \
            (worktree(args.before, Path(tmp) / "before") if args.before else nullcontext()) as before:
        libraries = {"after": ROOT, **({f"before ({args.before})": before} if before else {})}
        times: dict[str, list[float]] = {name: [] for name in libraries}
        for name, library in libraries.items():
            wall(command(args.index), library)
        for _ in range(args.runs):
            for name, library in libraries.items():
                times[name].append(wall(command(args.index), library))
        breakdown = {name: imports(library, args.index) for name, library in libraries.items()}
        floor = [wall([sys.executable, "-c", FLOOR, str(model_folder(args.index))], ROOT) for _ in range(args.runs)]
        sessions = session_open(model_folder(args.index), args.runs)
    rows = [[name, f"{statistics.median(t):.3f}", f"{min(t):.3f}", f"{max(t):.3f}",
             *(f"{breakdown[name].get(p, 0):.3f}" for p in PACKAGES)] for name, t in times.items()]
    rows.append(["floor: third-party imports, tokenizer, ONNX session", f"{statistics.median(floor):.3f}", f"{min(floor):.3f}",
                 f"{max(floor):.3f}", *[""] * len(PACKAGES)])
    print(table(["library", "median s", "min s", "max s", *(f"import {p} s" for p in PACKAGES)], rows))
    opened = [[name, f"{statistics.median(t):.3f}", f"{min(t):.3f}", f"{max(t):.3f}"] for name, t in sessions.items()]
    print(table(["ONNX session of the export", "median s", "min s", "max s"], opened))
    medians = {name: statistics.median(t) for name, t in times.items()}
    against = "; ".join(f"{name} {m:.3f} s" for name, m in medians.items() if name != "after")
    headline = (f"{'met' if medians['after'] <= 0.4 else 'missed'} (target 0.4 s): median {medians['after']:.3f} s "
                f"of {args.runs}{f' ({against}, alternating)' if against else ''}; "
                f"floor {statistics.median(floor):.3f} s; the ONNX session opens in {opened[0][1]} s "
                f"(weights beside the graph) against {opened[1][1]} s")
    headers = ["library", "median s", "min s", "max s", *(f"import {p} s" for p in PACKAGES)]
    save("cli_bench", {"query": QUERY, "runs": args.runs, "times_s": times, "imports_s": breakdown,
                       "floor_s": floor, "session_open_s": sessions, "table": {"headers": headers, "rows": rows},
                       "sessions": {"headers": ["ONNX session of the export", "median s", "min s", "max s"],
                                    "rows": opened}}, headline)


if __name__ == "__main__":
    main()
