"""A cluster served on Ray Serve: one deployment per shard, each with replicas, and an ingress that encodes the
query once, fans out through deployment handles (Ray Serve's model composition), merges as ``shards.merge``
does and answers ``GET``/``POST /search``, ``GET``/``POST /similar``, ``GET /documents/{id}`` and ``GET /info``
in the single-index server's shapes (with ``cut`` where one index says ``generation``). It serves the web page
too (``serve.page.files``), ``/topics`` and ``/map`` over every shard (``serve.cluster_topics``) and the
duplicate checks (``/duplicates/of/{id}``, ``/duplicates/check``, ``/duplicates/check-file``) over every
shard, judged in the ingress from the shard folders (``Index.duplicates`` over the cluster, ``Index.check_duplicates`` over the cluster). Started
writable with a token, ``POST /documents`` and ``DELETE /documents/{id}`` write each document to the shard its
id routes to and publish the next cut (``Index.add`` over the cluster/``remove``), which the replicas read from their next
call. A call that fails on a dead replica is sent again (Ray Serve routes it to a live one); a shard that
still does not answer within ``ClusterSettings.shard_timeout_s`` is named in ``missing`` and the answer says
``"partial": true``. ``POST /compact`` (writable) merges every shard's segments as the next cut."""

import asyncio
import os
from pathlib import Path
from typing import Any

from ..errors import require
from ..shards import Shard
from ..store import cuts
from .ingress import Ingress
from .schemas import AddDocuments, DuplicateCheck, SearchBatch, SimilarText
from .settings import ClusterSettings


class ShardServer:
    """A replica of one shard's deployment: the shard read at the generation each call names."""

    def __init__(self, path: str):
        self.path = path
        self._open: dict[int, Shard] = {}

    def _at(self, generation: int) -> Shard:
        if generation not in self._open:
            self._open = {g: s for g, s in self._open.items() if g > generation - 2}
            self._open[generation] = Shard(self.path, generation)
        return self._open[generation]

    def stats(self, generation: int, query: str):
        return self._at(generation).stats(query)

    def candidates(self, generation: int, *args: Any):
        return self._at(generation).candidates(*args)

    def documents(self, generation: int, rows: list[int]):
        return self._at(generation).documents(rows)

    def vector(self, generation: int, doc_id: str):
        return self._at(generation).vector(doc_id)

    def size(self, generation: int) -> int:
        return len(self._at(generation).index)

    def pid(self) -> int:
        return os.getpid()


def application(root: str | Path, settings: ClusterSettings = ClusterSettings(), token: str | None = None):
    """The Ray Serve application of the cluster at ``root``: ``serve.run(application(root))`` serves it
    (writes only with ``settings.writable`` and the bearer ``token``)."""
    serve = require("ray.serve", "cluster")
    from fastapi import Depends, FastAPI, Query, Request  # routes are real annotations (no __future__ import): Ray Serve re-binds
    #                                     them where a string one such as "SimilarText" cannot be resolved

    from fastapi.responses import HTMLResponse

    from .guard import authorised, install
    from .page import files

    root = Path(root).resolve()
    names = cuts.shard_names(root)
    app = FastAPI(title="embedsearch cluster")
    install(app)

    def write(request: Request) -> None:
        authorised(request, token, settings.writable)

    app.include_router(files())

    @serve.deployment(name="ingress", ray_actor_options={"num_cpus": settings.cpus})
    @serve.ingress(app)
    class Front(Ingress):
        @app.get("/search")
        async def get_search(self, q: str, k: int = 10, mode: str | None = None,
                             filter: list[str] = Query(default=[]),  # noqa: A002
                             display: bool = False) -> dict[str, Any]:
            return await self.search(q, k, mode, filter, display)

        @app.post("/search")
        async def post_search(self, body: SearchBatch) -> dict[str, Any]:
            answers = await asyncio.gather(*(self.search(q, body.k, body.mode, body.filters, body.display)
                                             for q in body.queries))
            return {"cut": max(a["cut"] for a in answers), "results": answers}

        @app.get("/similar/{doc_id:path}")
        async def get_similar(self, doc_id: str, k: int = 10, display: bool = False) -> dict[str, Any]:
            return await self.similar(doc_id, None, k, display)

        @app.post("/similar")
        async def post_similar(self, body: SimilarText) -> dict[str, Any]:
            return await self.similar(None, body.text, body.k, body.display)

        @app.get("/documents/{doc_id:path}")
        async def get_document(self, doc_id: str, display: bool = False) -> dict[str, Any]:
            return await self.document(doc_id, display)

        @app.get("/info")
        async def get_info(self) -> dict[str, Any]:
            return await self.info()

        @app.get("/duplicates/of/{doc_id:path}")
        async def get_duplicates_of(self, doc_id: str, display: bool = False) -> dict[str, Any]:
            return await self.duplicates_of(doc_id, display)

        @app.post("/duplicates/check")
        async def post_duplicates_check(self, body: DuplicateCheck) -> dict[str, Any]:
            return await self.check_duplicates(body.documents(), body.display, **body.overrides())

        @app.post("/duplicates/check-file")
        async def post_duplicates_check_file(self, request: Request,
                                             name: str = Query(..., max_length=200)) -> Any:
            return await self.check_file(await request.body(), name)

        @app.get("/topics")
        async def get_topics(self, level: int = Query(0, ge=0, le=20)) -> dict[str, Any]:
            return await asyncio.to_thread(self.topics.json, level)

        @app.get("/map", include_in_schema=False)
        async def get_map(self, level: int = 0) -> HTMLResponse:
            return HTMLResponse(await asyncio.to_thread(self.topics.map, level))

        @app.post("/documents", status_code=201, dependencies=[Depends(write)])
        async def post_documents(self, body: AddDocuments) -> dict[str, Any]:
            return await self.add(body)

        @app.delete("/documents/{doc_id:path}", dependencies=[Depends(write)])
        async def delete_document(self, doc_id: str) -> dict[str, Any]:
            return await self.remove(doc_id)

        @app.post("/compact", dependencies=[Depends(write)])
        async def post_compact(self) -> dict[str, Any]:
            return await self.compact()

        @app.get("/health")
        async def health(self) -> dict[str, Any]:
            return {"status": "ok", "shards": self.names, "cut": cuts.newest(self.root).number}

    shard = serve.deployment(ShardServer)
    handles = [shard.options(name=name, num_replicas=settings.replicas, ray_actor_options={"num_cpus": settings.cpus})
               .bind(str(root / cuts.SHARDS / name)) for name in names]
    return Front.bind(str(root), settings, token, *handles)


def run_on_ray(root: Path, settings: ClusterSettings, token: str | None, host: str, port: int,
               address: str | None) -> None:
    """``serve --index CLUSTER --engine ray``: join (or start) a Ray cluster and serve until stopped."""
    from ..errors import InputError
    from .run import TOKEN_ENV

    if settings.writable and token is None:
        raise InputError(f"--writable needs a token: set {TOKEN_ENV} or pass --token-file FILE")
    ray = require("ray", "cluster")
    serve = require("ray.serve", "cluster")
    ray.init(address=address, include_dashboard=False)
    serve.start(http_options={"host": host, "port": port})
    serve.run(application(root, settings, token), name="embedsearch", route_prefix="/", blocking=True)
