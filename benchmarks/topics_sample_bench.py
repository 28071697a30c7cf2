"""Topics fitted on a sample and assigned to the rest vs a full fit, on the 2,000 labelled arXiv
abstracts: NMI/ARI against the labels, agreement with the full fit, and the run-to-run agreement of
two full fits with different seeds for scale.

    python -m benchmarks.topics_sample_bench
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.common import save, table
from benchmarks.topics_bench import ARXIV, scores


def main() -> None:
    from sklearn.metrics import adjusted_rand_score

    from embedsearch import Index
    from embedsearch.corpus import read_sources
    from embedsearch.topics import TopicSettings

    docs = read_sources([ARXIV]).documents
    truth = {json.loads(line)["id"]: json.loads(line)["label"] for line in ARXIV.open()}
    labels = [truth[d.id] for d in docs]
    index = Index.build(docs, Path(tempfile.mkdtemp(prefix="topics-sample-")) / "arxiv", progress=True)
    runs = {}
    rows = []
    for name, settings in [("full fit, seed 42", TopicSettings()), ("full fit, seed 7", TopicSettings(seed=7)),
                           ("fit on 1,000 + assign 1,000, seed 42", TopicSettings(sample=1000)),
                           ("fit on 1,000 + assign 1,000, seed 7", TopicSettings(sample=1000, seed=7)),
                           ("fit on 500 + assign 1,500, seed 42", TopicSettings(sample=500))]:
        shutil.rmtree(index.path / "topics", ignore_errors=True)
        start = time.perf_counter()
        assigned = np.array(index.topics(settings).assignments[0])
        seconds = time.perf_counter() - start
        runs[name] = assigned
        s = scores(labels, assigned.tolist())
        agree = adjusted_rand_score(runs["full fit, seed 42"], assigned)
        rows.append([name, f"{s['nmi']:.3f}", f"{s['ari']:.3f}", f"{s['unassigned']:.1%}", s["topics"],
                     f"{agree:.3f}", f"{seconds:.1f} s"])
    print(f"\n## {ARXIV.name}: sample fit vs full fit\n")
    print(table(["fit", "NMI", "ARI", "unassigned", "topics", "ARI vs full fit (seed 42)", "wall time"], rows))
    save("topics_sample_bench", {"rows": rows})


if __name__ == "__main__":
    main()
