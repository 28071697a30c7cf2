"""Streamed merges: vectors and postings of the live rows come out as a fresh build would write them, whatever
the buffer, and the buffer bounds what a merge holds (numpy's allocations are traced); a merged IVF index stays
IVF; `compact` stops at `max_segment_rows` a segment."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from segment_worker import make_docs

from embedsearch import Index
from embedsearch.corpus import Document
from embedsearch.retrieval.bm25 import SegmentedBM25
from embedsearch.retrieval.dense import dense
from embedsearch.store import lexical as lex
from embedsearch.store.merge_streams import copy_live_rows, merge_postings
from embedsearch.store.settings import LexicalSettings, MergePolicy, StoreSettings, VectorSettings

SETTINGS = LexicalSettings()


def corpus(count: int, words: int = 400, seed: int = 0) -> list[Document]:
    rng = np.random.default_rng(seed)
    vocabulary = [f"t{i}q" for i in range(words)]
    return [Document(f"d{seed}-{i}", " ".join(rng.choice(vocabulary, int(rng.integers(3, 40))))) for i in range(count)]


def segments(tmp_path: Path, parts: list[list[Document]], deleted: list[list[int]]):
    """Each part as a segment folder holding postings, and its live mask (None where nothing is deleted)."""
    out = []
    for number, (docs, gone) in enumerate(zip(parts, deleted)):
        folder = tmp_path / f"s{number}"
        folder.mkdir()
        lex.build(docs, folder, SETTINGS)
        live = None
        if gone:
            live = np.ones(len(docs), dtype=bool)
            live[gone] = False
        out.append((folder, live))
    return out


def postings_by_term(folder: Path) -> dict[str, tuple[list[int], list[float]]]:
    postings = lex.Postings(folder)
    found = {term: tuple(map(list, postings.term(term))) for term in postings.vocab}
    return {term: value for term, value in found.items() if value[0]}


@pytest.mark.parametrize("budget", [2_000, 1 << 20], ids=["tiny-buffer", "roomy-buffer"])
def test_merged_postings_equal_a_fresh_build_of_the_live_documents(tmp_path, budget):
    parts = [corpus(300, seed=1), corpus(200, 600, seed=2), corpus(250, seed=3)]
    deleted = [[0, 5, 299], [], list(range(0, 200, 3))]
    sources = segments(tmp_path, parts, deleted)
    merged = tmp_path / "merged"
    merged.mkdir()
    merge_postings(sources, merged, SETTINGS, budget)
    kept = [d for docs, gone in zip(parts, deleted) for i, d in enumerate(docs) if i not in set(gone)]
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    lex.build(kept, fresh, SETTINGS)
    assert postings_by_term(merged) == postings_by_term(fresh)
    np.testing.assert_array_equal(lex.Postings(merged).lengths, lex.Postings(fresh).lengths)
    one = SegmentedBM25([(lex.Postings(merged), None)], SETTINGS)
    reference = SegmentedBM25([(lex.Postings(fresh), None)], SETTINGS)
    for query in ["t1q t7q", "t450q t3q t3q", "t599q", "absent"]:
        np.testing.assert_allclose(one.scores(query), reference.scores(query), rtol=1e-6)


def test_live_rows_are_copied_in_order_whatever_the_buffer(tmp_path):
    rng = np.random.default_rng(0)
    matrices = [rng.normal(size=(n, 16)).astype(np.float32) for n in (50, 7, 30)]
    masks = [None, np.array([True, False] * 3 + [True]), rng.random(30) > 0.5]
    files = []
    for number, matrix in enumerate(matrices):
        files.append(tmp_path / f"m{number}.npy")
        np.save(files[-1], matrix)
    for budget in (300, 1 << 20):
        target = tmp_path / f"out-{budget}.npy"
        rows = copy_live_rows(list(zip(files, masks)), target, budget)
        expected = np.concatenate([m if live is None else m[live] for m, live in zip(matrices, masks)])
        assert rows == len(expected)
        np.testing.assert_array_equal(np.load(target), expected)


def test_the_buffer_bounds_what_a_merge_holds(tmp_path):
    """Over 900,000 postings and 30 MB of vectors, a 256 KB buffer keeps numpy's peak far below either whole:
    concatenating them, as merges once did, holds every posting and vector at once."""
    parts = [corpus(12_000, words=300, seed=s) for s in range(4)]
    sources = segments(tmp_path, parts, [[1, 2, 3], [], [10], []])
    total_postings = sum(len(lex.Postings(folder).rows) for folder, _ in sources)
    assert total_postings > 900_000
    vectors = []
    for number, (folder, _) in enumerate(sources):
        vectors.append(folder / "embeddings.npy")
        np.save(vectors[-1], np.random.default_rng(number).normal(size=(12_000, 160)).astype(np.float32))
    budget = 256 << 10
    merged = tmp_path / "merged"
    merged.mkdir()
    tracemalloc.start()
    try:
        merge_postings(sources, merged, SETTINGS, budget)
        _, postings_peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        copy_live_rows([(file, live) for file, (_, live) in zip(vectors, sources)], tmp_path / "merged.npy", budget)
        _, vectors_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    rows = sum(len(d) for d in parts)
    assert postings_peak < 8 * budget + 40 * rows, (postings_peak, total_postings * 8)
    assert vectors_peak < 4 * budget, vectors_peak
    live_postings = sum(len(lex.Postings(f).rows) if live is None else int(live[lex.Postings(f).rows].sum())
                        for f, live in sources)
    assert len(lex.Postings(merged).rows) == live_postings


@pytest.fixture(scope="module")
def model_entry(bundled_index):
    return bundled_index.manifest.model


def test_a_merge_keeps_an_index_grown_to_ivf_on_ivf(tmp_path, model_entry):
    """1,000 rows less ten are below the IVF threshold here, but the merge shares the index's quantizer
    instead of building an HNSW graph that holds every vector in memory."""
    docs, vectors = make_docs(0, 1_000)
    small = VectorSettings(exact_below=100, compress_above=1_000)
    index = Index.from_embeddings(docs, vectors, tmp_path / "idx", model_entry, vectors=small)
    assert [s.index_type for s in index.snapshot.segments] == ["ivfpq"]
    index.remove([f"p{i}" for i in range(10)])
    index.compact()
    assert [(s.index_type, s.rows) for s in index.snapshot.segments] == [("ivfpq", 990)]
    fresh = Index.from_embeddings(docs[10:], vectors[10:], tmp_path / "fresh", model_entry, vectors=small)
    assert fresh.snapshot.segments[0].index_type == "hnsw"  # what the size alone chooses
    query = vectors[500:501]
    assert [r for r, _ in dense(index.snapshot, query, 5)[0]][:1] == [490]


def test_compact_stops_at_max_segment_rows_and_commits_each_merge(tmp_path, model_entry):
    """Each run is its own commit, and what it replaced goes at once (no grace here): a crash loses one
    merge, and a 10M compaction never needs the disk for two copies of the index."""
    storage = StoreSettings(merge=MergePolicy(segments_per_tier=1_000), max_segment_rows=25, grace_seconds=0)
    docs, vectors = make_docs(0, 10)
    index = Index.from_embeddings(docs, vectors, tmp_path / "idx", model_entry, storage=storage)
    for start in range(10, 50, 10):
        index.add_embedded(*make_docs(start, 10))
    index.remove(["p3", "p44"])
    before = [h.id for h in index.search("w3x1 w5x2", 20, mode="lexical")]
    generation = index.generation
    index.compact()
    assert [s.rows for s in index.snapshot.segments] == [19, 20, 9] and index.generation == generation + 3
    assert sorted(p.name for p in (index.path / "segments").iterdir()) == sorted(s.name for s in index.snapshot.segments)
    assert [h.id for h in index.search("w3x1 w5x2", 20, mode="lexical")] == before
    assert index.check(deep=True) == [] and len(index) == 48


def test_each_run_of_a_compaction_reads_what_the_previous_one_left(tmp_path, model_entry):
    """No grace period: the first run's sources are gone when the second merges, and the second still
    shares the index's quantizer (read from a segment that exists)."""
    docs, vectors = make_docs(0, 1_000)
    storage = StoreSettings(merge=MergePolicy(segments_per_tier=1_000), max_segment_rows=500, grace_seconds=0)
    batches = [(docs[i:i + 250], vectors[i:i + 250]) for i in range(0, 1_000, 250)]
    index = Index.from_batches(batches, tmp_path / "idx", model_entry, 1_000, VectorSettings(index_type="ivfpq"),
                               storage=storage)
    index.remove(["p1", "p700"])
    index.compact()
    assert [(s.index_type, s.rows) for s in index.snapshot.segments] == [("ivfpq", 499), ("ivfpq", 499)]
    assert index.check(deep=True) == [] and dense(index.snapshot, vectors[600:601], 1)[0][0][0] == 599
