"""What a search answers: ``Hit`` (a paper with its scores, band and evidence) and ``Answer`` (the hits in
rank order, the version they were read from), the bands a cosine is read by, and the checks every query
and ``k`` pass (``retrieval.parts.Fanout`` gathers the candidates, ``fusion`` ranks them)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


from ..corpus import Document
from ..errors import InputError
from .settings import Band, BestMatch

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


def best_match(hits: Sequence[Hit]) -> BestMatch:
    """``close`` or ``related`` when a hit is, else ``none``: the answer has no close match."""
    return next((band for band in ("close", "related") if any(h.match == band for h in hits)), "none")


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


def band(cosine: float | None, bands: tuple[float, float]) -> Band:
    related, close = bands
    if cosine is not None and cosine >= close:
        return "close"
    return "related" if cosine is not None and cosine >= related else "distant"
