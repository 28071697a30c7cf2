"""Several parts searched as one: the plan every search, similar and batch follows, for one index (itself a
single part, read in this process) and for a cluster whose shards answer on their own Ray Serve replicas. A
part answers two calls in plain data a remote caller can send and receive: its share of the BM25 statistics,
then its candidates scored with the whole corpus's statistics. ``Fanout`` is the plan: it does no I/O of its
own, asks ``Parts`` for each round (``LocalParts`` in process; a remote part is only an adapter), merges,
and reads the winners' documents from the snapshot that holds every part, so the answer is one index's over
all their documents. Ties (equal scores) go to the lower part, then row."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from functools import reduce
from typing import Any, NamedTuple, Protocol

import numpy as np

from ..errors import UnknownIdError, check_choice
from ..store.snapshot import Snapshot
from .bm25 import CorpusStats, of
from .dense import Shortlisted, best, shortlists
from .fielded import Fielded, matching
from .fielded import allowed as allowed_rows
from .filters import Filter
from .maxscore import top
from .answer import Answer, Hit, band, check_k
from .fusion import Ranked, fuse
from .settings import MODES, Mode, SearchSettings


class Offer(NamedTuple):
    """A part's row with both raw scores: ``dense`` is its cosine if it made the part's dense shortlist (else
    None), ``approximate`` its score there where the vector index's is approximate, ``lexical`` whether it
    made the lexical list; ``cosine`` and ``bm25`` are known either way."""

    row: int
    cosine: float
    bm25: float | None
    dense: float | None
    lexical: bool
    approximate: float | None = None


def stats(snapshot: Snapshot, query: str) -> CorpusStats:
    """A part's share of the BM25 statistics of ``query`` (summed over parts: the whole corpus's)."""
    return of(snapshot).stats(query)


def candidates(snapshot: Snapshot, vector: np.ndarray, query: str, corpus: CorpusStats | None, depth: int,
               mode: str, filters: Sequence[str | Filter | Fielded] = (), kinds: dict[str, str] | None = None,
               skip: int | None = None) -> list[Offer]:
    """The rows a part offers for ``mode`` at ``depth``, as one index's ranking takes them: the dense
    shortlist for ``depth`` (``vectors.best`` of every part's is one index's dense top ``depth``) and,
    scored with ``corpus`` (every part's statistics; None: this part's own), the lexical top ``depth``.
    Filters are read with ``kinds``, the whole field contract (a field only another part holds is empty
    here), fielded terms exactly over the part (``fielded``); ``skip`` is a row left out (the paper a
    ``similar`` asks about)."""
    allowed = allowed_rows(snapshot, parsed(filters), kinds)
    vector = np.asarray(vector, dtype=np.float32).reshape(-1)
    dense = {} if mode == "lexical" else {r: (a, c) for r, a, c in shortlists(
        snapshot, vector[None, :], depth, None if skip is None else [skip], allowed)[0]}
    lexical_index = of(snapshot)
    weighted = None if mode == "dense" else lexical_index.weights(query, corpus)
    lexical = {} if weighted is None else dict(top(lexical_index, query, depth, corpus, allowed, weighted))
    rows = sorted(set(dense) | set(lexical))
    bm25 = dict(lexical)
    unscored = [r for r in rows if r not in lexical] if weighted is not None else []
    if unscored:
        bm25.update(zip(unscored, lexical_index.score_rows(query, unscored, corpus, weighted).tolist()))
    cosine = {r: c for r, (_, c) in dense.items()}
    far = [r for r in rows if r not in dense]
    if far:
        cosine.update(zip(far, (np.asarray(snapshot.embeddings[far], dtype=np.float32) @ vector).tolist()))
    return [Offer(r, cosine[r], bm25.get(r), dense[r][1] if r in dense else None, r in lexical,
                  dense[r][0] if r in dense else None) for r in rows]


def parsed(filters: Sequence[str | Filter | Fielded]) -> list[Filter | Fielded]:
    return [f if isinstance(f, (Filter, Fielded)) else Filter.parse(f) for f in filters]


class Parts(Protocol):
    """Where the parts answer: ``round`` sends ``method`` (``stats``, ``candidates`` or ``matching``) with ``args[p]`` to
    each part ``p`` at once and gives each answer; a part that does not answer in time is left out.
    ``sizes`` are the parts' live rows, in the order the snapshot holding them all numbers them."""

    names: Sequence[str]
    sizes: Sequence[int]

    def round(self, method: str, args: dict[int, tuple]) -> dict[int, Any]: ...


