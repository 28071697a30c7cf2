"""Embedding throughput per encoder on the same SciFact abstracts, each in a fresh process with no
embedding cache: sentence-transformers fp32 (the old bulk path), the ONNX export at fp32 and at int8
(``Embedder`` with ``precision``): abstracts/s, peak RSS, cosine to sentence-transformers. With
``--quality``, SciFact test nDCG@10 (dense and hybrid) of an index built at each ONNX precision.

Run: .venv/bin/python -m benchmarks.embed_bench [--n 300] [--quality]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.common import SHARED, cpu_model, peak_rss_mb, save, table

SCIFACT = SHARED / "eval" / "scifact"
BACKENDS = ("st-fp32", "onnx-fp32", "onnx-int8")


def texts(n: int) -> list[str]:
    from embedsearch.retrieval.beir import load_beir

    return [d.embed_text for d in load_beir(SCIFACT).documents[:n]]


def child(backend: str, n: int, out: Path) -> None:
    """One backend in this process: the model (or export) loaded first, then the timed embedding."""
    from embedsearch import EmbedSettings
    from embedsearch.embedding.embed import Embedder, embed_batch, load_model

    corpus = texts(n)
    if backend == "st-fp32":
        model = load_model("all-MiniLM-L6-v2")
        embed_batch(corpus[:4], model)
        start = time.perf_counter()
        vectors = embed_batch(corpus, model)
    else:
        os.environ["EMBEDSEARCH_CACHE_DIR"] = tempfile.mkdtemp()  # an empty embedding cache ...
        embedder = Embedder(EmbedSettings(precision=backend.split("-")[1]))
        embedder.backend  # ... with the export (from the real cache, made once) opened outside the timing
        start = time.perf_counter()
        vectors = embedder.embed(corpus)
    seconds = time.perf_counter() - start
    np.save(out, vectors)
    print(json.dumps({"seconds": seconds, "rss_mb": peak_rss_mb()}))


def exports_ready() -> None:
    """Make both exports in the shared cache once, so no child times an export."""
    from embedsearch import EmbedSettings
    from embedsearch.embedding.embed import Embedder

    for precision in ("fp32", "int8"):
        Embedder(EmbedSettings(precision=precision)).backend


def quality() -> list[list]:
    from embedsearch import EmbedSettings, Index
    from embedsearch.retrieval.beir import load_beir, rank_queries, score_run

    data = load_beir(SCIFACT)
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for precision in ("fp32", "int8"):
            start = time.perf_counter()
            index = Index.build(data.documents, Path(scratch) / precision, embed=EmbedSettings(precision=precision))
            build_s = time.perf_counter() - start
            dense = score_run(rank_queries(index, data.queries, mode="dense"), data.qrels)["ndcg@10"]
            hybrid = score_run(rank_queries(index, data.queries), data.qrels)["ndcg@10"]
            rows.append([precision, len(data.documents), f"{build_s:.0f}", f"{dense:.3f}", f"{hybrid:.3f}"])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--quality", action="store_true")
    parser.add_argument("--child", choices=BACKENDS)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if args.child:
        return child(args.child, args.n, args.out)
    exports_ready()
    results, vectors = {}, {}
    with tempfile.TemporaryDirectory() as scratch:
        for backend in BACKENDS:
            out = Path(scratch) / f"{backend}.npy"
            run = subprocess.run([sys.executable, "-m", "benchmarks.embed_bench", "--child", backend, "--n",
                                  str(args.n), "--out", str(out)], capture_output=True, text=True, check=True)
            results[backend] = json.loads(run.stdout.strip().splitlines()[-1])
            vectors[backend] = np.load(out)
    base = results["st-fp32"]["seconds"]
    rows = []
    for backend in BACKENDS:
        cos = (vectors[backend] * vectors["st-fp32"]).sum(axis=1)
        r = results[backend]
        rows.append([backend, f"{args.n / r['seconds']:.1f}", f"{base / r['seconds']:.2f}x", f"{r['rss_mb']:.0f}",
                     f"{cos.mean():.4f}", f"{cos.min():.4f}"])
    print(f"{args.n} SciFact abstracts, {os.cpu_count()} cores ({cpu_model()}), empty embedding cache")
    print(table(["encoder", "abstracts/s", "vs ST fp32", "peak RSS MB", "cos mean", "cos min"], rows))
    payload = {"n": args.n, "results": results}
    if args.quality:
        q = quality()
        print(table(["precision", "abstracts", "build s", "nDCG@10 dense", "nDCG@10 hybrid"], q))
        payload["quality"] = q
    save("embed_bench", payload)


if __name__ == "__main__":
    main()
