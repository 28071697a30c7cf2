"""Topic labels before and after issue #22: the first three c-TF-IDF keywords of the raw text (before), and
three key phrases chosen by meaning and for diversity among 15 candidates with LaTeX dropped (after), for
the same fitted topics of the bundled corpus and of arXiv-2000 (whose labelled archive is shown beside).

Run: .venv/bin/python benchmarks/topic_labels_bench.py   (arXiv-2000 is embedded once, about 2 minutes)
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import SHARED, table  # noqa: E402

from embedsearch import Index  # noqa: E402
from embedsearch.corpus import read_sources  # noqa: E402
from embedsearch.topics.labels import keywords, label  # noqa: E402

ARXIV = SHARED / "eval" / "arxiv" / "arxiv_kaggle_0704_2000.jsonl"


def rows(index: Index, archive: dict[str, str] | None = None) -> list[list]:
    model = index.topics()
    assigned = np.asarray(model.assignments[0])
    before = keywords([d.embed_text for d in index.documents], assigned, [t.id for t in model.topics()], markup=True)
    out = []
    for topic in model.topics():
        row = [topic.id, topic.size, label(before[topic.id]), topic.label]
        if archive is not None:
            common, count = Counter(archive[m] for m in topic.members).most_common(1)[0]
            row.append(f"{common} ({count / topic.size:.0%})")
        out.append(row)
    return out


def main() -> None:
    print("Bundled corpus (57 NeurIPS 2026 abstracts)\n")
    print(table(["topic", "papers", "before (c-TF-IDF)", "after (by meaning, diverse)"], rows(Index.bundled())))
    archive = {json.loads(line)["id"]: json.loads(line)["label"] for line in ARXIV.open()}
    with tempfile.TemporaryDirectory() as tmp:
        index = Index.build(read_sources([ARXIV]).documents, Path(tmp) / "arxiv")
        print("\narXiv-2000 (labelled archives)\n")
        print(table(["topic", "papers", "before (c-TF-IDF)", "after (by meaning, diverse)", "main archive"],
                    rows(index, archive)))


if __name__ == "__main__":
    main()
