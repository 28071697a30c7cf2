"""Reviewer matching at conference scale: 10,000 submissions x 2,000 reviewers x 20 publications. Vectors are
real MiniLM vectors of SciFact and arXiv abstracts (embedded once, then read from the cache; the embedding
is not timed), drawn with replacement for both sides. Times and peak memory of ``affinity`` (the whole score
matrix, in blocks) and of ``assign`` (R = 3, L = 20, over each submission's 50 best reviewers, as the CSV
holds them by default), against scipy's ``linear_sum_assignment`` on duplicated rows and columns, which
cannot keep one paper's reviewers distinct and needs (n R) x (m L) costs: measured where that fits.

Run: .venv/bin/python -m benchmarks.reviewers_scale_bench [--texts 4000] [--every]
"""

from __future__ import annotations

import argparse
import json
import resource
import time

import numpy as np

from benchmarks.common import SHARED, save, table
from embedsearch.embedding.embed import Embedder
from embedsearch.embedding.settings import EmbedSettings
from embedsearch.reviewers import AffinitySettings, AssignSettings, ScoreTable, assign
from embedsearch.reviewers.affinity import ranked, scores


def texts(limit: int) -> list[str]:
    out = []
    for file in (SHARED / "eval" / "arxiv" / "arxiv_kaggle_0704_2000.jsonl", SHARED / "eval" / "scifact" / "corpus.jsonl"):
        with file.open() as fh:
            for line in fh:
                row = json.loads(line)
                out.append(f"{row.get('title') or ''} {row.get('abstract') or row.get('text') or ''}".strip())
    return out[:limit]


def candidates(matrix: np.ndarray, keep: int) -> ScoreTable:
    rows = [(row, positions) for row, positions in ranked(matrix, keep)]
    s = np.repeat([r for r, _ in rows], [len(p) for _, p in rows])
    r = np.concatenate([p for _, p in rows])
    return ScoreTable(tuple(f"s{i}" for i in range(matrix.shape[0])), tuple(f"r{j}" for j in range(matrix.shape[1])),
                      s, r, matrix[s, r].astype(np.float64), np.zeros(len(s), bool))


def rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20


def run(vectors: np.ndarray, n: int, m: int, per: int, load: int, rng, with_scipy: bool,
        wider: tuple[int, ...] = ()) -> list:
    subs = vectors[rng.integers(len(vectors), size=n)]
    pubs = vectors[rng.integers(len(vectors), size=m * 20)]
    owner = np.repeat(np.arange(m), 20)
    start = time.perf_counter()
    matrix = scores(subs, pubs, owner, m, AffinitySettings())
    t_aff = time.perf_counter() - start
    start = time.perf_counter()
    result = assign(candidates(matrix, 50), AssignSettings(per_paper=per, max_load=load))
    t_assign = time.perf_counter() - start
    total = sum(v for _, _, v in result.pairs)
    row = [f"{n:,} x {m:,} x 20", f"{t_aff:.1f} s", f"{t_assign:.1f} s", f"{total:,.1f}", f"{rss_gb():.2f} GB"]
    if with_scipy:
        from scipy.optimize import linear_sum_assignment

        every = assign(candidates(matrix, m), AssignSettings(per_paper=per, max_load=load))
        row[3] += f" (every pair: {sum(v for _, _, v in every.pairs):,.1f})"
        start = time.perf_counter()
        cost = np.repeat(np.repeat(matrix.astype(np.float64), per, axis=0), load, axis=1)
        picked = linear_sum_assignment(cost, maximize=True)
        t_scipy = time.perf_counter() - start
        pairs = list(zip((picked[0] // per).tolist(), (picked[1] // load).tolist()))
        repeated = len(pairs) - len(set(pairs))
        row += [f"{t_scipy:.1f} s", f"{cost[picked].sum():,.1f} ({repeated:,} of {len(pairs):,} reviews repeat a "
                                    "reviewer on the same paper)"]
    else:
        row += [f"needs {(n * per) * (m * load) * 8 / 2 ** 30:.0f} GB of costs", ""]
    for keep in wider:
        start = time.perf_counter()
        wide = assign(candidates(matrix, keep), AssignSettings(per_paper=per, max_load=load))
        row[2] += f"; {keep} best: {time.perf_counter() - start:.1f} s, total {sum(v for _, _, v in wide.pairs):,.1f}, " \
                  f"peak {rss_gb():.2f} GB"
    return row


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--texts", type=int, default=4000)
    parser.add_argument("--every", action="store_true", help="Also assign over 200 and all 2,000 reviewers per "
                                                             "submission at full scale (about a minute, 3 GB).")
    args = parser.parse_args()
    vectors = Embedder(EmbedSettings()).embed(texts(args.texts))
    rng = np.random.default_rng(0)
    rows = [run(vectors, 1_000, 200, 3, 20, rng, True),
            run(vectors, 10_000, 2_000, 3, 20, rng, False, (200, 2_000) if args.every else ())]
    print(table(["scale", "affinity", "assign (R=3, L=20)", "total affinity", "peak RSS", "scipy LSA", "scipy total"],
                rows))
    save("reviewers_scale", {"rows": rows})


if __name__ == "__main__":
    main()
