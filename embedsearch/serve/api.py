"""The JSON API, one router per resource (documents, topics, the index; ``search``, ``recommend`` and
``duplicates`` have modules of their own): read endpoints on the generation a worker serves, write endpoints (``--writable`` and a bearer
token) that commit through the writer lock and move this worker to the new generation at once. Sync routes
run in the server's thread pool, so a slow request never holds up the others."""

from __future__ import annotations

import os
import threading
from dataclasses import asdict, dataclass
from typing import Any

from fastapi import APIRouter, Depends, Path, Query, Request, Security
from fastapi.security import HTTPBearer

from ..corpus import Document
from ..errors import DuplicateError, IdConflictError, UnknownIdError
from ..index import Index
from ..retrieval.answer import Answer
from ..retrieval.settings import SearchSettings
from .guard import ApiError, authorised
from .live import Live, Served
from .responses import (AddOut, CompactOut, DocumentOut, HealthOut, InfoOut, OverTimeOut, RemoveOut, TopicsOut, errors)
from .schemas import PATH_ID, AddDocuments
from .settings import LIMITS, ServeSettings
from .topics import TopicsState


def only(*names: str):
    """A dependency refusing query parameters a route does not take (a typo would otherwise be ignored).
    Asynchronous, so it runs on the event loop: a plain function would cost every request a thread hop."""

    async def check(request: Request) -> None:
        unknown = sorted(set(request.query_params) - set(names))
        if unknown:
            allowed = ", ".join(names) or "none"
            raise ApiError(422, f"unknown query parameter {unknown[0]!r}; this endpoint takes: {allowed}")

    return Depends(check)


PATH_ID_PARAM = Path(..., json_schema_extra={"pattern": PATH_ID})
DISPLAY = Query(False, description="Also give each text rendered for reading (LaTeX and Markdown as plain "
                                   "text) under `display`; `text` and `title` stay as stored.")


def bands(settings: SearchSettings) -> dict[str, float]:
    """The cosine thresholds of the bands, for queries and for an abstract's neighbours."""
    (related, close), (similar_related, similar_close) = settings.bands(), settings.bands(abstracts=True)
    return {"related": related, "close": close, "similar_related": similar_related, "similar_close": similar_close}


def shown(document: Document) -> dict[str, Any]:
    paper = document.readable(keep_math=True)
    return {"title": paper.title, "text": paper.text}


def hits_json(answer: Answer, display: bool = False, offset: int = 0, k: int | None = None) -> dict[str, Any]:
    """An answer's hits from ``offset`` on (a page; ``k`` its size, asked for as ``offset + k``: ``more`` says
    whether a next page may hold more), the best band among all it ranked (``none``: no close match), and the
    shards that did not answer in time (``partial``: the hits lack what they hold)."""
    page = {} if k is None else {"offset": offset, "more": len(answer) == offset + k and offset + k <= LIMITS.offset,
                                 **({"total": answer.total} if answer.listing else {})}
    return {"match": answer.match, "partial": answer.partial, "missing": list(answer.missing), **page,
            "hits": [{**h.to_json(), **({"display": shown(Document(h.id, h.text, h.title))} if display else {})}
                     for h in answer[offset:]]}


@dataclass(frozen=True)
class Service:
    """What every router reads: the followed index, the topic state, the settings and the write token."""

    live: Live
    topics: TopicsState
    settings: ServeSettings
    token: str | None

    @property
    def writable(self) -> bool:
        """Whether writes are possible here (only then does the API description list them)."""
        return self.settings.writable and self.token is not None

    def current(self) -> Served:
        return self.live.current

    def topic_of(self, doc_id: str) -> dict[str, Any] | None:
        return self.topics.topic_of(doc_id)


BEARER = HTTPBearer(auto_error=False, description="The token the server was started with (--writable).")


def writer(service: Service) -> Any:
    """The dependency every write route shares: the token, and at most ``max_writes`` writes waiting per worker."""
    writing = threading.BoundedSemaphore(service.settings.max_writes)

    def hold(request: Request, _: Any = Security(BEARER)):
        authorised(request, service.token, service.settings.writable)
        if not writing.acquire(blocking=False):
            raise ApiError(503, f"{service.settings.max_writes} writes are already waiting on this worker; "
                                "retry shortly", {"Retry-After": "5"})
        try:
            yield
        finally:
            writing.release()

    return Depends(hold)


