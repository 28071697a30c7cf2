"""A separate process that writes to or reads from an index, for the concurrency and crash tests:

    segment_worker.py add INDEX START COUNT BATCH   add documents START..START+COUNT-1, BATCH per commit,
                                                    printing "committed FIRST LAST" after each commit
    segment_worker.py read INDEX STOPFILE           query in a loop until STOPFILE exists, printing "checked GEN"
                                                    after the first check at each generation; "ok N G" or
                                                    "error ..." at the end
    segment_worker.py hold INDEX SECONDS            hold the writer lock, printing "holding"
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
from embedsearch.retrieval.dense import dense

DIM = 384
WORDS = [f"w{t}x{i}" for t in range(12) for i in range(25)]


def vector_of(doc_id: str) -> np.ndarray:
    """A unit vector fixed by the id, near one of 12 topic centres, so any process can recompute it."""
    number = int(doc_id[1:]) if doc_id[1:].isdigit() else sum(map(ord, doc_id))
    centre = np.random.default_rng(number % 12).normal(size=DIM)
    x = centre + 0.7 * np.random.default_rng(10_000 + number).normal(size=DIM)
    return (x / np.linalg.norm(x)).astype(np.float32)


def make_docs(start: int, count: int):
    """Documents ``p{start}``.. with texts that name their id and use their topic's words."""
    from embedsearch import Document

    docs, vectors = [], []
    for number in range(start, start + count):
        doc_id = f"p{number}"
        rng = np.random.default_rng(number)
        topic = number % 12
        words = rng.choice(WORDS[topic * 25:(topic + 1) * 25], 12).tolist() + rng.choice(WORDS, 4).tolist()
        docs.append(Document(doc_id, f"{doc_id} " + " ".join(words), metadata={"year": 2000 + number % 7}))
        vectors.append(vector_of(doc_id))
    return docs, np.stack(vectors)


def add(path: str, start: int, count: int, batch: int) -> None:
    from embedsearch import Index

    index = Index.load(path)
    index.search("w1x1", 1, mode="lexical")  # imports done before "ready": kills land among the commits
    import faiss  # noqa: F401
    import pyarrow.parquet  # noqa: F401

    print("ready", flush=True)
    for first in range(start, start + count, batch):
        size = min(batch, start + count - first)
        docs, vectors = make_docs(first, size)
        index.add_embedded(docs, vectors)
        print(f"committed {first} {first + size - 1}", flush=True)


def read(path: str, stop: str) -> None:
    """Every answer must come from one generation: ids live in it, texts naming their ids, dense scores equal to
    the cosine recomputed from the id, and the same answer from a fresh open of that generation."""
    from embedsearch import Index

    index = Index.load(path)
    index.search("w3x1", 1, mode="lexical")
    print("ready", flush=True)
    query = vector_of("p999999")[None, :]
    checked, generations = 0, set()
    try:
        while not Path(stop).exists():
            rows = dense(index.snapshot, query, 10)[0]
            docs = index.documents.get([r for r, _ in rows])
            for (row, score), doc in zip(rows, docs):
                assert doc.text.startswith(doc.id + " "), (doc.id, doc.text[:30])
                assert abs(score - float(vector_of(doc.id) @ query[0])) < 1e-4, (doc.id, score)
                assert index.documents.ids[row] == doc.id
            lexical = index.search("w3x1 w3x2", 10, mode="lexical")
            assert all(h.text.startswith(h.id + " ") for h in lexical)
            again = Index.load(path, generation=index.generation)
            assert dense(again.snapshot, query, 10)[0] == rows
            assert [(h.id, h.score) for h in again.search("w3x1 w3x2", 10, mode="lexical")] == \
                [(h.id, h.score) for h in lexical]
            if index.generation not in generations:
                print(f"checked {index.generation}", flush=True)
            generations.add(index.generation)
            checked += 1
            if index.has_newer():
                index.refresh()
    except Exception as exc:  # noqa: BLE001  (report any failure to the test)
        print(f"error after {checked} checks: {type(exc).__name__}: {exc}", flush=True)
        return
    print(f"ok {checked} {len(generations)}", flush=True)


def hold(path: str, seconds: float) -> None:
    from embedsearch.store.lock import writer

    with writer(Path(path), "a test"):
        print("holding", flush=True)
        time.sleep(seconds)


if __name__ == "__main__":
    command, index_path, *rest = sys.argv[1:]
    if command == "add":
        add(index_path, *map(int, rest))
    elif command == "read":
        read(index_path, rest[0])
    else:
        hold(index_path, float(rest[0]))
