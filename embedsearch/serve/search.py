"""The search routes: ``/search`` (a query in the grammar of ``retrieval.query``, or a batch of them) and
``/similar``, answered by the facade (``Index.find_many``, ``similar``, ``similar_to_text``), each hit of the
page returned with its evidence, every answer also as a reference-manager file (``format``)."""

from __future__ import annotations

from fastapi import APIRouter, Query

from ..retrieval.query import GRAMMAR
from ..retrieval.settings import Sort
from .api import DISPLAY, PATH_ID_PARAM, Service, hits_json, only
from .exports import EXPORTS, exported
from .guard import ApiError
from .responses import SearchBatchOut, SearchOut, SimilarOut, errors
from .schemas import QUERY, ExportFormat, Mode, SearchBatch, SimilarText
from .settings import LIMITS

SORT = Query("relevance", description="relevance, or newest / oldest first (by date or year) among the most "
                                      "relevant papers; a query of no free words (author:X alone) lists every paper "
                                      "it matches, newest first unless oldest.")
FORMAT = Query("json", description="json, or the hits as a reference-manager file: bibtex, ris, csl-json.")

def one_query(q: str) -> str:
    if len(q) > LIMITS.get_query_chars:
        raise ApiError(414, f"q is {len(q):,} characters; GET takes at most {LIMITS.get_query_chars:,}: "
                            "send long text with POST /search or POST /similar")
    return q


def router(service: Service) -> APIRouter:
    api = APIRouter(tags=["search"])

    @api.get("/search", dependencies=[only("q", "k", "offset", "mode", "filter", "display", "format", "sort")],
             response_model=SearchOut, response_model_exclude_unset=True, responses={**errors(409, 414), **EXPORTS})
    def search(q: str = Query(..., description=f"Free-text query in the grammar: {GRAMMAR}.", json_schema_extra={
                   "pattern": QUERY, "maxLength": LIMITS.get_query_chars}), k: int = Query(10, ge=1, le=LIMITS.k),
               offset: int = Query(0, ge=0, le=LIMITS.offset, description="Results to skip: the next page "
                                                                         "starts at offset + k."),
               mode: Mode | None = None,
               filter: list[str] = Query([], max_length=LIMITS.filters, description="FIELD=VALUE, FIELD>=N"),
               display: bool = DISPLAY, format: ExportFormat = FORMAT, sort: Sort = SORT):
        """The ``k`` abstracts that best match a query (as ``embedsearch search --json``), from rank
        ``offset + 1`` on, each with its evidence."""
        served = service.current()
        hits = served.index.find(one_query(q), k, mode, filter, sort, offset)
        if format != "json":
            return exported(format, hits[offset:])
        return {"query": q, "generation": served.index.generation, **hits_json(hits, display, offset, k)}

    @api.post("/search", dependencies=[only()], response_model=SearchBatchOut, response_model_exclude_unset=True,
              responses=errors(409))
    def search_batch(body: SearchBatch):
        """Many queries at once, answered with one batched encode."""
        served = service.current()
        results = served.index.find_many(body.queries, body.k, body.mode, body.filters, body.sort, body.offset)
        return {"generation": served.index.generation, "results": [
            {"query": q, **hits_json(h, body.display, body.offset, body.k)} for q, h in zip(body.queries, results)]}

    @api.get("/similar/{doc_id:path}", dependencies=[only("k", "display", "format")], response_model=SimilarOut,
             response_model_exclude_unset=True, responses={**errors(404), **EXPORTS})
    def similar(doc_id: str = PATH_ID_PARAM, k: int = Query(10, ge=1, le=LIMITS.k), display: bool = DISPLAY,
                format: ExportFormat = FORMAT):
        """Papers related to a paper of the index, itself excluded."""
        served = service.current()
        if doc_id not in served.index.documents.row_of:
            raise ApiError(404, f"no document with id {doc_id[:200]!r}; POST /similar takes an abstract's text")
        hits = served.index.similar(doc_id, k)
        if format != "json":
            return exported(format, hits)
        return {"id": doc_id, "generation": served.index.generation, **hits_json(hits, display)}

    @api.post("/similar", dependencies=[only()], response_model=SimilarOut, response_model_exclude_unset=True, responses=errors())
    def similar_text(body: SimilarText):
        """Papers related to an abstract's text."""
        served = service.current()
        hits = served.index.similar_to_text(body.text, body.k)
        return {"generation": served.index.generation, **hits_json(hits, body.display)}

    return api