def documents_router(service: Service, write: Any) -> APIRouter:
    api = APIRouter(tags=["documents"])
    writable = service.writable
    live, wait = service.live, service.settings.lock_wait_seconds

    @api.get("/documents/{doc_id:path}", dependencies=[only("display")], response_model=DocumentOut, response_model_exclude_unset=True,
             responses=errors(404))
    def document(doc_id: str = PATH_ID_PARAM, display: bool = DISPLAY):
        """One paper with its metadata and, when topics are ready, its topic."""
        served = service.current()
        row = served.index.documents.row_of.get(doc_id)
        if row is None:
            raise ApiError(404, f"no document with id {doc_id[:200]!r}")
        doc = served.index.documents.get([row])[0]
        return {**doc.to_record(), "generation": served.index.generation, "topic": service.topic_of(doc.id),
                **({"display": shown(doc)} if display else {})}

    @api.post("/documents", dependencies=[write, only()], status_code=201, response_model=AddOut,
              responses=errors(401, 403, 409, 503), include_in_schema=writable)
    def add(body: AddDocuments):
        """Add abstracts as a new segment (embedding only them); 201 with the generation committed. With
        ``check_duplicates``, each is first judged against the index as ``/duplicates/check`` judges it."""
        documents = [d.document(n) for n, d in enumerate(body.documents)]
        index = Index.load(live.path)
        report = None
        try:
            if body.check_duplicates:
                report = index.add_checked(documents, body.on_duplicate, wait=wait, encoder=live.encoder)
            else:
                index.add(documents, wait=wait, encoder=live.encoder)
        except IdConflictError as exc:
            raise ApiError(409, str(exc).replace(str(live.path), "the index")) from None
        except DuplicateError as exc:
            raise ApiError(409, f'{exc} ("on_duplicate": "skip" or "add")') from None
        served = live.refresh()
        skipped = [] if report is None or body.on_duplicate != "skip" else sorted({p.a for p in report.pairs})
        return {"added": len(documents) - len(skipped), "generation": index.generation,
                "documents": len(served.index), "skipped": skipped,
                **({"duplicates": report.to_json()} if report is not None else {})}

    @api.delete("/documents/{doc_id:path}", dependencies=[write, only()], response_model=RemoveOut,
                responses=errors(401, 403, 404, 503), include_in_schema=writable)
    def remove(doc_id: str = PATH_ID_PARAM):
        """Mark one paper deleted (nothing is rewritten)."""
        index = Index.load(live.path)
        try:
            index.remove([doc_id], wait=wait)
        except UnknownIdError:
            raise ApiError(404, f"no document with id {doc_id[:200]!r}") from None
        served = live.refresh()
        return {"removed": 1, "generation": index.generation, "documents": len(served.index)}

    return api


def topics_router(service: Service) -> APIRouter:
    api = APIRouter(tags=["topics"])

    @api.get("/topics", dependencies=[only("level")], response_model=TopicsOut, responses=errors(404, 503))
    def topics_json(level: int = Query(0, ge=0, le=20)):
        """Topics with labels, keywords, representatives and members (as ``embedsearch topics --json``)."""
        ready = service.topics.require()
        return {**ready.model.to_json(level), "generation": ready.generation}

    @api.get("/topics/over-time", dependencies=[only("field", "by", "bins", "level")], response_model=OverTimeOut,
             responses=errors(404, 503))
    def topics_over_time(field: str | None = Query(None, min_length=1, max_length=200, description="A year or date field."),
                         by: str | None = Query(None, min_length=1, max_length=200, description="A field of classes."),
                         bins: int = Query(10, ge=1, le=100), level: int = Query(0, ge=0, le=20)):
        """Each topic's papers per period of ``field`` (or per value of ``by``), with shares and keywords, as
        ``embedsearch topics --over-time FIELD --json``."""
        from ..topics.over_time import over_time

        ready, index = service.topics.require(), service.current().index
        if (field is None) == (by is None):
            raise ApiError(422, "give field (a year or date) or by (a field of classes), not both")
        found = index.documents.row_of
        rows = [found.get(i) for i in ready.model.ids]
        present = dict(zip([r for r in rows if r is not None], index.documents.get([r for r in rows if r is not None])))
        documents = [present[r] if r is not None else Document(i, " ") for i, r in zip(ready.model.ids, rows)]
        result = over_time(ready.model, documents, field or by, bins, level, by is not None)
        return {**result.to_json(), "generation": ready.generation}

    return api


def index_router(service: Service, write: Any) -> APIRouter:
    api = APIRouter(tags=["index"])
    writable = service.writable

    @api.get("/health", dependencies=[only()], response_model=HealthOut, responses=errors())
    def health():
        served = service.current()
        return {"status": "ok", "generation": served.index.generation, "documents": len(served.index),
                "worker": os.getpid()}

    @api.get("/info", dependencies=[only()], response_model=InfoOut, responses=errors())
    def info():
        """The index (as ``embedsearch info --json``), its filterable fields, and this server's settings."""
        served, topics = service.current(), service.topics
        return {**served.info, "fields": served.fields,
                "writable": service.writable,
                "topics": "ready" if topics.ready else ("off" if not topics.enabled else "computing"),
                "limits": asdict(LIMITS), "bands": bands(served.index.search_settings),
                "reviewers": bool(service.settings.reviewers)}

    @api.post("/compact", dependencies=[write, only()], response_model=CompactOut, responses=errors(401, 403, 503),
              include_in_schema=writable)
    def compact():
        """Merge every segment into one and drop deleted rows."""
        index = Index.load(service.live.path)
        index.compact(wait=service.settings.lock_wait_seconds)
        served = service.live.refresh()
        return {"generation": index.generation, "segments": len(index.snapshot.segments),
                "documents": len(served.index)}

    return api
