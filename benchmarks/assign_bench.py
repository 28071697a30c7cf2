"""Assignments side by side with openreview-matcher (issue 46), on the same scores, each run in a process of its
own: wall time, peak RSS (VmHWM), total affinity and the weakest submission's mean affinity, both computed
here on the same float scores from the pairs each solver chose; randomised runs also their expected share of
the deterministic optimum and how many pairs could be drawn.

Instances (built once, then read from ``benchmarks/out/assign_instances``):
- ``gold``: the reviewer gold standard's d_20_1, 463 submissions x 58 reviewers, every pair scored by the
  library's ``Matcher`` (MiniLM), R = 3, max load 25;
- ``NxM``: N submissions x M reviewers, R = 4, max load 6, each submission's 100 best candidates by real MiniLM
  affinities (4,000 arXiv and SciFact abstracts drawn with replacement for submissions and for the reviewers'
  10 publications each; the embedding is cached and not timed). 16000x14000 is NeurIPS's size.

The peer runs in its own virtual environment (``--matcher-python``): openreview-matcher fetched from GitHub,
``pip install -e``'d there with gurobipy from PyPI so that it imports (its PerturbedMaximization needs a
Gurobi licence). Each peer run has ``--peer-limit`` seconds.

    python -m benchmarks.assign_bench --instances gold,4000x3500 --matcher-python /tmp/matcher-venv/bin/python
    python -m benchmarks.assign_bench --instances 16000x14000 --matcher-python ... --peer-limit 1200
    python -m benchmarks.assign_bench --rules --instances gold,4000x3500,16000x14000   # seniority and institutions
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from benchmarks.common import OUT, SHARED, save, table

STORE = OUT / "assign_instances"

MEASURE = """
import json, sys, time
import numpy as np
def hwm_gb():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 2 ** 20
folder, kwargs = sys.argv[1], json.loads(sys.argv[2])
s, r, v = (np.load(f"{folder}/{k}.npy") for k in ("s", "r", "v"))
meta = json.load(open(f"{folder}/meta.json"))
n, m = int(s.max()) + 1, int(r.max()) + 1
def report(chosen_s, chosen_r, seconds, **extra):
    score = {(a, b): c for a, b, c in zip(s.tolist(), r.tolist(), v.tolist())}
    got = np.array([score.get((a, b), 0.0) for a, b in zip(chosen_s, chosen_r)])
    means = np.bincount(np.asarray(chosen_s, int), weights=got, minlength=n) / meta["per_paper"]
    print(json.dumps({"seconds": seconds, "rss_gb": hwm_gb(), "total": float(got.sum()),
                      "weakest_mean": float(means.min()), "reviews": len(got), **extra}))
"""

OURS = MEASURE + """
from embedsearch.reviewers import AssignSettings, ScoreTable, assign
from embedsearch.reviewers.attributes import Constraints, Rule
table = ScoreTable(tuple(f"s{i}" for i in range(n)), tuple(f"r{j}" for j in range(m)), s, r, v, np.zeros(len(s), bool))
rules = tuple({"senior": Rule("seniority", "senior", 1), "institution": Rule("institution", None, 1)}[x]
              for x in kwargs.pop("rules", ()))
info = {f"r{j}": {"seniority": "senior" if j % 3 == 0 else "junior", "institution": f"u{j % max(4, m // 25)}"}
        for j in range(m)}
limit = kwargs.pop("time_limit", 60.0)
start = time.perf_counter()
result = assign(table, AssignSettings(per_paper=meta["per_paper"], max_load=meta["max_load"], **kwargs),
                constraints=Constraints(rules, info, limit) if rules else None)
seconds = time.perf_counter() - start
extra = {k: result.summary[k] for k in ("solver", "optimality_gap") if k in result.summary}
pos = [(int(a[1:]), int(b[1:])) for a, b, _ in result.pairs]
report([a for a, _ in pos], [b for _, b in pos], seconds, expected_of_optimum=result.summary.get("expected_of_optimum"),
       support=result.summary.get("support_pairs"), **extra)
"""

PEER = MEASURE + """
import logging
from matcher.encoder import Encoder
from matcher.solvers import FairFlow, MinMaxSolver, RandomizedSolver, PerturbedMaximizationSolver
start = time.perf_counter()
papers, people = [f"s{i}" for i in range(n)], [f"r{j}" for j in range(m)]
edges = [(papers[a], people[b], c) for a, b, c in zip(s.tolist(), r.tolist(), v.tolist())]
q = kwargs.get("q", 1.0)
encoder = Encoder(people, papers, [], {"affinity": {"edges": edges, "default": 0}}, {"affinity": 1},
                  probability_limits=q, perturbation=kwargs.get("perturbation", 0.0))