class LocalParts:
    """Parts read in this process, answering at once: an index as one part, or each shard's snapshot."""

    def __init__(self, snapshots: Sequence[Snapshot], names: Sequence[str] | None = None):
        self.snapshots = list(snapshots)
        self.names = list(names) if names is not None else [str(s.root) for s in self.snapshots]
        self.sizes = [len(s) for s in self.snapshots]

    def round(self, method: str, args: dict[int, tuple]) -> dict[int, Any]:
        call = {"stats": stats, "candidates": candidates, "matching": matching}[method]
        return {p: call(self.snapshots[p], *a) for p, a in args.items()}


class Fanout:
    """Searches of ``snapshot`` (every part together, read here for documents and stored vectors) answered by
    ``parts`` (by default ``snapshot`` itself as one part): what ``Index.search``/``similar`` give, with the
    parts that did not answer named."""

    def __init__(self, snapshot: Snapshot, settings: SearchSettings, parts: Parts | None = None):
        self.snapshot, self.settings = snapshot, settings
        self.parts = parts if parts is not None else LocalParts([snapshot])
        self.starts = np.cumsum([0, *self.parts.sizes])[:-1].tolist()

    def search(self, query: str, k: int = 10, mode: Mode | None = None,
               filters: Sequence[str | Filter] = ()) -> Answer:
        return self.search_many([query], k, mode, filters)[0]

    def search_many(self, queries: Sequence[str], k: int = 10, mode: Mode | None = None,
                    filters: Sequence[str | Filter] = ()) -> list[Answer]:
        """Each query (checked by the facade: ``Index.search_many``, ``find``) made a vector in one batched
        encode, then ranked among the rows passing every filter: both signals' candidates from every part,
        fused over their union."""
        check_k(k)
        mode = mode or self.settings.mode
        check_choice("mode", mode, MODES)
        filters = parsed(filters)
        kinds = self.snapshot.field_kinds if filters else None
        wanted = k if mode != "hybrid" else max(k, self.settings.candidates)
        answers = []
        for query, vector in zip(queries, self.snapshot.encoder.encode(queries)):
            every, corpus = range(len(self.parts.names)), None
            if mode != "dense" and len(self.parts.names) > 1:  # one part's own statistics are the corpus's
                shares = self.parts.round("stats", {p: (query,) for p in every})
                every = sorted(shares)
                corpus = reduce(operator.add, shares.values()) if shares else None
            offered = self.parts.round("candidates", {p: (vector, query, corpus, wanted, mode, filters, kinds)
                                                      for p in every})
            answers.append(self._answer(offered, k, mode, self.settings.bands()))
        return answers

    def listing(self, k: int, filters: Sequence[str | Filter | Fielded], newest: bool = True) -> Answer:
        """Every paper passing ``filters`` (metadata filters and fielded terms) over every part, dated ones
        first in date order (newest first, or oldest), then undated ones, ties by row: the first ``k``, with
        ``total`` counting them all. What a query of no free words answers (``author:`` alone)."""
        check_k(k)
        filters = parsed(filters)
        kinds = self.snapshot.field_kinds if any(isinstance(f, Filter) for f in filters) else None
        found = self.parts.round("matching", {p: (filters, kinds) for p in range(len(self.parts.names))})
        pool = [(date, self.starts[p] + row) for p, (rows, dates) in sorted(found.items())
                for row, date in zip(np.asarray(rows).tolist(), dates)]
        ordered = sorted((x for x in pool if x[0]), key=lambda x: x[0], reverse=newest) + [x for x in pool if not x[0]]
        docs = self.snapshot.documents.get([row for _, row in ordered[:k]])
        hits = tuple(Hit(rank, d.id, 0.0, d.title, d.text, d.metadata) for rank, d in enumerate(docs, start=1))
        missing = tuple(n for p, n in enumerate(self.parts.names) if p not in found)
        return Answer(hits, self.snapshot.number, missing, total=len(pool))

    def similar(self, doc_id: str, k: int = 10) -> Answer:
        """Papers related to a paper of the snapshot, itself excluded."""
        check_k(k)
        row = self.snapshot.documents.row_of.get(doc_id)
        if row is None:
            raise UnknownIdError(f"no document with id {doc_id[:200]!r} in {self.snapshot.root}; for an abstract's "
                                 "text use similar_to_text (CLI: `similar --text`; API: POST /similar)")
        vector = np.asarray(self.snapshot.embeddings[[row]], dtype=np.float32)[0]
        part = int(np.searchsorted(self.starts, row, side="right")) - 1
        return self._nearest(vector, k, (part, row - self.starts[part]))

    def similar_to_text(self, text: str, k: int = 10) -> Answer:
        """Papers related to a new abstract (checked by the facade), embedded exactly as the corpus was (long
        ones in windows)."""
        check_k(k)
        return self._nearest(self.snapshot.encoder.encode([text])[0], k, None)

    def nearest_to(self, vector: np.ndarray, k: int, exclude: Sequence[str] = (),
                   filters: Sequence[str | Filter] = ()) -> Answer:
        """The ``k`` papers whose vectors score highest against ``vector`` (a query made elsewhere: a
        recommendation's direction), among the rows passing ``filters``, the ids ``exclude`` left out."""
        check_k(k)
        filters = [f if isinstance(f, Filter) else Filter.parse(f) for f in filters]
        kinds = self.snapshot.field_kinds if filters else None
        row_of = self.snapshot.documents.row_of
        left_out = {row_of[i] for i in exclude if i in row_of}
        offered = self.parts.round("candidates", {p: (vector, "", None, k + len(left_out), "dense", filters, kinds)
                                                  for p in range(len(self.parts.names))})
        kept = {p: [o for o in found if self.starts[p] + o.row not in left_out] for p, found in offered.items()}
        return self._answer(kept, k, "dense", self.settings.bands(abstracts=True))

    def _nearest(self, vector: np.ndarray, k: int, skip: tuple[int, int] | None) -> Answer:
        offered = self.parts.round("candidates", {p: (vector, "", None, k, "dense", (), None,
                                                      skip[1] if skip and skip[0] == p else None)
                                                  for p in range(len(self.parts.names))})
        return self._answer(offered, k, "dense", self.settings.bands(abstracts=True))

    def _answer(self, offered: dict[int, list[Offer]], k: int, mode: str, bands: tuple[float, float]) -> Answer:
        placed = merge([offered.get(p, []) for p in range(len(self.parts.names))], k, mode, self.settings)
        docs = self.snapshot.documents.get([self.starts[p] + r.row for p, r in placed])
        hits = tuple(Hit(rank, d.id, r.score, d.title, d.text, d.metadata, r.cosine, r.bm25, band(r.cosine, bands))
                     for rank, ((_, r), d) in enumerate(zip(placed, docs), start=1))
        missing = tuple(n for p, n in enumerate(self.parts.names) if p not in offered)
        return Answer(hits, self.snapshot.number, missing)


