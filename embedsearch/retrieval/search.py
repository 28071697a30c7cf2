"""What a search answers (``Hit`` with its evidence, ``Answer``, the bands) and how hybrid ranking fuses the
two signals (``retrieval.parts.Fanout`` gathers the candidates, from one index or many parts).

Hybrid ranking fuses the two candidate lists by normalised score fusion: each signal is divided
by its best score among the candidates (``max``; cosines below 0 count as 0), then mixed with
``dense_weight``. Min-max scaling and reciprocal rank fusion are available too; the default method
and weight were chosen on SciFact's train split (benchmarks/HISTORY.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..corpus import Document
from ..errors import InputError
from .settings import Band, BestMatch, Mode, SearchSettings

PREVIEW = 160  # characters of a hit's first sentence shown where the source has no titles

MAX_QUERY_CHARS = 20_000

@dataclass(frozen=True)
class Hit:
    """One related paper: rank, id, ranking score, the document, and the evidence behind the score.

    ``score`` ranks within one answer: the cosine in dense mode, the BM25 score in lexical mode, the fused
    score in hybrid mode. ``cosine`` (every mode) compares across queries, and ``match`` says what it means:
    ``close``, ``related`` or ``distant`` (``SearchSettings`` holds the measured thresholds).
    """

    rank: int
    id: str
    score: float
    title: str | None
    text: str
    metadata: dict[str, Any] = field(default_factory=dict, compare=False)
    cosine: float | None = None
    bm25: float | None = None
    match: Band = "distant"
    evidence: dict[str, Any] | None = field(default=None, compare=False)  # why it matched (``retrieval.evidence``)

    @property
    def preview(self) -> str:
        """The title, or the first sentence when the source has no titles, rendered for a reader."""
        if self.title:
            return Document(self.id, "", self.title).readable().title or ""
        return Document(self.id, _head(self.text)).readable().first_sentence(PREVIEW)

    def to_json(self) -> dict[str, Any]:
        """The CLI's ``--json`` line and the API's hit: the score with its evidence and the metadata."""
        return {"rank": self.rank, "id": self.id, "score": round(self.score, 6), "title": self.title,
                "text": self.text, "cosine": None if self.cosine is None else round(self.cosine, 6),
                "bm25": None if self.bm25 is None else round(self.bm25, 6), "match": self.match,
                "metadata": self.metadata, **({"evidence": self.evidence} if self.evidence is not None else {})}


def _head(text: str) -> str:
    """``text`` up to the end of the first sentence past four previews' length: all a preview can show, however
    much markup rendering removes, cut at a sentence's end, where math and groups are closed in practice (the
    same previews as the whole text's on all 4,114 of arXiv-2000 and the bundled corpus, with titles and
    without); rendering a whole abstract costs 5 ms."""
    ends = [end for stop in (". ", "? ", "! ") if (end := text.find(stop, 4 * PREVIEW)) >= 0]
    return text[:min(ends) + 1] if ends else text


@dataclass(frozen=True, eq=False)
class Answer(Sequence[Hit]):
    """The hits of one search in rank order (the answer is a sequence of them), the version they were read
    at (a generation, or a cluster's cut), and the shards that did not answer in time (an answer with
    ``missing`` is partial: it lacks whatever they hold). Equal to any sequence of the same hits. A listing
    (a query of no free words: every paper by an author) is in date order, not ranked, and ``total`` counts
    every paper it matches."""

    hits: tuple[Hit, ...]
    version: int = 0
    missing: tuple[str, ...] = ()
    total: int | None = None

    @property
    def listing(self) -> bool:
        return self.total is not None

    def __getitem__(self, key):
        return self.hits[key]

    def __len__(self) -> int:
        return len(self.hits)

    def __eq__(self, other: object) -> bool:
        return list(self.hits) == list(other) if isinstance(other, Sequence) else NotImplemented

    @property
    def partial(self) -> bool:
        return bool(self.missing)

    @property
    def match(self) -> BestMatch:
        return best_match(self.hits)


SCORES = {"hybrid": "the fused score (meaning and words, each relative to the best candidate)",
          "dense": "the cosine similarity (closeness in meaning)",
          "lexical": "the BM25 score (how well the words match)"}


def score_note(mode: Mode) -> str:
    """What the number beside a result is, in one line: the score that orders them; the band is a label."""
    return (f"score: {SCORES[mode]}, which orders the list; band: close, related or distant, read from the "
            "cosine beside it (how close in meaning), whatever the order.")


def best_match(hits: Sequence[Hit]) -> BestMatch:
    """``close`` or ``related`` when a hit is, else ``none``: the answer has no close match."""
    return next((band for band in ("close", "related") if any(h.match == band for h in hits)), "none")


@dataclass(frozen=True)
class Ranked:
    """A ranked row before documents are fetched."""

    row: int
    score: float
    cosine: float | None = None
    bm25: float | None = None


def check_k(k: int) -> None:
    if not isinstance(k, int) or k < 1:
        raise InputError(f"k must be a positive whole number, got {k!r}")


def check_query(query: str) -> str:
    if not isinstance(query, str) or not query.strip():
        raise InputError("empty query; type some words to search for")
    if not any(ch.isalnum() for ch in query):
        raise InputError("query has no letters or digits; type some words to search for")
    if len(query) > MAX_QUERY_CHARS:
        raise InputError(f"query is {len(query):,} characters; the limit is {MAX_QUERY_CHARS:,} "
                         "(pass an abstract, not a whole paper)")
    return query.strip()


def top_lexical(scores: np.ndarray, k: int, allowed: np.ndarray | None = None) -> list[tuple[int, float]]:
    """Top-``k`` rows of a full score vector, ties by row (as ``maxscore.top``, which reads an index's
    postings instead); rows that match no query term are left out."""
    if allowed is not None:
        scores = np.where(allowed, scores, 0)
    k = min(k, int(np.count_nonzero(scores > 0)))
    if k == 0:
        return []
    rows = np.flatnonzero(scores >= np.partition(scores, len(scores) - k)[len(scores) - k])
    rows = rows[np.lexsort((rows, -scores[rows]))][:k]
    return [(int(r), float(scores[r])) for r in rows]


def _minmax(values: np.ndarray, reference: np.ndarray) -> np.ndarray:
    if len(reference) == 0:
        return np.zeros_like(values)
    low, high = float(reference.min()), float(reference.max())
    return np.clip((values - low) / (high - low), 0, 1) if high > low else (values >= high).astype(np.float64)


def _scaled(values: np.ndarray, ranking: list[tuple[int, float]]) -> np.ndarray:
    best = max((s for _, s in ranking), default=0.0)
    return np.maximum(values, 0) / best if best > 0 else np.zeros_like(values)


def _rrf(rows: np.ndarray, rankings: list[tuple[list[tuple[int, float]], float]], k0: int) -> np.ndarray:
    position = {r: i for i, r in enumerate(rows.tolist())}
    fused = np.zeros(len(rows))
    for ranking, weight in rankings:
        for rank, (row, _) in enumerate(ranking, start=1):
            fused[position[row]] += weight / (k0 + rank)
    return fused


def fuse(dense: list[tuple[int, float]], lexical: list[tuple[int, float]], cosine_of, bm25_of,
         k: int, settings: SearchSettings) -> list[Ranked]:
    """Merge two candidate lists into one ranking; every candidate carries both raw scores."""
    rows = np.asarray(sorted({r for r, _ in dense} | {r for r, _ in lexical}), dtype=np.int64)
    if len(rows) == 0:
        return []
    cos = cosine_of(rows)
    bm = bm25_of(rows)
    if settings.fusion == "rrf":
        fused = _rrf(rows, [(dense, settings.dense_weight), (lexical, 1 - settings.dense_weight)], settings.rrf_k)
    elif settings.fusion == "max":
        fused = settings.dense_weight * _scaled(cos, dense) + (1 - settings.dense_weight) * _scaled(bm, lexical)
    else:
        d_norm = _minmax(cos, np.asarray([s for _, s in dense]))
        l_norm = _minmax(bm, np.asarray([s for _, s in lexical]))
        fused = settings.dense_weight * d_norm + (1 - settings.dense_weight) * l_norm
    order = np.lexsort((rows, -fused))[:k]
    return [Ranked(int(rows[i]), float(fused[i]), float(cos[i]), float(bm[i])) for i in order]


def band(cosine: float | None, bands: tuple[float, float]) -> Band:
    related, close = bands
    if cosine is not None and cosine >= close:
        return "close"
    return "related" if cosine is not None and cosine >= related else "distant"
