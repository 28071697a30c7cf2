"""Topic stability over seeds 0-9 and four CPU code paths: the shipped consensus against a single
UMAP + HDBSCAN fit (``runs=1``, the behaviour before), on the bundled 57 abstracts and the 2,000
labelled arXiv abstracts; then the fit's cost at 2,000 and on a 50,000-vector sample.

Each CPU path embeds its corpora in a fresh process with an empty vector cache (torch's kernels are
what ``ATEN_CPU_CAPABILITY`` changes) and fits there (``NUMBA_CPU_NAME`` changes the numba target).

Run: .venv/bin/python -m benchmarks.topics_stability_bench [fits|cost]   (about 20 + 12 minutes on 2 cores)
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

from benchmarks.common import SHARED, save, stamp, table

ARXIV = SHARED / "eval" / "arxiv" / "arxiv_kaggle_0704_2000.jsonl"
PATHS = {"default": {}, "ATEN_CPU_CAPABILITY=avx2": {"ATEN_CPU_CAPABILITY": "avx2"},
         "ATEN_CPU_CAPABILITY=default": {"ATEN_CPU_CAPABILITY": "default"},
         "NUMBA_CPU_NAME=generic": {"NUMBA_CPU_NAME": "generic"}}
SEEDS = range(10)

FITS = """
import json, sys, time
import numpy as np, torch
from embedsearch.corpus import bundled_sources, read_sources
from embedsearch.embedding.embed import Embedder, EmbedSettings
from embedsearch.topics.umap_hdbscan import TopicSettings, enable_numba_cache
from embedsearch.topics.consensus import fit_labels
enable_numba_cache()
out = {"capability": torch.backends.cpu.get_cpu_capability()}
for name, sources in (("bundled", None), ("arxiv", [sys.argv[1]])):
    docs = read_sources(sources or bundled_sources()).documents
    vectors = np.asarray(Embedder(EmbedSettings()).embed([d.embed_text for d in docs]), dtype=np.float32)
    out[name] = {"ids": [d.id for d in docs]}
    for runs in (60, 1):
        fits = []
        for seed in range(10):
            settings = TopicSettings(seed=seed, runs=runs).resolve(len(vectors))
            similarity = vectors @ vectors.T
            indices = np.argsort(-similarity, axis=1, kind="stable")[:, :settings.graph_neighbours]
            indices[:, 0] = np.arange(len(vectors))
            distances = np.maximum(0, 1 - np.take_along_axis(similarity, indices, 1)).astype(np.float32)
            distances[:, 0] = 0  # each document is its own nearest neighbour at distance 0, as neighbour_graph says
            start = time.perf_counter()
            labels = fit_labels(vectors, indices.astype(np.int32), distances, settings)
            fits.append({"labels": labels.tolist(), "seconds": time.perf_counter() - start})
        out[name][runs] = fits
print(json.dumps(out))
"""

COST = """
import json, resource, sys, time
import numpy as np
from embedsearch.topics.umap_hdbscan import TopicSettings, enable_numba_cache, reduce
from embedsearch.topics.sample import fit_sample
enable_numba_cache()
n, runs = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(0)
centres = rng.normal(size=(int(n ** 0.5), 384))
x = centres[rng.integers(0, len(centres), n)] + 1.2 * rng.normal(size=(n, 384))
x = (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)
fit_sample(x[:300], TopicSettings(runs=runs).resolve(300))  # compile numba before timing
start = time.perf_counter()
_, labels, _ = fit_sample(x, TopicSettings(runs=runs).resolve(n))
print(json.dumps({"seconds": time.perf_counter() - start, "topics": int(labels.max() + 1),
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def run(code: str, *args: str, env: dict | None = None) -> dict:
    environ = {**os.environ, "EMBEDSEARCH_CACHE_DIR": tempfile.mkdtemp(prefix="stability-cache-"), **(env or {})}
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=environ)
    if out.returncode:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def arxiv_scores(ids: list[str], fits: list[dict]) -> dict:
    from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

    truth = {str(json.loads(line)["id"]): json.loads(line)["label"] for line in ARXIV.open()}
    labels = [truth[i] for i in ids]
    nmi = [normalized_mutual_info_score(labels, f["labels"]) for f in fits]
    pairs = [adjusted_rand_score(a["labels"], b["labels"]) for a, b in itertools.combinations(fits, 2)]
    return {"nmi": float(np.mean(nmi)), "nmi_range": float(np.ptp(nmi)), "nmi_std": float(np.std(nmi)),
            "ari_pairs": float(np.mean(pairs)), "ari_min": float(np.min(pairs)),
            "unassigned": float(np.mean([np.mean(np.array(f["labels"]) < 0) for f in fits])),
            "topics": [int(max(f["labels"]) + 1) for f in fits], "seconds": float(np.mean([f["seconds"] for f in fits]))}


def main() -> None:
    part = sys.argv[1] if len(sys.argv) > 1 else "all"  # fits, cost or all
    results = {name: run(FITS, str(ARXIV), env=env) for name, env in PATHS.items()} if part != "cost" else {}
    bundled, arxiv, every = [], [], {}
    for name, result in results.items():
        for runs, label in ((60, "consensus (shipped)"), (1, "single fit (before)")):
            fits = result["bundled"][str(runs)]
            counts = [(int(max(f["labels"]) + 1), int(sum(x < 0 for x in f["labels"]))) for f in fits]
            every.setdefault(label, []).extend(counts)
            bundled.append([label, f"{name} ({result['capability']})", " ".join(f"{t}/{u}" for t, u in counts),
                            f"{sum(t >= 6 and u <= 8 for t, u in counts)}/10"])
            s = arxiv_scores(result["arxiv"]["ids"], result["arxiv"][str(runs)])
            arxiv.append([label, name, f"{s['nmi']:.3f}", f"{s['nmi_range']:.3f} / {s['nmi_std']:.3f}",
                          f"{s['ari_pairs']:.3f} (min {s['ari_min']:.3f})", f"{s['unassigned']:.1%}",
                          f"{min(s['topics'])}-{max(s['topics'])}", f"{s['seconds']:.1f} s"])
    cost = []
    for n in (2000, 50_000) if part != "fits" else ():
        single, ours = run(COST, str(n), "1"), run(COST, str(n), "60")
        cost.append([f"{n:,}", f"{single['seconds']:.1f} s", f"{ours['seconds']:.1f} s",
                     f"{ours['seconds'] / single['seconds']:.2f}x", f"{single['peak_mb']:.0f} MB",
                     f"{ours['peak_mb']:.0f} MB"])
    text = "\n\n".join([stamp(),
        "Bundled 57, topics/unassigned for seeds 0-9 (bar: >= 6 topics and <= 8 unassigned)\n\n" + table(
            ["fit", "CPU path (torch capability)", "seeds 0-9", "meet the bar"], bundled),
        "arXiv 2,000, seeds 0-9 per path\n\n" + table(
            ["fit", "CPU path", "NMI mean", "NMI range / std", "pairwise ARI between seeds", "unassigned",
             "topics", "fit time"], arxiv),
        "Cost of one fit (fit_sample: neighbour graph, topics, 2-D map; synthetic clustered vectors)\n\n" + table(
            ["documents", "single fit", "consensus", "ratio", "peak RSS single", "peak RSS consensus"], cost)])
    print(text)
    save("topics_stability", {"results": results, "text": text})


if __name__ == "__main__":
    main()
