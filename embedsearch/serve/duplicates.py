"""The duplicate-check routes: one abstract or a batch judged against the index (JSON, or a CSV report for an
uploaded file), and a paper's near-duplicates within the index; texts rendered for reading on request."""

from __future__ import annotations

import io
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import PlainTextResponse

from ..corpus import Document
from ..corpus.readable import readable
from ..dedup.batch import submissions, write_csv
from ..errors import EmbedsearchError
from ..index import Index
from .api import DISPLAY, PATH_ID_PARAM, Service, only
from .guard import ApiError
from .responses import BatchOut, DuplicatesOut, errors
from .schemas import DuplicateCheck
from .settings import LIMITS


def router(service: Service) -> APIRouter:
    api = APIRouter(tags=["duplicates"])

    @api.post("/duplicates/check", dependencies=[only()], response_model=DuplicatesOut, response_model_exclude_unset=True,
              responses=errors(409))
    def duplicates_check(body: DuplicateCheck):
        """Each new abstract's matches in the index, with verdict, cosine, overlap and shared passages (as
        ``embedsearch dedup --against --json``); nothing is added."""
        documents = body.documents()
        served = service.current()
        report = served.index.check_duplicates(documents, **body.overrides())
        out = {**report.to_json(), "generation": served.index.generation}
        return with_display(out, {d.id: d for d in documents}, by_id(served.index)) if body.display else out

    @api.get("/duplicates/of/{doc_id:path}", dependencies=[only("display")], response_model=DuplicatesOut, response_model_exclude_unset=True,
             responses=errors(404))
    def duplicates_of(doc_id: str = PATH_ID_PARAM, display: bool = DISPLAY):
        """A paper's near-duplicates among the other papers of the index (as ``index.duplicates(of=[id])``)."""
        served = service.current()
        if doc_id not in served.index.documents.row_of:
            raise ApiError(404, f"no document with id {doc_id[:200]!r}")
        out = {**served.index.duplicates(of=[doc_id]).to_json(), "generation": served.index.generation}
        return with_display(out, None, by_id(served.index)) if display else out

    @api.post("/duplicates/check-file", dependencies=[only("name", "format")], response_model=BatchOut,
              responses={200: {"content": {"text/csv": {"schema": {"type": "string"}}},
                               "description": "One row per submission (`format=json`: as JSON)."},
                         **errors()})
    def duplicates_check_file(request: Request, body: bytes = Depends(raw_body),
                              name: str = Query(..., max_length=200, description="The file's name; its suffix "
                                                "says the format (.jsonl, .csv, .parquet, .txt)",
                                                json_schema_extra={"pattern": UPLOAD_NAME}),
                              format: Literal["csv", "json"] = "csv"):  # noqa: A002
        """A batch of submissions (the file itself as the body) judged against the index, as ``dedup --against``
        judges them: one row per submission, its closest flagged match named by id and title, or "no
        duplicate"; CSV (plain columns) or JSON. ``X-Judged`` says how many were read."""
        documents = read_upload(body, name)
        served = service.current()
        rows = submissions(served.index.check_duplicates(documents), documents, by_id(served.index))
        if format == "json":
            return {"judged": len(documents), "generation": served.index.generation, "submissions": rows}
        return csv_rows(rows, len(documents))

    return api


async def raw_body(request: Request) -> bytes:
    return await request.body()


UPLOAD_NAME = r"^[^\x00/]+\.(?:jsonl|csv|parquet|txt|JSONL|CSV|PARQUET|TXT)$"


def read_upload(body: bytes, name: str) -> list[Document]:
    """The records of an uploaded corpus file, read as the CLI reads files (errors name the upload, not a temp file)."""
    from ..corpus import read_sources

    suffix = Path(name).suffix.lower()
    if suffix not in (".jsonl", ".csv", ".parquet", ".txt"):
        raise ApiError(400, f"{name}: a batch is a .jsonl, .csv, .parquet or .txt file")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"upload{suffix}"
        path.write_bytes(body)
        try:
            documents = read_sources([path]).documents
        except EmbedsearchError as exc:
            raise ApiError(400, str(exc).replace(str(path), name)) from None
    if len(documents) > LIMITS.add:
        raise ApiError(400, f"{name}: {len(documents):,} records; a batch holds at most {LIMITS.add:,}: split it")
    return documents


def by_id(index: Index) -> Callable[[str], Document]:
    docs = index.documents
    return lambda doc_id: docs.get([docs.row_of[doc_id]])[0]


def csv_rows(rows: list[dict[str, Any]], judged: int) -> PlainTextResponse:
    """The batch's rows as CSV a spreadsheet opens: titles as plain text, numbers as numbers."""
    out = io.StringIO()
    write_csv(rows, out)
    return PlainTextResponse(out.getvalue(), media_type="text/csv",
                             headers={"X-Judged": str(judged), "Content-Disposition": "attachment; filename=duplicates.csv"})


def with_display(out: dict[str, Any], new: dict[str, Document] | None,
                 indexed: Callable[[str], Document]) -> dict[str, Any]:
    """A duplicate report's pairs with both texts, their titles (or first sentences) and the passages rendered
    for reading; side ``a`` is ``new`` (abstracts being checked) or, without it, a document ``indexed`` gives
    by id, as side ``b`` always is."""
    for group in out["groups"]:
        for pair in group["pairs"]:
            a = (new[pair["a"]] if new is not None else indexed(pair["a"])).readable(keep_math=True)
            b = indexed(pair["b"]).readable(keep_math=True)
            pair["display"] = {"a": a.text, "b": b.text, "a_title": a.title or a.first_sentence(),
                               "b_title": b.title or b.first_sentence(),
                               "passages": [readable(p) for p in pair["passages"]]}
    return out
