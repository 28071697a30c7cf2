"""One shard's side of a sharded search, in plain data a remote caller can send and receive: its share of the
BM25 statistics, then its candidates scored with the whole corpus's statistics, then the documents of the
rows that made the merged answer. A shard reads one generation for all three, the one its cut names."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..corpus import Document
from ..index import Index
from ..retrieval.search import SearchSettings
from ..store.filters import Filter
from ..store.bm25 import CorpusStats
from ..store.maxscore import top


@dataclass(frozen=True)
class Candidate:
    """A shard's row with both raw scores: ``dense`` is its cosine if it made the shard's dense shortlist (else
    None), ``approximate`` its score there where the vector index's is approximate, ``lexical`` whether it made
    the lexical list; ``cosine`` and ``bm25`` are known either way."""

    row: int
    cosine: float
    bm25: float | None
    dense: float | None
    lexical: bool
    approximate: float | None = None


class Shard:
    """An ordinary index read at one generation, answering the three calls of a sharded search."""

    def __init__(self, path: str | Path, generation: int | None = None):
        self.index = Index.load(path, generation=generation)
        self.name = Path(path).name

    @property
    def generation(self) -> int:
        return self.index.generation

    def stats(self, query: str) -> CorpusStats:
        return self.index.snapshot.lexical.stats(query)

    def candidates(self, vector: np.ndarray, query: str, corpus: CorpusStats | None, depth: int, mode: str,
                   filters: Sequence[str] = (), kinds: dict[str, str] | None = None) -> list[Candidate]:
        """The rows this shard offers for ``mode`` at ``depth``, as one index's ranking takes them: the dense
        shortlist for ``depth`` (``vectors.best`` of every shard's is one index's dense top ``depth``) and,
        scored with ``corpus`` (the statistics of every shard), the lexical top ``depth``. Filters are read
        with ``kinds``, the cluster's field contract (a field only another shard holds is empty here)."""
        snapshot = self.index.snapshot
        allowed = snapshot.allowed_rows([Filter.parse(f) for f in filters], kinds)
        vector = np.asarray(vector, dtype=np.float32).reshape(-1)
        dense = {} if mode == "lexical" else {r: (a, c) for r, a, c in
                                              snapshot.shortlist(vector[None, :], depth, allowed=allowed)[0]}
        weighted = None if mode == "dense" else snapshot.lexical.weights(query, corpus)
        lexical = set() if weighted is None else \
            {r for r, _ in top(snapshot.lexical, query, depth, corpus, allowed, weighted)}
        rows = np.asarray(sorted(set(dense) | lexical), dtype=np.int64)
        if len(rows) == 0:
            return []
        bm25 = None if weighted is None else snapshot.lexical.score_rows(query, rows, corpus, weighted)
        cosines = np.asarray(snapshot.embeddings[rows], dtype=np.float32) @ vector
        return [Candidate(r, float(c), None if bm25 is None else float(bm25[i]), dense[r][1] if r in dense else None,
                          r in lexical, dense[r][0] if r in dense else None)
                for i, (r, c) in enumerate(zip(rows.tolist(), cosines))]

    def vector(self, doc_id: str) -> tuple[int, np.ndarray] | None:
        """The row and stored vector of ``doc_id`` here (None when this shard does not hold it): the query of
        "papers like this one"."""
        row = self.index.documents.row_of.get(doc_id)
        return None if row is None else (row, np.asarray(self.index.embeddings[[row]], dtype=np.float32)[0])

    def documents(self, rows: Sequence[int]) -> list[Document]:
        return self.index.snapshot.documents.get(list(rows))

    @property
    def settings(self) -> SearchSettings:
        return self.index.search_settings
