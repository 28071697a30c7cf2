"""Topic quality and speed: our topics vs BERTopic (default settings) on the same embeddings, on 2,000
labelled arXiv abstracts; the numba disk cache measured in fresh processes; the bundled corpus.

Run: .venv/bin/python -m benchmarks.topics_bench   (about 5 minutes on 2 cores; needs `pip install bertopic`)
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.common import SHARED, save, table

ARXIV = SHARED / "eval" / "arxiv" / "arxiv_kaggle_0704_2000.jsonl"

OURS = """
import json, sys, time
start = time.perf_counter()
from embedsearch import Index
from embedsearch.topics import TopicSettings
index = Index.load(sys.argv[1])
model = index.topics(TopicSettings(assign_outliers=sys.argv[2] == "assign"))
print(json.dumps({"seconds": time.perf_counter() - start, "assignments": list(model.assignments[0]),
                  "ids": list(model.ids), "topics": len(model.topics()), "levels": len(model.levels),
                  "labels": [t.label for t in model.topics()]}))
"""

BERTOPIC = """
import json, sys, time
import numpy as np
start = time.perf_counter()
from bertopic import BERTopic
texts = json.load(open(sys.argv[1])); emb = np.load(sys.argv[2])
topics, _ = BERTopic().fit_transform(texts, emb)
print(json.dumps({"seconds": time.perf_counter() - start, "assignments": [int(t) for t in topics]}))
"""


def fresh(code: str, *args: str, numba_dir: str | None = None) -> dict:
    env = os.environ.copy()
    if numba_dir:
        env["NUMBA_CACHE_DIR"] = numba_dir
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env)
    if out.returncode:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def scores(truth: list[str], assigned: list[int]) -> dict:
    from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

    return {"nmi": normalized_mutual_info_score(truth, assigned), "ari": adjusted_rand_score(truth, assigned),
            "unassigned": float(np.mean(np.asarray(assigned) < 0)), "topics": len(set(assigned) - {-1})}


def main() -> None:
    from embedsearch import Index
    from embedsearch.corpus import read_sources

    work = Path(tempfile.mkdtemp(prefix="topics-bench-"))
    docs = read_sources([ARXIV]).documents
    truth = {json.loads(line)["id"]: json.loads(line)["label"] for line in ARXIV.open()}
    index = Index.build(docs, work / "arxiv", progress=True)
    labels = [truth[d.id] for d in docs]
    numba_dir = str(work / "numba")
    rows = []

    def ours(note: str, mode: str = "keep") -> dict:
        shutil.rmtree(index.path / "topics", ignore_errors=True)
        result = fresh(OURS, str(index.path), mode, numba_dir=numba_dir)
        s = scores(labels, result["assignments"])
        rows.append([f"embedsearch topics{' --assign-outliers' if mode == 'assign' else ''} ({note})",
                     f"{s['nmi']:.3f}", f"{s['ari']:.3f}", f"{s['unassigned']:.1%}", s["topics"],
                     f"{result['seconds']:.1f} s"])
        print(rows[-1], flush=True)
        return result

    first = ours("fresh process, empty numba cache")
    ours("fresh process, numba cache filled")
    ours("fresh process, numba cache filled", "assign")
    texts_file, emb_file = work / "texts.json", work / "emb.npy"
    texts_file.write_text(json.dumps([d.embed_text for d in docs]))
    np.save(emb_file, np.asarray(index.embeddings))
    bt = fresh(BERTOPIC, str(texts_file), str(emb_file))
    s = scores(labels, bt["assignments"])
    rows.append(["BERTopic, default settings, same embeddings (fresh process)", f"{s['nmi']:.3f}", f"{s['ari']:.3f}",
                 f"{s['unassigned']:.1%}", s["topics"], f"{bt['seconds']:.1f} s"])
    rows.extend(baselines(np.asarray(index.embeddings), labels))

    bundled = Index.bundled()
    shutil.rmtree(bundled.path / "topics", ignore_errors=True)
    start = time.perf_counter()
    model = bundled.topics()
    bundled_rows = [[t.id, t.size, t.label] for t in model.topics()]
    summary = (f"{len(model.topics())} topics, {len(model.unassigned())} of {len(bundled)} unassigned "
               f"({len(model.unassigned()) / len(bundled):.0%}), {len(model.levels)} levels, "
               f"{time.perf_counter() - start:.1f} s in this process")
    print("\n## 2,000 arXiv abstracts (18 labelled archives), all papers scored (unassigned = one more cluster)\n")
    print(table(["system", "NMI", "ARI", "unassigned", "topics", "wall time"], rows))
    print(f"\nour labels: {first['labels'][:8]}")
    print("\n## Bundled NeurIPS 2026 corpus\n")
    print(summary + "\n")
    print(table(["topic", "papers", "label"], bundled_rows))
    save("topics_bench", {"rows": rows, "bundled": bundled_rows, "summary": summary})


def baselines(embeddings: np.ndarray, labels: list[str]) -> list:
    import hdbscan
    import umap
    from sklearn.cluster import KMeans

    out = []
    start = time.perf_counter()
    reduced = umap.UMAP(n_components=5, n_neighbors=15, min_dist=0.0, metric="cosine", random_state=42).fit_transform(
        embeddings)
    assigned = hdbscan.HDBSCAN(min_cluster_size=15).fit_predict(reduced)
    s = scores(labels, assigned.tolist())
    out.append(["plain UMAP(5-d) + HDBSCAN(min_cluster_size=15)", f"{s['nmi']:.3f}", f"{s['ari']:.3f}",
                f"{s['unassigned']:.1%}", s["topics"], f"{time.perf_counter() - start:.1f} s (numba warm)"])
    start = time.perf_counter()
    assigned = KMeans(n_clusters=18, n_init=10, random_state=0).fit_predict(embeddings)
    s = scores(labels, assigned.tolist())
    out.append(["k-means, k=18 (told the true count)", f"{s['nmi']:.3f}", f"{s['ari']:.3f}", "0.0%", 18,
                f"{time.perf_counter() - start:.1f} s"])
    return out


if __name__ == "__main__":
    main()
