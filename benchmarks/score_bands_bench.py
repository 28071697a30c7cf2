"""Where a cosine stops meaning "a match": the cosine of the best hit for queries that have an answer in
the corpus against queries that have none, and SciFact's relevant against retrieved non-relevant pairs.
The thresholds ``SearchSettings.related_cosine`` and ``close_cosine`` (issue #22, "honest scores") are read
from this table.

Run: .venv/bin/python -m benchmarks.score_bands_bench   (SciFact's test corpus is embedded once, about
5 minutes on 2 cores, then read from the embedding cache)
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from benchmarks.common import SHARED, save, table
from embedsearch import Index
from embedsearch.retrieval.beir import load_beir
from embedsearch.retrieval.dense import dense
from embedsearch.retrieval.settings import SearchSettings

# Queries a reader of the bundled NeurIPS 2026 corpus would type, each with at least one paper about it.
ON_TOPIC = ["discrete diffusion language models", "vision-language-action models for robot manipulation",
            "calibrated uncertainty for LLM question answering", "Bayesian optimization of molecules",
            "watermarking language model outputs", "spiking neural networks for energy-efficient LLMs",
            "multi-agent LLM systems", "kernelized bandits in adversarial environments",
            "federated learning with shared parameter blocks", "video world models trained without action labels",
            "temporal action localization in untrimmed videos", "causal discovery from interventions",
            "active learning sample selection", "online bilevel optimization regret",
            "pixel-space diffusion for image generation", "process reward models for agents",
            "4D reconstruction and point tracking", "finetuning LLMs on documents that negate claims",
            "emotional support dialogue systems", "compressible multiphase flow simulation with neural networks"]
# Queries with no answer in that corpus: everyday needs, other sciences, nonsense.
OFF_TOPIC = ["zzzqqq xyzzy", "chocolate cake recipe", "best hiking trails in Scotland", "medieval French poetry",
             "how to repair a bicycle puncture", "football transfer rumours", "tax return deadline",
             "coral reef bleaching", "the history of the Roman empire", "knitting patterns for beginners",
             "jazz piano chords", "wedding dress shopping", "volcano eruption in Iceland", "dog training tips",
             "symptoms of the flu", "used car prices", "opera tickets in Vienna", "gardening in clay soil",
             "asdf qwer", "train timetable London to Paris"]


def top1(index: Index, queries: list[str]) -> np.ndarray:
    vectors = index.snapshot.encoder.encode(queries)
    return np.asarray([ranked[0][1] for ranked in dense(index.snapshot, vectors, 1)])


def quantiles(values: np.ndarray) -> list[str]:
    return [f"{np.percentile(values, q):.3f}" for q in (5, 25, 50, 75, 95)]


def main() -> None:
    bundled = Index.bundled()
    scifact = load_beir(SHARED / "eval" / "scifact")
    with tempfile.TemporaryDirectory() as tmp:
        index = Index.build(scifact.documents, Path(tmp) / "scifact", progress=True)
        qids = list(scifact.queries)
        vectors = index.snapshot.encoder.encode([scifact.queries[q] for q in qids])
        row_of = index.documents.row_of
        relevant, retrieved_other, best_relevant, best_other = [], [], [], []
        for qid, vector, ranked in zip(qids, vectors, dense(index.snapshot, vectors, 10)):
            judged = scifact.qrels[qid]
            relevant += [float(index.embeddings[row_of[d]] @ vector) for d in judged]
            ids = index.documents.ids
            retrieved_other += [s for r, s in ranked if ids[r] not in judged]
            (best_relevant if ids[ranked[0][0]] in judged else best_other).append(ranked[0][1])
        biomedical = np.asarray(index.embeddings[:1000], dtype=np.float32)
        off_field = np.asarray([ranked[0][1] for ranked in dense(bundled.snapshot, biomedical, 1)])
    groups = {
        "bundled: best hit, on-topic queries (20)": top1(bundled, ON_TOPIC),
        "bundled: best hit, off-topic queries (20)": top1(bundled, OFF_TOPIC),
        "bundled: best hit, SciFact claims (300, no answer here)": top1(bundled, [scifact.queries[q] for q in qids]),
        "SciFact: relevant pairs": np.asarray(relevant),
        "SciFact: retrieved top-10, not relevant": np.asarray(retrieved_other),
        "SciFact: best hit when it is relevant": np.asarray(best_relevant),
        "SciFact: best hit when it is not": np.asarray(best_other),
    }
    settings = SearchSettings()
    rows = [[name, len(v), *quantiles(v), f"{np.mean(v >= settings.related_cosine):.0%}",
             f"{np.mean(v >= settings.close_cosine):.0%}"] for name, v in groups.items()]
    print(table(["query to abstract", "n", "p5", "p25", "p50", "p75", "p95", f">= related {settings.related_cosine}",
                 f">= close {settings.close_cosine}"], rows))
    papers = {**paper_neighbours(bundled),
              "bundled: best hit for a SciFact abstract (1,000; biomedicine, no answer here)": off_field}
    rows = [[name, len(v), *quantiles(v), f"{np.mean(v >= settings.similar_related_cosine):.0%}",
             f"{np.mean(v >= settings.similar_close_cosine):.0%}"] for name, v in papers.items()]
    print(table(["abstract to abstract", "n", "p5", "p25", "p50", "p75", "p95",
                 f">= related {settings.similar_related_cosine}", f">= close {settings.similar_close_cosine}"], rows))
    save("score_bands", {name: v.tolist() for name, v in {**groups, **papers}.items()})


def paper_neighbours(bundled: Index) -> dict[str, np.ndarray]:
    """Cosines between an abstract and its 5 nearest others: arXiv-2000 split by whether they share the
    archive (hep-ph, math.CO...), and the bundled corpus."""
    import json

    from embedsearch.corpus import read_sources

    arxiv = SHARED / "eval" / "arxiv" / "arxiv_kaggle_0704_2000.jsonl"
    label = {json.loads(line)["id"]: json.loads(line)["label"] for line in arxiv.open()}
    with tempfile.TemporaryDirectory() as tmp:
        index = Index.build(read_sources([arxiv]).documents, Path(tmp) / "arxiv", progress=True)
        ids, vectors = index.documents.ids, np.asarray(index.embeddings, dtype=np.float32)
        same, other = [], []
        for row, ranked in enumerate(dense(index.snapshot, vectors, 5, exclude=list(range(len(ids))))):
            for r, cosine in ranked:
                (same if label[ids[r]] == label[ids[row]] else other).append(cosine)
    vectors = np.asarray(bundled.embeddings, dtype=np.float32)
    nearest = dense(bundled.snapshot, vectors, 5, exclude=list(range(len(bundled))))
    return {"arXiv-2000: 5 nearest, same archive": np.asarray(same),
            "arXiv-2000: 5 nearest, another archive": np.asarray(other),
            "bundled: 5 nearest of each abstract": np.asarray([c for ranked in nearest for _, c in ranked])}


if __name__ == "__main__":
    main()
