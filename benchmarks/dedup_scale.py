"""100,000 abstracts with 1,000 planted duplicates: time and peak memory of `Index.duplicates`.

Texts are built from SciFact sentences; vectors are clustered synthetic 384-d vectors (embedding
100,000 abstracts would take 90 minutes here), with each planted copy's vector a small perturbation
of its original's. Prints one JSON line (rows for the benchmark table). Run by dedup_bench.py.
"""

from __future__ import annotations

import json
import random
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.common import clustered_vectors, peak_rss_mb, sentence_pool
from benchmarks.planted import sentences
from embedsearch import Document, Index

N, PLANTED = 100_000, 1_000


def main() -> None:
    rng = random.Random(0)
    pool = sentence_pool()
    texts = [" ".join(rng.sample(pool, 6)) for _ in range(N - PLANTED)]
    vectors = clustered_vectors(N, seed=5)
    originals = rng.sample(range(N - PLANTED), PLANTED)
    for i, source in enumerate(originals):
        parts = sentences(texts[source])
        del parts[rng.randrange(1, len(parts))]
        texts.append(" ".join(parts))
        noisy = vectors[source] + np.random.default_rng(i).normal(size=384).astype(np.float32) * 0.01
        vectors[N - PLANTED + i] = noisy / np.linalg.norm(noisy)
    docs = [Document(f"s{i}", t) for i, t in enumerate(texts)]
    model = {"name": "synthetic", "dimension": 384, "max_seq_length": 256, "fingerprint": "synthetic",
             "settings": {"model": "synthetic", "batch_size": 32, "max_windows": 8, "device": None}}
    work = Path(tempfile.mkdtemp(prefix="dedup-scale-"))
    start = time.perf_counter()
    index = Index.from_embeddings(docs, vectors, work / "idx", model)
    build_s = time.perf_counter() - start
    start = time.perf_counter()
    report = index.duplicates()
    dedup_s = time.perf_counter() - start
    truth = {frozenset((f"s{src}", f"s{N - PLANTED + i}")) for i, src in enumerate(originals)}
    found = {frozenset((p.a, p.b)) for p in report.pairs}
    rows = [["abstracts", f"{N:,}"], ["index build (HNSW + BM25 + write)", f"{build_s:.0f} s"],
            ["dedup (candidates, evidence, groups)", f"{dedup_s:.0f} s"],
            ["candidate pairs scored", f"{len(report.candidates):,}"],
            ["planted pairs found", f"{len(found & truth)} / {PLANTED}"],
            ["other pairs flagged", f"{len(found - truth)}"],
            ["peak RSS of the whole run", f"{peak_rss_mb():,.0f} MB"]]
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
