"""Topic names before and after (issue 45), beside BERTopic's default representation of the same topics: on the
bundled corpus and on 2,000 labelled arXiv abstracts, each topic of the default fit (finest level) with its
keyword label (the name shown before), its phrase name (now) and BERTopic's default c-TF-IDF words for exactly
those members (BERTopic's manual topic modelling: no UMAP, no HDBSCAN, ``y`` our assignment), and for arXiv the
topic's majority archive as the reader's check.

    pip install --no-deps --target /tmp/bt bertopic==0.17.4    # its other requirements are in the bench venv
    PYTHONPATH=/tmp/bt python -m benchmarks.names_bench        # about 4 minutes (embeds 2,000 abstracts)
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np

from benchmarks.common import SHARED, save, table

ARXIV = SHARED / "eval" / "arxiv" / "arxiv_kaggle_0704_2000.jsonl"


def bertopic_names(texts: list[str], embeddings: np.ndarray, assigned: np.ndarray) -> dict[int, str]:
    """BERTopic's default topic representation (CountVectorizer, c-TF-IDF) of the topics ``assigned`` gives."""
    from bertopic import BERTopic
    from bertopic.cluster import BaseCluster
    from bertopic.dimensionality import BaseDimensionalityReduction

    model = BERTopic(umap_model=BaseDimensionalityReduction(), hdbscan_model=BaseCluster())
    model.fit_transform(texts, embeddings, y=assigned)
    return {t: ", ".join(w for w, _ in model.get_topic(t)[:4]) for t in set(assigned.tolist()) - {-1}}


def rows_of(index, truth: dict[str, str] | None) -> list[list]:
    model = index.topics()
    docs = list(index.documents)
    row_of = {d.id: r for r, d in enumerate(docs)}
    rows = [row_of[i] for i in model.ids]
    texts = [docs[r].embed_text for r in rows]
    emb = np.asarray(index.embeddings)[rows]
    assigned = np.asarray(model.assignments[0])
    theirs = bertopic_names(texts, emb, assigned)
    rows = []
    for t in model.topics():
        row = [t.id, t.size, t.label, t.title, theirs.get(t.id, "")]
        if truth is not None:
            label, count = Counter(truth[m] for m in t.members).most_common(1)[0]
            row.append(f"{label} ({count / t.size:.0%})")
        rows.append(row)
    return rows


def main() -> None:
    from embedsearch import Index
    from embedsearch.corpus import read_sources

    out = {}
    bundled = Index.bundled()
    out["bundled"] = rows_of(bundled, None)
    print("\n## Bundled NeurIPS 2026 corpus\n")
    print(table(["topic", "papers", "before: keyword label", "now: name", "BERTopic default (same topics)"],
                out["bundled"]), flush=True)
    truth = {json.loads(line)["id"]: json.loads(line)["label"] for line in ARXIV.open()}
    with tempfile.TemporaryDirectory() as tmp:
        index = Index.build(read_sources([ARXIV]).documents, Path(tmp) / "arxiv", progress=True)
        out["arxiv"] = rows_of(index, truth)
    print("\n## 2,000 arXiv abstracts\n")
    print(table(["topic", "papers", "before: keyword label", "now: name", "BERTopic default (same topics)",
                 "majority archive"], out["arxiv"]))
    save("names_bench", out)


if __name__ == "__main__":
    main()
