"""What stands between a request and the index: the body-size limit, the bearer token for writes, and
one JSON error shape, ``{"error": "<one line>", "status": N}``, for every failure. Statuses say whose
fault it is: 4xx for the request (400 bad input, 401 no token, 403 a wrong token or a read-only server, 404
unknown id or route, 413/414
too large, 422 malformed body or field), 503 for a busy index, 500 only for a fault of the server."""

from __future__ import annotations

import hmac
import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from ..errors import (CorruptIndexError, DuplicateError, EmbedsearchError, EmptyFilterError, FieldConflictError,
                      IdConflictError, IndexLockedError, InputError, UnknownIdError)
from .settings import LIMITS

log = logging.getLogger("embedsearch.serve")


class ApiError(Exception):
    """A refusal with its status and a one-line message."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status = status
        self.headers = headers


def error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message, "status": status}, status_code=status, headers=headers)


def _field(location: tuple[Any, ...]) -> str:
    parts = [str(p) for p in location if p not in ("body", "query", "path")]
    return ".".join(parts) or "body"


def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
    first = exc.errors()[0]
    if first.get("type") == "json_invalid":
        return error(422, "the request body is not valid JSON; send a JSON object (Content-Type: application/json)")
    message = str(first.get("msg", "invalid")).removeprefix("Value error, ")
    if first.get("type") == "string_pattern_mismatch":
        message = "must hold text (not blank, without NUL characters)"
    return error(422, f"{_field(tuple(first.get('loc', ())))}: {message}"
                 + (f" (and {len(exc.errors()) - 1} more problem(s))" if len(exc.errors()) > 1 else ""))


def _http(request: Request, exc: HTTPException) -> JSONResponse:
    messages = {404: f"no such endpoint {request.url.path!r}; see /docs for the API",
                405: f"{request.method} is not allowed on {request.url.path}; see /docs"}
    headers = getattr(exc, "headers", None)
    if exc.status_code == 405:
        headers = {**(headers or {}), "Allow": ", ".join(_allowed(request))}
    return error(exc.status_code, messages.get(exc.status_code, str(exc.detail)), headers)


def _allowed(request: Request) -> list[str]:
    """Every method some route serves on this path (Starlette's 405 names only the first route's), less the
    writes a read-only server refuses (those it leaves out of its schema)."""
    from starlette.routing import Match

    def serves(route, method: str) -> bool:
        refused = method in ("DELETE", "PATCH", "POST", "PUT") and not getattr(route, "include_in_schema", True)
        return not refused and route.matches({**request.scope, "method": method})[0] == Match.FULL

    return [m for m in ("DELETE", "GET", "HEAD", "PATCH", "POST", "PUT")
            if any(serves(route, m) for route in _routes(request.app.routes))]


def _routes(routes):
    """Every route, those of included routers too (FastAPI keeps those behind one entry per router; this
    app includes them without a prefix)."""
    for route in routes:
        inner = getattr(route, "original_router", None)
        yield from (_routes(inner.routes) if inner is not None else [route])


STATUS: tuple[tuple[type[EmbedsearchError], int], ...] = (
    (IndexLockedError, 503), (CorruptIndexError, 500), (UnknownIdError, 404), (IdConflictError, 409),
    (FieldConflictError, 409), (DuplicateError, 409), (EmptyFilterError, 409), (InputError, 400))


def _ours(request: Request, exc: EmbedsearchError) -> JSONResponse:
    """Errors map to statuses by class (the first that matches), never by their text."""
    status = next((code for kind, code in STATUS if isinstance(exc, kind)), 500)
    message = " ".join(str(exc).split())
    if isinstance(exc, CorruptIndexError):
        log.error("damaged index: %s", exc)
        message = f"the index is damaged: {message}"
    return error(status, message, {"Retry-After": "5"} if status == 503 else None)


def _api(request: Request, exc: ApiError) -> JSONResponse:
    return error(exc.status, str(exc), exc.headers)


def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.exception("unexpected error on %s %s", request.method, request.url.path)
    return error(500, f"internal error ({type(exc).__name__}); the server log has the details")


def install(app: FastAPI) -> None:
    """Register the JSON error handlers and the body limit."""
    app.add_exception_handler(RequestValidationError, _validation)
    app.add_exception_handler(HTTPException, _http)
    app.add_exception_handler(EmbedsearchError, _ours)
    app.add_exception_handler(ApiError, _api)
    app.add_exception_handler(Exception, _unexpected)
    app.add_middleware(BodyLimit)


class BodyLimit:
    """Refuse a body over ``LIMITS.body_bytes`` with 413 before it reaches a route: by its declared length,
    or while it streams in (chunked uploads declare none). A path holding a control character is refused
    too: route patterns stop at a line break, so ``/documents/t1%0A`` would otherwise act on ``t1``."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        if any(ord(ch) < 32 or ord(ch) == 127 for ch in scope["path"]):
            return await error(400, "the path holds a line break or control character; no id does, so send the "
                                    "id exactly")(scope, receive, send)
        too_big = error(413, f"request body over the {LIMITS.body_bytes:,}-byte limit; send fewer or shorter "
                             "abstracts per request")
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > LIMITS.body_bytes):
            if not declared.isdigit():
                return await error(400, "Content-Length is not a number")(scope, receive, send)
            return await too_big(scope, receive, send)
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > LIMITS.body_bytes:
                return await too_big(scope, receive, send)
            if not message.get("more_body", False):
                break
        body, sent = b"".join(chunks), False

        async def replay():
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        return await self.app(scope, replay, send)


def authorised(request: Request, token: str | None, writable: bool) -> None:
    """Allow a write only on a ``--writable`` server with the right bearer token: 401 (with
    ``WWW-Authenticate: Bearer``) when no bearer token was sent, 403 for a wrong one or a read-only server."""
    if not writable or token is None:
        raise ApiError(403, "this server is read-only; start it with --writable and a token to allow writes")
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        raise ApiError(401, "this write needs the server's token: send 'Authorization: Bearer <token>'",
                       {"WWW-Authenticate": 'Bearer realm="embedsearch"'})
    if not hmac.compare_digest(value.strip().encode(), token.encode()):
        raise ApiError(403, "wrong token; send the token the server was started with",
                       {"WWW-Authenticate": 'Bearer realm="embedsearch", error="invalid_token"'})
