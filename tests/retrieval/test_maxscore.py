"""MaxScore's top k is the exhaustive one (the same rows, scores to the bit, ties by row) over segments
with deletions, filters and a shard's corpus statistics, on a corpus with frequent and rare words where the
pruning skips most postings, with numpy's posting loops and with the compiled ones."""

from __future__ import annotations

import numpy as np
import pytest

from embedsearch.corpus import Document
from embedsearch.retrieval import maxscore
from embedsearch.retrieval.bm25 import CorpusStats, SegmentedBM25
from embedsearch.retrieval.maxscore import top
from embedsearch.store import lexical as lex
from embedsearch.store.settings import LexicalSettings

WORDS = [f"w{i}x" for i in range(400)]


def corpus(start: int, count: int, rng: np.random.Generator) -> list[Document]:
    """Zipf-like texts: a few words in most documents, most words in few; some documents repeat words."""
    weights = 1 / np.arange(1, len(WORDS) + 1) ** 1.1
    weights /= weights.sum()
    return [Document(f"d{n}", " ".join(rng.choice(WORDS, int(rng.integers(3, 40)), p=weights)))
            for n in range(start, start + count)]


@pytest.fixture(scope="module")
def segments(tmp_path_factory):
    rng = np.random.default_rng(11)
    root = tmp_path_factory.mktemp("maxscore")
    parts = []
    for s, (start, count) in enumerate([(0, 3_000), (3_000, 1_500), (4_500, 400)]):
        folder = root / str(s)
        folder.mkdir()
        lex.build(corpus(start, count, rng), folder)
        live = None if s == 1 else rng.random(count) > 0.1  # segments 0 and 2 have deletions
        parts.append((lex.Postings(folder), live))
    return SegmentedBM25(parts, LexicalSettings()), rng


def queries(rng: np.random.Generator, n: int) -> list[str]:
    out = []
    for _ in range(n):
        common = rng.choice(WORDS[:8], int(rng.integers(1, 4))).tolist()
        rare = rng.choice(WORDS[8:], int(rng.integers(0, 5))).tolist()
        out.append(" ".join(common + rare + (common[:1] if rng.random() < 0.3 else [])))
    return out


def top_lexical(scores: np.ndarray, k: int, allowed: np.ndarray | None = None) -> list[tuple[int, float]]:
    """The exhaustive answer: every live row scored, the best ``k`` that match, ties by row."""
    rows = np.flatnonzero((scores > 0) & (True if allowed is None else allowed))
    rows = rows[np.lexsort((rows, -scores[rows]))][:k]
    return [(int(r), float(scores[r])) for r in rows]


def same(got: list[tuple[int, float]], want: list[tuple[int, float]]) -> bool:
    return [r for r, _ in got] == [r for r, _ in want] and [s for _, s in got] == [s for _, s in want]


@pytest.mark.parametrize("compiled", [False, True], ids=["numpy", "compiled"])
@pytest.mark.parametrize("k", [1, 10, 100, 5_000])
def test_the_top_k_is_the_exhaustive_one(segments, k, compiled):
    bm25, rng = segments
    for query in queries(np.random.default_rng(k), 40):
        assert same(top(bm25, query, k, compiled=compiled), top_lexical(bm25.scores(query), k)), query


@pytest.mark.parametrize("compiled", [False, True], ids=["numpy", "compiled"])
def test_filters_and_a_shards_statistics_are_honoured(segments, compiled):
    bm25, _ = segments
    rng = np.random.default_rng(5)
    corpus_stats = bm25.stats("w0x w1x w2x w3x w20x w40x w90x")
    larger = CorpusStats(corpus_stats.documents * 3, corpus_stats.length * 3,
                             {t: d * 2 + 7 for t, d in corpus_stats.df.items()})
    for query in queries(rng, 30):
        allowed = rng.random(bm25.live) > 0.5
        assert same(top(bm25, query, 10, allowed=allowed, compiled=compiled),
                    top_lexical(bm25.scores(query), 10, allowed)), query
        assert same(top(bm25, query, 10, larger, compiled=compiled),
                    top_lexical(bm25.scores(query, larger), 10)), query


def test_unknown_words_give_nothing_and_rows_score_as_in_the_full_vector(segments):
    bm25, _ = segments
    assert top(bm25, "zzzunknown", 10) == []
    rows = np.asarray([0, 5, 2_699, 2_700, 4_000, bm25.live - 1])
    query = "w0x w3x w77x w3x"
    assert np.array_equal(bm25.score_rows(query, rows), bm25.scores(query)[rows])


def test_both_loops_prune_to_the_same_few_survivors(segments, monkeypatch):
    """The k-th best partial score is exact after every term in both loops, so both leave the same rows
    to re-score, and far fewer than the documents that hold a query word."""
    bm25, _ = segments
    rescored: list[np.ndarray] = []
    score_rows = SegmentedBM25.score_rows
    monkeypatch.setattr(SegmentedBM25, "score_rows", lambda self, q, rows, *a: rescored.append(rows) or
                        score_rows(self, q, rows, *a))
    for query in queries(np.random.default_rng(3), 30):
        for compiled in (False, True):
            top(bm25, query, 10, compiled=compiled)
        numpy_rows, compiled_rows = rescored[-2:]
        assert np.array_equal(numpy_rows, compiled_rows), query
        assert len(numpy_rows) < 0.2 * np.count_nonzero(bm25.scores(query)), query


@pytest.mark.parametrize("compiled", [False, True], ids=["numpy", "compiled"])
def test_the_kth_best_partial_score_is_exact_after_every_term(segments, monkeypatch, compiled):
    """The bound the pruning rests on: after each term, the k-th best partial score among the documents
    that may be answers, whatever the segment, as if every partial score had been pooled and sorted."""
    bm25, _ = segments
    update, checked = maxscore._Leaders.update, []

    def exact(self, parts, touched):
        got = update(self, parts, touched)
        pooled = np.concatenate([p.partial[(p.partial > 0) & (p.eligible if len(p.eligible) else True)]
                                 for p in parts])
        checked.append(got == (np.sort(pooled)[-self.k] if len(pooled) >= self.k else 0.0))
        return got

    monkeypatch.setattr(maxscore._Leaders, "update", exact)
    rng = np.random.default_rng(8)
    for query in queries(rng, 20):
        top(bm25, query, 10, allowed=rng.random(bm25.live) > 0.3, compiled=compiled)
    assert len(checked) > 40 and all(checked)