solver_class = {"MinMax": MinMaxSolver, "FairFlow": FairFlow, "Randomized": RandomizedSolver,
                "PerturbedMaximization": PerturbedMaximizationSolver}[kwargs["solver"]]
solver = solver_class([0] * m, [meta["max_load"]] * m, [meta["per_paper"]] * n, encoder, logger=logging.getLogger())
flow = np.asarray(solver.solve())
seconds = time.perf_counter() - start
if flow.shape == (m, n):
    flow = flow.T
chosen_s, chosen_r = np.nonzero(flow > 0.5)
extra = {}
if kwargs["solver"] == "Randomized":
    extra = {"expected_of_optimum": float(solver.get_fraction_of_opt()),
             "support": int((solver.fractional_assignment_matrix > 0).sum())}
report(chosen_s.tolist(), chosen_r.tolist(), seconds, **extra)
"""

OUR_RUNS = [("total", {"objective": "total"}),
            ("fair", {"objective": "fair"}),
            ("randomized, q = 0.5", {"objective": "randomized", "max_probability": 0.5}),
            ("randomized, q = 0.9, perturbation 0.1", {"objective": "randomized", "max_probability": 0.9,
                                                       "perturbation": 0.1})]
RULE_RUNS = [("total, >= 1 senior (a third of reviewers): one flow", {"objective": "total", "rules": ["senior"]}),
             ("total, >= 1 senior and one per institution (m / 25 of them, at least 4): CP-SAT, 120 s",
              {"objective": "total", "rules": ["senior", "institution"], "time_limit": 120.0})]
PEER_RUNS = [("MinMax", {"solver": "MinMax"}),
             ("FairFlow", {"solver": "FairFlow"}),
             ("Randomized, q = 0.5", {"solver": "Randomized", "q": 0.5}),
             ("PerturbedMaximization, q = 0.9, perturbation 0.1", {"solver": "PerturbedMaximization", "q": 0.9,
                                                                    "perturbation": 0.1})]


def gold(folder: Path) -> None:
    """d_20_1, every pair scored through the library's reviewer path."""
    import tempfile

    from embedsearch.embedding.settings import DEFAULT_MODEL
    from embedsearch.reviewers import Matcher, Submissions

    data = SHARED / "eval" / "reviewer_match" / "d_20_1"
    subs = Submissions.read([data / "submissions.json"], DEFAULT_MODEL)
    with tempfile.TemporaryDirectory() as scratch:
        matrix = Matcher.open(data / "archives", subs.model, Path(scratch) / "p").table(subs).matrix
    s, r = np.nonzero(np.ones_like(matrix, bool))
    _store(folder, s, r, matrix[s, r], per_paper=3, max_load=25)


def synthetic(folder: Path, n: int, m: int, keep: int = 100, pubs: int = 10) -> None:
    """N x M with each submission's ``keep`` best reviewers by real MiniLM affinities."""
    from benchmarks.reviewers_scale_bench import texts
    from embedsearch.embedding.embed import Embedder
    from embedsearch.embedding.settings import EmbedSettings
    from embedsearch.reviewers import AffinitySettings
    from embedsearch.reviewers.affinity import ranked, scores

    vectors = Embedder(EmbedSettings()).embed(texts(4000))
    rng = np.random.default_rng(0)
    subs = vectors[rng.integers(len(vectors), size=n)]
    owner = np.repeat(np.arange(m), pubs)
    matrix = scores(subs, vectors[rng.integers(len(vectors), size=m * pubs)], owner, m, AffinitySettings())
    rows = list(ranked(matrix, keep))
    s = np.repeat([row for row, _ in rows], [len(p) for _, p in rows])
    r = np.concatenate([p for _, p in rows])
    _store(folder, s, r, matrix[s, r], per_paper=4, max_load=6)


