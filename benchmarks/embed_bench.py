"""Embedding throughput per encoder on the same SciFact abstracts, each in a fresh process with no
embedding cache: sentence-transformers fp32 (the old bulk path), the ONNX export at fp32 and at int8
(``Embedder`` with ``precision``), fastembed (the peer) running the same exports from a local folder, and
the static draft model (``static-minilm``): abstracts/s, peak RSS, cosine to sentence-transformers. With
``--quality``, SciFact test nDCG@10 (dense and hybrid) of an index built with each of our encoders; with
``--topics``, arXiv-2000 topic NMI of each; with ``--build N``, the wall time of ``embedsearch build`` of N
SciFact-length abstracts (six SciFact sentences each) at int8, in a process of its own.

Run: .venv/bin/python -m benchmarks.embed_bench [--n 2000] [--quality] [--topics] [--build 100000]
[--encoders int8] [--skip BACKEND ...]
fastembed is not in the bench lock: it pins huggingface-hub < 2 where the lock holds 2.4 (a hub 1.x would suit
both it and transformers, but moves the whole lock), and it runs on hub 2 regardless; install it beside the
locked packages with
`.venv/bin/pip install --no-deps fastembed==0.9.1 loguru==0.7.3 py-rust-stemmers==0.1.8` and uninstall them
after (`make install`'s `pip check` names the conflict), or pass `--skip fastembed-fp32 fastembed-int8`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.common import SHARED, cpu_model, peak_rss_mb, save, table

SCIFACT = SHARED / "eval" / "scifact"
ARXIV = SHARED / "eval" / "arxiv" / "arxiv_kaggle_0704_2000.jsonl"
BACKENDS = ("st-fp32", "onnx-fp32", "onnx-int8", "fastembed-fp32", "fastembed-int8", "static-minilm")
OURS = {"fp32": {}, "int8": {"precision": "int8"}, "static-minilm": {"model": "static-minilm"}}


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
    elif backend.startswith("fastembed"):
        model = fastembed_model(backend.split("-")[1])
        list(model.embed(corpus[:4]))
        start = time.perf_counter()
        vectors = np.stack(list(model.embed(corpus, batch_size=32)))
    elif backend == "static-minilm":
        embedder = Embedder(EmbedSettings(model="static-minilm"))  # distilled beforehand; it uses no cache
        embedder.embed(corpus[:4])
        start = time.perf_counter()
        vectors = embedder.embed(corpus)
    else:
        # an empty embedding cache; the export and the model's record (no torch import) from the real one
        embedder = Embedder(EmbedSettings(precision=backend.split("-")[1]), cache_dir=Path(tempfile.mkdtemp()))
        embedder.backend  # ... with the export (from the real cache, made once) opened outside the timing
        start = time.perf_counter()
        vectors = embedder.embed(corpus)
    seconds = time.perf_counter() - start
    np.save(out, vectors)
    print(json.dumps({"seconds": seconds, "rss_mb": peak_rss_mb()}))


def fastembed_model(precision: str):
    """fastembed's ``TextEmbedding`` over our export at ``precision``, from a local folder: the export's
    ``model.onnx`` and the bundled model's tokenizer files, truncating at the model's 256 tokens."""
    from fastembed import TextEmbedding
    from fastembed.common.model_description import ModelSource, PoolingType

    from embedsearch import EmbedSettings
    from embedsearch.embedding.embed import Embedder, resolve_model

    export = Embedder(EmbedSettings(precision=precision)).backend.folder
    source = Path(resolve_model("all-MiniLM-L6-v2"))
    folder = Path(tempfile.mkdtemp(prefix="fastembed-"))
    for name in ("model.onnx", "model.onnx.data"):  # the graph and, beside it, its weights (export format 3)
        (folder / name).symlink_to(export / name)
    for name in ("tokenizer.json", "config.json", "special_tokens_map.json"):
        (folder / name).write_bytes((source / name).read_bytes())
    config = json.loads((source / "tokenizer_config.json").read_text())
    (folder / "tokenizer_config.json").write_text(json.dumps({**config, "model_max_length": 256}))
    name = f"embedsearch/minilm-{precision}"
    TextEmbedding.add_custom_model(name, pooling=PoolingType.MEAN, normalization=True,
                                   sources=ModelSource(hf=name), dim=384, model_file="model.onnx")
    return TextEmbedding(name, specific_model_path=str(folder), threads=os.cpu_count())


def exports_ready() -> None:
    """Make both exports and the static model in the shared cache once, so no child times them."""
    from embedsearch import EmbedSettings
    from embedsearch.embedding.embed import Embedder

    for precision in ("fp32", "int8"):
        Embedder(EmbedSettings(precision=precision)).backend
    Embedder(EmbedSettings(model="static-minilm"))


def quality(encoders: list[str]) -> list[list]:
    from embedsearch import EmbedSettings, Index
    from embedsearch.retrieval.beir import load_beir, rank_queries, score_run

    data = load_beir(SCIFACT)
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for name in encoders:
            settings = OURS[name]
            start = time.perf_counter()
            index = Index.build(data.documents, Path(scratch) / name, embed=EmbedSettings(**settings))
            build_s = time.perf_counter() - start
            dense = score_run(rank_queries(index, data.queries, mode="dense"), data.qrels)["ndcg@10"]
            hybrid = score_run(rank_queries(index, data.queries), data.qrels)["ndcg@10"]
            rows.append([name, len(data.documents), f"{build_s:.0f}", f"{dense:.3f}", f"{hybrid:.3f}"])
            print(rows[-1], flush=True)
    return rows


def topics(encoders: list[str]) -> list[list]:
    """arXiv-2000 topics (the default fit: a consensus of seeds) of an index built with each encoder: NMI and
    ARI against the 18 archives, unassigned papers counted as one more cluster (as ``topics_bench``)."""
    from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

    from embedsearch import EmbedSettings, Index
    from embedsearch.corpus import read_sources

    docs = read_sources([ARXIV]).documents
    truth = {json.loads(line)["id"]: json.loads(line)["label"] for line in ARXIV.open()}
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for name in encoders:
            index = Index.build(docs, Path(scratch) / name, embed=EmbedSettings(**OURS[name]))
            model = index.topics()
            found = dict(zip(model.ids, model.assignments[0]))
            labels, assigned = [truth[d.id] for d in docs], [found[d.id] for d in docs]
            rows.append([name, f"{normalized_mutual_info_score(labels, assigned):.3f}",
                         f"{adjusted_rand_score(labels, assigned):.3f}", f"{np.mean(np.asarray(assigned) < 0):.1%}",
                         len(set(assigned) - {-1})])
            print(rows[-1], flush=True)
    return rows


def build(n: int, encoders: list[str]) -> list[list]:
    """``embedsearch build`` of ``n`` SciFact-length abstracts at int8 from a JSONL file, empty caches, timed
    from the command's start to a searchable index (the export made beforehand, as a user's second build)."""
    import random

    from benchmarks.common import sentence_pool

    rng, pool = random.Random(0), sentence_pool()
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        corpus = Path(scratch) / "corpus.jsonl"
        with corpus.open("w") as fh:
            for i in range(n):
                fh.write(json.dumps({"id": f"a{i}", "text": " ".join(rng.sample(pool, 6))}) + "\n")
        env = {**os.environ, "EMBEDSEARCH_CACHE_DIR": str(Path(scratch) / "cache")}
        subprocess.run([sys.executable, "-c", "from benchmarks.embed_bench import exports_ready as e; e()"],
                       check=True, env=env)
        flags = {"fp32": ["--precision", "fp32"], "int8": ["--precision", "int8"],
                 "static-minilm": ["--model", "static-minilm"]}
        for name, settings in ((e, flags[e]) for e in encoders):
            command = [str(Path(sys.executable).parent / "embedsearch"), "build", str(corpus), "--index",
                       str(Path(scratch) / name), *settings]
            start = time.perf_counter()
            subprocess.run(command, check=True, env=env, stderr=subprocess.DEVNULL)
            seconds = time.perf_counter() - start
            search = subprocess.run([str(Path(sys.executable).parent / "embedsearch"), "search", "vitamin D deficiency",
                                     "-k", "1", "--index", str(Path(scratch) / name)], check=True, env=env,
                                    capture_output=True, text=True)
            rows.append([name, f"{n:,}", f"{seconds / 60:.1f} min", f"{n / seconds:.1f}",
                         search.stdout.splitlines()[0][:60]])
            print(rows[-1], flush=True)
            shutil.rmtree(Path(scratch) / "cache" / "embeddings", ignore_errors=True)
    return rows


def throughput_table(n: int, backends: list[str], results: dict, vectors: dict) -> int:
    """Print abstracts/s, windows/s, RSS and cosine to sentence-transformers per backend; the window count."""
    from embedsearch import EmbedSettings
    from embedsearch.embedding.embed import Embedder

    base = results["st-fp32"]["seconds"]
    windows = len(Embedder(EmbedSettings())._split(texts(n))[0])  # fastembed truncates: one window each
    rows = []
    for backend in backends:
        same = vectors[backend].shape == vectors["st-fp32"].shape
        cos = (vectors[backend] * vectors["st-fp32"]).sum(axis=1) if same else np.full(1, np.nan)
        r = results[backend]
        run = n if backend.startswith("fastembed") else windows
        rows.append([backend, f"{n / r['seconds']:.1f}", f"{base / r['seconds']:.2f}x",
                     "" if backend == "static-minilm" else f"{run / r['seconds']:.1f}", f"{r['rss_mb']:.0f}",
                     *((f"{cos.mean():.4f}", f"{cos.min():.4f}") if same else ("other space", ""))])
    print(f"{n} SciFact abstracts, {os.cpu_count()} cores ({cpu_model()}), empty embedding cache")
    print(f"{windows} windows of at most 256 tokens for our encoders and sentence-transformers; fastembed truncates")
    print(table(["encoder", "abstracts/s", "vs ST fp32", "windows/s", "peak RSS MB", "cos mean", "cos min"], rows))
    return windows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--quality", action="store_true")
    parser.add_argument("--topics", action="store_true")
    parser.add_argument("--build", type=int, default=0)
    parser.add_argument("--skip", nargs="*", default=[], choices=BACKENDS)
    parser.add_argument("--encoders", nargs="*", choices=list(OURS),
                        help="ours in --quality, --topics (default: all) and --build (default: int8, static-minilm)")
    parser.add_argument("--child", choices=BACKENDS)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if args.child:
        return child(args.child, args.n, args.out)
    exports_ready()
    results, vectors = {}, {}
    backends = [b for b in BACKENDS if b not in args.skip]
    with tempfile.TemporaryDirectory() as scratch:
        for backend in backends:
            out = Path(scratch) / f"{backend}.npy"
            run = subprocess.run([sys.executable, "-m", "benchmarks.embed_bench", "--child", backend, "--n",
                                  str(args.n), "--out", str(out)], capture_output=True, text=True, check=True)
            results[backend] = json.loads(run.stdout.strip().splitlines()[-1])
            vectors[backend] = np.load(out)
            print(backend, results[backend], flush=True)
    payload: dict = {"n": args.n, "results": results}
    if backends:
        payload["windows"] = throughput_table(args.n, backends, results, vectors)
    if args.quality:
        q = quality(args.encoders or list(OURS))
        print(table(["encoder", "abstracts", "build s", "nDCG@10 dense", "nDCG@10 hybrid"], q))
        payload["quality"] = q
    if args.topics:
        t = topics(args.encoders or list(OURS))
        print(table(["encoder", "NMI", "ARI", "unassigned", "topics"], t))
        payload["topics"] = t
    if args.build:
        b = build(args.build, args.encoders or ["int8", "static-minilm"])
        print(table(["encoder", "abstracts", "embedsearch build", "abstracts/s", "first hit"], b))
        payload["build"] = b
    save("embed_bench", payload)


if __name__ == "__main__":
    main()
