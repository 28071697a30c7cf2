"""BM25 scoring over the postings (``lexical``) of several segments, with statistics summed over the live
documents of all of them, or of a larger corpus this one is a shard of: after any sequence of adds and
removes a query scores exactly as one BM25 index built from scratch over the live documents would (Lucene's
formula as bm25s computes it; a test checks against bm25s to 1e-6). Lucene instead keeps deleted documents
in its statistics until a merge; here a term's live document frequency costs a binary search per deleted
row in its postings (or one pass, where deletions outnumber them). ``maxscore`` finds the top k without
scoring every posting."""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..store.lexical import Postings, Tokenizer
from ..store.settings import LexicalSettings
from ..store.snapshot import Snapshot
from .postings_loops import Scoring, contribution

Weighted = tuple[list[tuple[str, float]], float]  # (token, idf) in query order, and the average length

class SegmentedBM25:
    """BM25 over the live rows of several segments, with statistics summed over live documents only.

    ``parts`` pairs each segment's postings with its live mask (None: every row live); scores come out
    in live-row order: the live rows of the first segment, then of the second, and so on."""

    def __init__(self, parts: Sequence[tuple[Postings, np.ndarray | None]], settings: LexicalSettings):
        self.parts = list(parts)
        self.settings = settings
        self.tokenizer = Tokenizer.of(settings)
        counts = [len(p.lengths) if live is None else int(live.sum()) for p, live in self.parts]
        self.offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        self.renumber = [None if live is None else np.cumsum(live) - 1 for _, live in self.parts]
        self.physical = [None if live is None else np.flatnonzero(live) for _, live in self.parts]
        self._deleted = [None if live is None else np.flatnonzero(~live) for _, live in self.parts]
        self.total_length = sum(float(np.sum(p.lengths if live is None else np.asarray(p.lengths)[live]))
                                for p, live in self.parts)
        self.live = int(self.offsets[-1])
        self.average_length = self.total_length / self.live if self.live else 0.0

    def stats(self, query: str) -> CorpusStats:
        """This corpus's share of the statistics ``query`` is scored with (shards add theirs up)."""
        return CorpusStats(self.live, self.total_length, {t: self.df(t) for t in dict.fromkeys(self.tokenizer(query))})

    def df(self, token: str) -> int:
        """How many live documents hold ``token``."""
        count = 0
        for (postings, live), deleted in zip(self.parts, self._deleted):
            rows, _ = postings.term(token)
            if live is None or len(rows) == 0:
                count += len(rows)
            elif len(deleted) * 8 < len(rows):
                count += len(rows) - int(postings.lookup(token, deleted)[0].sum())
            else:
                count += int(np.count_nonzero(live[rows]))
        return count

    def weights(self, query: str, corpus: CorpusStats | None = None) -> Weighted:
        """Each query token some live document holds, in query order with repeats (each adds its score
        again), with its idf; and the average length scores are normalised by (``corpus``: see ``scores``)."""
        documents = self.live if corpus is None else corpus.documents
        average = self.average_length if corpus is None else corpus.length / max(corpus.documents, 1)
        known: dict[str, int] = {}
        out = []
        for token in self.tokenizer(query):
            if token not in known:
                known[token] = self.df(token)
                if known[token]:
                    known[token] = known[token] if corpus is None else corpus.df.get(token, known[token])
            if known[token]:
                out.append((token, float(np.log(1 + (documents - known[token] + 0.5) / (known[token] + 0.5)))))
        return out, average

    def contribution(self, postings: Postings, rows: np.ndarray, tf: np.ndarray, idf: float,
                     average: float) -> np.ndarray:
        """One term's BM25 score in each of ``rows`` (physical rows of ``postings``' segment): below ``idf``."""
        return contribution(np.asarray(postings.lengths), rows, np.asarray(tf),
                            Scoring(self.settings.k1, self.settings.b, average, idf))

    def scores(self, query: str, corpus: CorpusStats | None = None) -> np.ndarray:
        """BM25 score of every live document for ``query`` (zero where no term matches); with ``corpus``, the
        statistics of a larger corpus this one is a shard of, so scores equal one index over all of it."""
        out = np.zeros(self.live, dtype=np.float32)
        weights, average = self.weights(query, corpus)
        for token, idf in weights:
            for (postings, live), renumber, offset in zip(self.parts, self.renumber, self.offsets):
                rows, tf = postings.term(token)
                rows, tf = np.asarray(rows), np.asarray(tf)
                if live is not None:
                    rows, tf = rows[live[rows]], tf[live[rows]]
                if len(rows):
                    target = offset + (rows if renumber is None else renumber[rows])
                    out[target] += self.contribution(postings, rows, tf, idf, average)
        return out

    def score_rows(self, query: str, rows: Sequence[int] | np.ndarray, corpus: CorpusStats | None = None,
                   weighted: Weighted | None = None) -> np.ndarray:
        """``scores(query, corpus)[rows]`` to the bit, reading only those rows' postings; ``weighted`` is
        ``weights(query, corpus)`` where the caller has it already (it counts every term's live documents)."""
        out = np.zeros(len(rows), dtype=np.float32)
        weights, average = weighted or self.weights(query, corpus)
        for scored in self.term_scores(rows, (weights, average)):
            out += scored
        return out

    def term_scores(self, rows: Sequence[int] | np.ndarray, weighted: Weighted) -> list[np.ndarray]:
        """Each weighted term's BM25 score in each of ``rows`` (live rows), in ``weighted``'s order: what
        ``score_rows`` adds up, and each matched word's share of it (a hit's evidence)."""
        rows = np.asarray(rows, dtype=np.int64)
        weights, average = weighted
        segment = np.searchsorted(self.offsets, rows, side="right") - 1
        located = []
        for s, physical in enumerate(self.physical):
            where = np.flatnonzero(segment == s)
            local = rows[where] - self.offsets[s]
            located.append((where, local if physical is None else physical[local]))
        out = []
        for token, idf in weights:
            scored = np.zeros(len(rows), dtype=np.float32)
            for (postings, _), (where, local) in zip(self.parts, located):
                if len(local):
                    found, tf = postings.lookup(token, local)
                    scored[where[found]] += self.contribution(postings, local[found], tf, idf, average)
            out.append(scored)
        return out


@dataclass(frozen=True)
class CorpusStats:
    """What BM25 reads from a whole corpus for one query: live documents, their summed length, and each
    query token's document frequency. Shards add theirs up, then each scores as one index over all would."""

    documents: int
    length: float
    df: dict[str, int]

    def __add__(self, other: CorpusStats) -> CorpusStats:
        df = {t: self.df.get(t, 0) + other.df.get(t, 0) for t in {**self.df, **other.df}}
        return CorpusStats(self.documents + other.documents, self.length + other.length, df)


_OPENED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def of(snapshot: Snapshot) -> SegmentedBM25:
    """BM25 over every segment of ``snapshot``, opened once per snapshot."""
    if snapshot not in _OPENED:
        _OPENED[snapshot] = SegmentedBM25([(s.postings, m) for s, m in zip(snapshot.segments, snapshot.live)],
                                          snapshot.manifest.lexical)
    return _OPENED[snapshot]
