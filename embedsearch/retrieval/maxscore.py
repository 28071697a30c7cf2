"""The exact BM25 top k without scoring every posting: MaxScore (Turtle & Flood, 1995; Lucene's
``MaxScoreBulkScorer``). A term adds less than its idf to any document, so once the k-th best partial score
of the documents seen reaches the summed idf of the terms not yet read, no unseen document can enter the
top k. Terms are read rarest first, whole, until that holds; the frequent rest are only looked up for the
documents still in the running (a binary search each into their postings), and a document leaves the
running as soon as its partial score plus what is left falls below the k-th best. The survivors are scored
as ``SegmentedBM25.scores`` scores them, so the answer is the exhaustive one, ties included.

The k-th best partial score is kept exact at every step from the k best so far and the documents the last
term touched (a document no term touched since keeps its score, so it can only fall in rank); the posting
loops themselves are in ``postings_loops``."""

from __future__ import annotations

import numpy as np

from . import postings_loops as loops
from .bm25 import CorpusStats, SegmentedBM25, Weighted

MARGIN = 1e-5  # relative slack on every bound, well above float32 rounding over a query's terms
EXHAUSTIVE_BELOW = 20_000  # live documents under which scoring every posting costs less than MaxScore's rounds
_NONE = np.zeros(0, dtype=bool)


class _Segment:
    """One segment's partial scores (by physical row), and which rows may be answers (live and allowed)."""

    def __init__(self, bm25: SegmentedBM25, s: int, allowed: np.ndarray | None, compiled: bool):
        self.bm25, (self.postings, live) = bm25, bm25.parts[s]
        self.offset, physical, self.renumber = int(bm25.offsets[s]), bm25.physical[s], bm25.renumber[s]
        self.lengths = np.asarray(self.postings.lengths)
        size = len(self.lengths)
        self.partial = np.zeros(size, dtype=np.float64)
        self.eligible = _NONE if live is None else live
        if allowed is not None:
            self.eligible = np.zeros(size, dtype=bool)
            self.eligible[slice(None) if physical is None else physical] = allowed[self.offset:int(bm25.offsets[s + 1])]
        self.running: np.ndarray | None = None
        self._read = loops.read_compiled if compiled else loops.read_numpy
        self._running = loops.running_compiled if compiled else loops.running_numpy
        self._look_up = loops.look_up_compiled if compiled else loops.look_up_numpy

    def scoring(self, idf: float, average: float) -> loops.Scoring:
        return loops.Scoring(self.bm25.settings.k1, self.bm25.settings.b, average, idf)

    def read(self, token: str, idf: float, average: float, k: int) -> loops.Best:
        """Add the term's score to every document holding it; the k best eligible ones it touched."""
        rows, tf = self.postings.term(token)
        return self._read(rows, tf, self.lengths, self.scoring(idf, average), self.partial, self.eligible, k)

    def look_up(self, token: str, idf: float, average: float, k: int, floor: float) -> loops.Best:
        """Drop the running documents below ``floor``; add the term's score to those left that hold it."""
        held, tf = self.postings.term(token)
        self.running, best = self._look_up(self.running, floor, held, tf, self.lengths,
                                           self.scoring(idf, average), self.partial, k)
        return best

    def run(self, floor: float) -> None:
        """Fix the running documents: those seen and eligible, from ``floor`` up."""
        self.running = self._running(self.partial, self.eligible, floor)

    def keep(self, floor: float) -> None:
        self.running = self.running[self.partial[self.running] >= floor]

    def live_rows(self) -> np.ndarray:
        return self.offset + (self.running if self.renumber is None else self.renumber[self.running])


class _Leaders:
    """The k best partial scores among eligible documents, as (segment, row) pairs: exact after each term,
    since a document the term did not touch kept its score and the k best before."""

    def __init__(self, k: int):
        self.k = k
        self.segment, self.rows = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)

    def update(self, segments: list[_Segment], touched: list[loops.Best]) -> float:
        """Take in what a term touched; the k-th best partial score (0 while fewer than k documents)."""
        segment = np.concatenate([self.segment] + [np.full(len(b.rows), s) for s, b in enumerate(touched)])
        rows = np.concatenate([self.rows] + [b.rows for b in touched])
        key = np.unique(segment << 32 | rows)
        segment, rows = key >> 32, key & 0xFFFFFFFF
        values = np.asarray([segments[s].partial[r] for s, r in zip(segment.tolist(), rows.tolist())])
        if len(values) > self.k:
            keep = np.argpartition(values, len(values) - self.k)[len(values) - self.k:]
            segment, rows, values = segment[keep], rows[keep], values[keep]
        self.segment, self.rows = segment, rows
        return float(values.min()) if len(values) >= self.k else 0.0


def _compiled(bm25: SegmentedBM25, tokens: list[str]) -> bool:
    """Whether the query reads enough postings for the compiled loops."""
    reads = 0
    for postings, _ in bm25.parts:
        for token in tokens:
            term = postings.vocab.get(token)
            if term is not None:
                reads += int(postings.indptr[term + 1] - postings.indptr[term])
    return reads > loops.COMPILED_FROM


def top(bm25: SegmentedBM25, query: str, k: int, corpus: CorpusStats | None = None,
        allowed: np.ndarray | None = None, weighted: Weighted | None = None,
        compiled: bool | None = None) -> list[tuple[int, float]]:
    """``top_lexical(bm25.scores(query, corpus), k, allowed)``, reading far fewer postings: the ``k`` best
    ``(live row, score)``, rows that match no term (or are not ``allowed``) left out, ties by row
    (``weighted``: ``bm25.weights(query, corpus)`` where the caller has it; ``compiled``: which posting
    loops, by default every posting scored in numpy below ``EXHAUSTIVE_BELOW`` live documents, where
    MaxScore's bookkeeping costs more than it saves, else the compiled ones where the query reads many)."""
    if compiled is None and bm25.live < EXHAUSTIVE_BELOW:
        from .fusion import top_lexical

        return top_lexical(bm25.scores(query, corpus), k, allowed)
    weighted = weighted or bm25.weights(query, corpus)
    weights, average = weighted
    if k < 1 or not weights:
        return []
    bounds: dict[str, float] = {}
    for token, idf in weights:
        bounds[token] = bounds.get(token, 0.0) + idf
    order = sorted(bounds, key=lambda t: (-bounds[t], t))
    compiled = _compiled(bm25, order) if compiled is None else compiled
    segments = [_Segment(bm25, s, allowed, compiled) for s in range(len(bm25.parts))]
    leaders = _Leaders(k)
    left = sum(bounds.values()) * (1 + MARGIN)
    threshold, read = 0.0, 0
    while read < len(order) and not (threshold > 0 and left < threshold):
        token = order[read]
        threshold = leaders.update(segments, [s.read(token, bounds[token], average, k) for s in segments])
        left -= bounds[token] * (1 + MARGIN)
        read += 1
    for segment in segments:
        segment.run(threshold * (1 - MARGIN) - left)
    for token in order[read:]:
        floor = threshold * (1 - MARGIN) - left
        threshold = max(threshold, leaders.update(
            segments, [s.look_up(token, bounds[token], average, k, floor) for s in segments]))
        left -= bounds[token] * (1 + MARGIN)
    for segment in segments:
        segment.keep(threshold * (1 - MARGIN) - max(left, 0.0))
    rows = np.sort(np.concatenate([s.live_rows() for s in segments]))
    scores = bm25.score_rows(query, rows, corpus, weighted)
    best = np.lexsort((rows, -scores))[:k]
    return [(int(rows[i]), float(scores[i])) for i in best if scores[i] > 0]
