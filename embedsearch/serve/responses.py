"""What the API answers, as OpenAPI sees it: a model per response body (the CLI's ``--json`` shapes) and the one
error body every failure has, declared with the statuses each route can give."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..retrieval.settings import Band, BestMatch


class ErrorBody(BaseModel):
    """Every error: a one-line message for a person, and the HTTP status again."""

    error: str
    status: int


class Display(BaseModel):
    """A paper's title and text rendered for reading (asked for with ``display``)."""

    title: str | None
    text: str


class HitOut(BaseModel):
    rank: int
    id: str
    score: float
    title: str | None
    text: str
    cosine: float | None
    bm25: float | None
    match: Band
    metadata: dict[str, Any]
    display: Display | None = None
    evidence: dict[str, Any] | None = None  # why it matched: seeds it is closest to, words, the closest sentence




class HitsOut(BaseModel):
    match: BestMatch
    partial: bool = False
    missing: list[str] = []
    hits: list[HitOut]


class QueryHits(HitsOut):
    query: str
    offset: int = 0
    more: bool = Field(False, description="Whether the next page (offset + k) may hold more results.")
    total: int | None = Field(None, description="A query of no free words (author:X alone) lists every paper it "
                                                "matches, in date order: how many there are in all.")


class SearchOut(QueryHits):
    generation: int


class SearchBatchOut(BaseModel):
    generation: int
    results: list[QueryHits]


class RecommendOut(HitsOut):
    generation: int
    method: str
    like: list[str]
    unlike: list[str]
    library: dict[str, Any] | None = None


class SimilarOut(HitsOut):
    id: str | None = None
    generation: int


class TopicRef(BaseModel):
    id: int
    name: str = Field(description="A phrase that names the topic (the keyword label where none was chosen).")
    label: str
    size: int


class DocumentOut(BaseModel):
    id: str
    title: str | None
    text: str
    metadata: dict[str, Any]
    generation: int
    topic: TopicRef | None
    display: Display | None = None


class TopicOut(TopicRef):
    keywords: list[str]
    representatives: list[str]
    members: list[str]
    parent: int | None


class TopicsOut(BaseModel):
    topics: list[TopicOut]
    unassigned: list[str]
    generation: int


class TopicPeriodOut(BaseModel):
    topic: int = Field(description="The topic's id; -1 for the papers no topic holds.")
    name: str = Field(description="The topic's name, as the map and GET /topics give it.")
    label: str
    period: str
    count: int
    share: float = Field(description="Of the period's papers (unassigned included: a period's shares add up to 1).")
    topic_share: float = Field(description="Of the topic's papers (a topic's shares add up to 1).")
    keywords: list[str] = Field(description="The topic's words in this period (class-based TF-IDF).")


class OverTimeOut(BaseModel):
    field: str
    by: str = Field(description="time (periods of a year or date) or class (values of a field).")
    periods: list[str]
    left_out: int = Field(description="Papers without a usable value in the field.")
    first_left_out: str | None
    rows: list[TopicPeriodOut]
    generation: int


class PairDisplay(BaseModel):
    """Both texts of a pair and its shared passages, rendered for reading (asked for with ``display``)."""

    a: str
    b: str
    a_title: str | None = None
    b_title: str | None = None
    passages: list[str]


class PairOut(BaseModel):
    a: str
    b: str
    cosine: float
    overlap: float
    verdict: str
    passages: list[str]
    display: PairDisplay | None = None


class GroupOut(BaseModel):
    kept: str
    members: list[str]
    absorbed: list[str]
    existing: list[str] | None = None
    pairs: list[PairOut]


class ReportOut(BaseModel):
    groups: list[GroupOut]
    judged: int
    kept: int
    duplicate_ratio: float


class DuplicatesOut(ReportOut):
    generation: int


class SubmissionOut(BaseModel):
    """One submission of a batch: its closest flagged match (none: ``verdict`` is "no duplicate")."""

    id: str
    title: str | None
    verdict: str
    match: str | None = None
    match_title: str | None = None
    cosine: float | None = None
    overlap: float | None = None


class BatchOut(BaseModel):
    judged: int
    generation: int
    submissions: list[SubmissionOut]


class HealthOut(BaseModel):
    status: str
    generation: int
    documents: int
    worker: int


class InfoOut(BaseModel):
    """``embedsearch info --json`` plus the filterable fields and this server's settings."""

    model_config = ConfigDict(extra="allow")

    path: str
    documents: int
    model: str
    generation: int
    fields: list[dict[str, Any]]
    writable: bool
    topics: str
    limits: dict[str, int]
    bands: dict[str, float]


class AddOut(BaseModel):
    added: int
    generation: int
    documents: int
    duplicates: ReportOut | None = None
    skipped: list[str] = []


class RemoveOut(BaseModel):
    removed: int
    generation: int
    documents: int


class CompactOut(BaseModel):
    generation: int
    segments: int
    documents: int


WHY = {400: "bad input (a malformed filter, a path holding a control character)",
       401: "no bearer token sent (the answer carries WWW-Authenticate: Bearer)",
       403: "a wrong token, or a read-only server",
       404: "no such document", 409: "a conflict with the index: an id it holds or one the request gives twice, a metadata value of "
            "another kind than its field holds, (refused) a new abstract that duplicates an indexed one, or a filter no "
            "paper of it passes", 413: "request body too large",
       414: "query too long for GET (send it with POST)", 422: "a malformed body, field or query parameter",
       503: "busy (writes waiting, topics being computed); retry after Retry-After seconds"}


def errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """The error responses of a route: ``statuses`` and those any request can meet (400, 413, 422)."""
    return {code: {"model": ErrorBody, "description": WHY[code]} for code in sorted({400, 413, 422, *statuses})}