def merge(offered: Sequence[Sequence[Offer]], k: int, mode: str,
          settings: SearchSettings) -> list[tuple[int, Ranked]]:
    """One ranking of ``k`` ``(part, ranked row)`` from every part's candidates (``offered[p]`` is part
    ``p``'s): the global dense and lexical top ``depth``, fused over their union with each signal divided by
    its best over all parts, exactly as ``retrieval.fusion.fuse`` does for one index. A candidate is known by
    its place in the pool, which is (part, row) order: each part offers its rows in order."""
    part = [p for p, found in enumerate(offered) for _ in found]
    pool = [c for found in offered for c in found]
    if mode == "dense":
        return [(part[i], Ranked(pool[i].row, pool[i].dense, pool[i].cosine, None)) for i in nearest(pool, k)]
    lexical = sorted((i for i, c in enumerate(pool) if c.lexical), key=lambda i: (-pool[i].bm25, i))
    if mode == "lexical":
        return [(part[i], Ranked(pool[i].row, pool[i].bm25, pool[i].cosine, pool[i].bm25)) for i in lexical[:k]]
    wanted = max(k, settings.candidates)
    dense, lexical = nearest(pool, wanted), lexical[:wanted]
    order = sorted(set(dense) | set(lexical))
    position = {i: n for n, i in enumerate(order)}
    cosine = np.fromiter((pool[i].cosine for i in order), np.float64, len(order))
    bm25 = np.fromiter((pool[i].bm25 for i in order), np.float64, len(order))
    fused = fuse([(position[i], pool[i].dense) for i in dense], [(position[i], pool[i].bm25) for i in lexical],
                 cosine.__getitem__, bm25.__getitem__, k, settings)
    return [(part[order[r.row]], Ranked(pool[order[r.row]].row, r.score, r.cosine, r.bm25)) for r in fused]


def nearest(pool: Sequence[Offer], k: int) -> list[int]:
    """The places in ``pool`` of the dense top ``k`` of every part's shortlist, as ``dense.best`` takes it
    over one index's segments."""
    return [i for i, _, _ in best([Shortlisted(i, c.approximate, c.dense) for i, c in enumerate(pool)
                                   if c.dense is not None], k)]
