"""The FastAPI application: ``create_app`` for one index, ``from_environment`` for uvicorn's worker
processes (each reads the same settings from the environment and follows the index on its own)."""

from __future__ import annotations

import json
import os
from contextlib import asynccontextmanager
from dataclasses import asdict
from pathlib import Path

from fastapi import FastAPI
from fastapi_offline import FastAPIOffline  # /docs with Swagger UI served by the app, not a CDN

from ..index import PartsOf
from ..version import __version__
from .guard import install
from .live import Live
from .schemas import state_filters
from .settings import TOKEN_ENV, ServeSettings
from .topics import TopicsState

CONFIG_ENV = "EMBEDSEARCH_SERVE_CONFIG"


def create_app(path: str | Path, settings: ServeSettings = ServeSettings(), token: str | None = None,
               parts: PartsOf | None = None) -> FastAPI:
    """The service for the index or cluster at ``path``: JSON API, web page and topic map. Write endpoints
    need ``settings.writable`` and ``token``. With ``parts`` (a cluster's shards at a cut, on Ray Serve),
    searches are answered by the shards where they run."""
    from . import api, duplicates, page, recommend, search, watches

    topics = TopicsState(settings.topics, settings.topics_retry_seconds)
    live = Live(Path(path), settings, on_change=topics.want, parts=parts)
    topics.want(live.current)
    @asynccontextmanager
    async def lifespan(app: FastAPI):
        import anyio.to_thread

        anyio.to_thread.current_default_thread_limiter().total_tokens = settings.threads
        yield
        live.close()

    app = FastAPIOffline(title="embedsearch", version=__version__, redirect_slashes=False, lifespan=lifespan,
                  description="Find related papers, topics and near-duplicates in a corpus of abstracts.")
    install(app)
    service = api.Service(live, topics, settings, token)
    write = api.writer(service)
    for router in (search.router(service), api.documents_router(service, write), api.topics_router(service),
                   duplicates.router(service), api.index_router(service, write), recommend.router(service),
                   watches.router(service)):
        app.include_router(router)
    if settings.reviewers:
        from ..reviewers import Matcher
        from .reviewers import router

        app.include_router(router(service, Matcher.open(settings.reviewers, live.current.index.model_name,
                                                   precision=live.current.index.manifest.model.settings.precision)))
    app.include_router(page.router(live, topics))
    app.state.live, app.state.topics = live, topics

    def openapi() -> dict:
        """FastAPI's description, with the filters this index answers stated (its fields, as at the start)."""
        if app.openapi_schema is None:
            state_filters(FastAPI.openapi(app), live.current.index.snapshot.field_kinds)
        return app.openapi_schema

    app.openapi = openapi

    return app


def environment(path: Path, settings: ServeSettings) -> dict[str, str]:
    """What ``from_environment`` reads: the index and settings (the token travels in its own variable)."""
    return {CONFIG_ENV: json.dumps({"path": str(path), "settings": asdict(settings)})}


def from_environment() -> FastAPI:
    """uvicorn's factory in each worker process."""
    config = json.loads(os.environ[CONFIG_ENV])
    return create_app(config["path"], ServeSettings(**config["settings"]), os.environ.get(TOKEN_ENV) or None)
