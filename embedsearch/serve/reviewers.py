"""Who could review a paper (``serve --reviewers PATH``): the best reviewers for a paper of the index or for
a pasted abstract, each with the publications of theirs that make the score and any conflict of interest."""

from __future__ import annotations

from typing import Annotated, Any

import numpy as np
from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from ..reviewers import Matcher, Submissions
from .api import Service, only
from .guard import ApiError
from .responses import errors
from .schemas import K, Strict, Text
from .settings import LIMITS


class PublicationOut(BaseModel):
    id: str
    title: str | None
    similarity: float = Field(description="Cosine of the publication to the paper.")


class ReviewerOut(BaseModel):
    reviewer: str
    score: float = Field(description="Affinity: the reviewer's best publications' cosines, the i-th weighted 1/i.")
    conflict: str | None = Field(description="Why the reviewer may not review this paper, if they may not.")
    evidence: list[PublicationOut]


class ReviewersOut(BaseModel):
    id: str | None = None
    generation: int
    reviewers: list[ReviewerOut]


class ReviewersFor(Strict):
    text: Text
    title: Annotated[str, Field(max_length=2_000)] | None = None
    k: K = 10


def router(service: Service, matcher: Matcher) -> APIRouter:
    api = APIRouter(tags=["reviewers"])

    def answer(pairs, doc_id: str | None = None) -> dict[str, Any]:
        return {**({"id": doc_id} if doc_id else {}), "generation": service.current().index.generation,
                "reviewers": [{key: v for key, v in p.to_json().items() if key != "submission"} for p in pairs]}

    @api.get("/reviewers/for/{doc_id:path}", dependencies=[only("k")], response_model=ReviewersOut,
             response_model_exclude_unset=True, responses=errors(404))
    def reviewers_for(doc_id: str, k: int = Query(10, ge=1, le=LIMITS.k)):
        """The best reviewers for a paper of the index, with their matching publications."""
        index = service.current().index
        row = index.documents.row_of.get(doc_id)
        if row is None:
            raise ApiError(404, f"no document with id {doc_id[:200]!r}; POST /reviewers/for takes an abstract")
        model = index.manifest.model
        vectors = np.asarray(index.embeddings[[row]], dtype=np.float32)
        paper = Submissions(tuple(index.documents.get([row])), vectors, model.name, model.fingerprint,
                            model.settings.precision)
        return answer(matcher.table(paper).pairs(keep=k), doc_id)

    @api.post("/reviewers/for", dependencies=[only()], response_model=ReviewersOut,
              response_model_exclude_unset=True, responses=errors())
    def reviewers_for_text(body: ReviewersFor):
        """The best reviewers for an abstract not in the index."""
        return answer(matcher.for_text(body.text, body.title, body.k))

    return api