def _store(folder: Path, s: np.ndarray, r: np.ndarray, v: np.ndarray, **meta: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, values in (("s", s.astype(np.int64)), ("r", r.astype(np.int64)), ("v", np.round(v, 6).astype(np.float64))):
        np.save(folder / f"{name}.npy", values)
    (folder / "meta.json").write_text(json.dumps({**meta, "pairs": len(s)}))


def instance(name: str) -> Path:
    folder = STORE / name
    if not (folder / "meta.json").exists():
        if name == "gold":
            gold(folder)
        else:
            n, m = (int(x) for x in name.split("x"))
            synthetic(folder, n, m)
    return folder


def run(python: str, script: str, folder: Path, kwargs: dict, limit: float | None, env: dict | None = None) -> dict:
    """One run in a fresh process; a failure or a time-out is its reason."""
    try:
        done = subprocess.run([python, "-c", script, str(folder), json.dumps(kwargs)], capture_output=True, text=True,
                              timeout=limit, env=env)
    except subprocess.TimeoutExpired:
        return {"failed": f"no result within {limit:.0f} s"}
    if done.returncode:
        lines = [x for x in done.stderr.strip().splitlines() if x.strip()]
        return {"failed": (lines[-1] if lines else f"exit {done.returncode}")[:150]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def row(name: str, who: str, got: dict, optimum: float | None) -> list:
    if "failed" in got:
        return [name, who, "failed: " + got["failed"], "", "", "", "", "", ""]
    share = f"{got['total'] / optimum:.2%}" if optimum else ""
    expected = f"{got['expected_of_optimum']:.1%}" if got.get("expected_of_optimum") is not None else ""
    if got.get("solver"):
        expected = f"{got['solver']}, gap {got['optimality_gap']:.2%}"
    return [name, who, f"{got['seconds']:.1f} s", f"{got['rss_gb']:.2f} GB", f"{got['total']:,.2f}", share,
            f"{got['weakest_mean']:.3f}", expected, f"{got['support']:,}" if got.get("support") else ""]


def main() -> None:
    import os

    parser = argparse.ArgumentParser()
    parser.add_argument("--instances", default="gold,16000x14000")
    parser.add_argument("--matcher-python", help="python of a venv with openreview-matcher installed")
    parser.add_argument("--peer-limit", type=float, default=1200.0, help="seconds each peer run may take")
    parser.add_argument("--peer-runs", default="MinMax,FairFlow,Randomized,PerturbedMaximization")
    parser.add_argument("--large-peer-runs", default="MinMax",
                        help="the peer's runs over instances of more than a million pairs (the others' dense loops "
                             "take hours there)")
    parser.add_argument("--ours-only", action="store_true")
    parser.add_argument("--rules", action="store_true", help="instead: the attribute rules, flow and CP-SAT")
    args = parser.parse_args()
    root = str(Path(__file__).resolve().parent.parent)
    ours_env = {**os.environ, "PYTHONPATH": root}
    rows, results = [], {}
    for name in args.instances.split(","):
        folder = instance(name)
        meta = json.loads((folder / "meta.json").read_text())
        label = f"{name} ({meta['pairs']:,} pairs, R = {meta['per_paper']}, L = {meta['max_load']})"
        optimum = None
        for run_name, kwargs in (OUR_RUNS[:1] + RULE_RUNS if args.rules else OUR_RUNS):
            got = run(sys.executable, OURS, folder, kwargs, None, ours_env)
            optimum = optimum or got.get("total")
            results[f"{name} / embedsearch {run_name}"] = got
            rows.append(row(label, f"embedsearch {run_name}", got, optimum))
            print(rows[-1], flush=True)
        if args.ours_only or args.rules or not args.matcher_python:
            continue
        wanted = set((args.large_peer_runs if meta["pairs"] > 1_000_000 else args.peer_runs).split(","))
        for run_name, kwargs in PEER_RUNS:
            if kwargs["solver"] not in wanted:
                rows.append([label, f"openreview-matcher {run_name}", "not run at this size", "", "", "", "", "", ""])
                continue
            got = run(args.matcher_python, PEER, folder, kwargs, args.peer_limit)
            results[f"{name} / matcher {run_name}"] = got
            rows.append(row(label, f"openreview-matcher {run_name}", got, optimum))
            print(rows[-1], flush=True)
    print(table(["instance", "solver", "time", "peak RSS", "total affinity", "of embedsearch total", "weakest submission mean",
                 "expected of optimum", "support pairs"], rows))
    save("assign_bench_rules" if args.rules else "assign_bench", {"rows": rows, "results": results, "args": vars(args)})


if __name__ == "__main__":
    main()
