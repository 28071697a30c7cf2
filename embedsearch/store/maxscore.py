"""The exact BM25 top k without scoring every posting: MaxScore (Turtle & Flood, 1995; Lucene's
``MaxScoreBulkScorer``). A term adds less than its idf to any document, so once the k-th best partial score
of the documents seen reaches the summed idf of the terms not yet read, no unseen document can enter the
top k. Terms are read rarest first, whole, until that holds; the frequent rest are only looked up for the
documents still in the running (a binary search each into their postings), and a document leaves the
running as soon as its partial score plus what is left falls below the k-th best. The survivors are scored
as ``SegmentedBM25.scores`` scores them, so the answer is the exhaustive one, ties included."""

from __future__ import annotations

import numpy as np

from .bm25 import CorpusStats, SegmentedBM25, Weighted

MARGIN = 1e-5  # relative slack on every bound, well above float32 rounding over a query's terms
LOOKUP_BELOW = 1 / 16  # look a term up for the running documents when they are fewer than this share of its postings


class _Segment:
    """One segment's partial scores (by physical row), and which rows may be answers (live and allowed)."""

    def __init__(self, bm25: SegmentedBM25, s: int, allowed: np.ndarray | None):
        self.bm25, (self.postings, live) = bm25, bm25.parts[s]
        self.offset, physical, self.renumber = int(bm25.offsets[s]), bm25.physical[s], bm25.renumber[s]
        size = len(self.postings.lengths)
        self.partial = np.zeros(size, dtype=np.float64)
        self.eligible = live
        if allowed is not None:
            self.eligible = np.zeros(size, dtype=bool)
            self.eligible[slice(None) if physical is None else physical] = allowed[self.offset:int(bm25.offsets[s + 1])]
        self.seen: list[np.ndarray] = []
        self.running: np.ndarray | None = None

    def read(self, token: str, idf: float, average: float) -> None:
        """Add the term's score to every document holding it."""
        rows, tf = self.postings.term(token)
        if len(rows):
            rows = np.asarray(rows)
            if self.running is None:
                self.seen.append(rows[self.partial[rows] == 0])
            self.partial[rows] += self.bm25.contribution(self.postings, rows, tf, idf, average)

    def look_up(self, token: str, idf: float, average: float) -> None:
        """Add the term's score to the running documents only (all of them, where they are many)."""
        held, _ = self.postings.term(token)
        if len(self.running) == 0 or len(held) == 0:
            return
        if len(self.running) >= LOOKUP_BELOW * len(held):
            return self.read(token, idf, average)
        found, tf = self.postings.lookup(token, self.running)
        rows = self.running[found]
        self.partial[rows] += self.bm25.contribution(self.postings, rows, tf, idf, average)

    def candidates(self) -> np.ndarray:
        """The rows still able to be answers: those seen and eligible, until ``run`` fixes them."""
        if self.running is not None:
            return self.running
        rows = np.concatenate(self.seen) if self.seen else np.zeros(0, dtype=np.int64)
        return rows if self.eligible is None else rows[self.eligible[rows]]

    def run(self) -> None:
        self.running, self.seen = np.sort(self.candidates()), []

    def keep(self, floor: float) -> None:
        self.running = self.running[self.partial[self.running] >= floor]

    def live_rows(self) -> np.ndarray:
        return self.offset + (self.running if self.renumber is None else self.renumber[self.running])


def _kth(segments: list[_Segment], k: int) -> float:
    """The k-th best partial score among the documents that may be answers (0 while fewer than k)."""
    pooled = np.concatenate([s.partial[s.candidates()] for s in segments])
    return 0.0 if len(pooled) < k else float(np.partition(pooled, len(pooled) - k)[len(pooled) - k])


def top(bm25: SegmentedBM25, query: str, k: int, corpus: CorpusStats | None = None,
        allowed: np.ndarray | None = None, weighted: Weighted | None = None) -> list[tuple[int, float]]:
    """``top_lexical(bm25.scores(query, corpus), k, allowed)``, reading far fewer postings: the ``k`` best
    ``(live row, score)``, rows that match no term (or are not ``allowed``) left out, ties by row
    (``weighted``: ``bm25.weights(query, corpus)`` where the caller has it)."""
    weighted = weighted or bm25.weights(query, corpus)
    weights, average = weighted
    if k < 1 or not weights:
        return []
    bounds: dict[str, float] = {}
    for token, idf in weights:
        bounds[token] = bounds.get(token, 0.0) + idf
    order = sorted(bounds, key=lambda t: (-bounds[t], t))
    segments = [_Segment(bm25, s, allowed) for s in range(len(bm25.parts))]
    left = sum(bounds.values()) * (1 + MARGIN)
    threshold, read, most = 0.0, 0, 0.0
    while read < len(order) and not (threshold > 0 and left < threshold):
        for segment in segments:
            segment.read(order[read], bounds[order[read]], average)
        left -= bounds[order[read]] * (1 + MARGIN)
        most += bounds[order[read]]  # no partial score exceeds it: while it is below what is left, read on
        threshold, read = (_kth(segments, k) if most > left else 0.0), read + 1
    for segment in segments:
        segment.run()
    for token in order[read:]:
        for segment in segments:
            segment.keep(threshold * (1 - MARGIN) - left)
            segment.look_up(token, bounds[token], average)
        left -= bounds[token] * (1 + MARGIN)
        threshold = max(threshold, _kth(segments, k))
    for segment in segments:
        segment.keep(threshold * (1 - MARGIN) - max(left, 0.0))
    rows = np.sort(np.concatenate([s.live_rows() for s in segments]))
    scores = bm25.score_rows(query, rows, corpus, weighted)
    best = np.lexsort((rows, -scores))[:k]
    return [(int(rows[i]), float(scores[i])) for i in best if scores[i] > 0]
