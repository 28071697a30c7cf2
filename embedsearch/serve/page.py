"""The web page at ``/`` (static HTML, CSS and JavaScript shipped with the package: no CDN, works
offline) and the topic map at ``/map``, rendered from the topics the service holds, with plotly served
by the app and a search box that asks the API."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse, HTMLResponse, Response

from .live import Live
from .topics import TopicsState

STATIC = Path(__file__).parent / "static"
_TYPES = {".js": "text/javascript", ".css": "text/css", ".html": "text/html", ".png": "image/png"}


@lru_cache(maxsize=1)
def _plotly() -> Path:
    import plotly

    return Path(plotly.__file__).parent / "package_data" / "plotly.min.js"


@lru_cache(maxsize=1)
def _shipped() -> frozenset[str]:
    """The page's own files: only these names are ever opened."""
    return frozenset(p.name for p in STATIC.iterdir() if p.is_file())


def files() -> APIRouter:
    """The page itself, a page per paper and the files they load: all a front end needs that is not the API
    (the cluster's ingress serves these too)."""
    page = APIRouter(include_in_schema=False)

    @page.api_route("/", methods=["GET", "HEAD"])
    def home() -> FileResponse:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    @page.get("/paper/{doc_id:path}")
    def paper(doc_id: str) -> FileResponse:
        """A page per paper (a link to share): the page's script shows the paper, its similar papers and
        near-duplicates; a missing id is said on the page."""
        return FileResponse(STATIC / "index.html", media_type="text/html")

    @page.get("/favicon.ico")
    def favicon() -> Response:
        """No icon, said without an error (browsers ask for one on every page)."""
        return Response(status_code=204)

    @page.get("/static/{name}")
    def static(name: str) -> Response:
        if name == "plotly.min.js":
            return FileResponse(_plotly(), media_type="text/javascript",
                                headers={"Cache-Control": "public, max-age=86400"})
        if name not in _shipped():
            from .guard import error

            return error(404, f"no such file {name[:100]!r}")
        file = STATIC / name
        return FileResponse(file, media_type=_TYPES.get(file.suffix, "application/octet-stream"))

    return page


def check_level(model, level: int):
    """The model, or the API's 422 when the map has no such level (both servers' ``/map``)."""
    if not 0 <= level < len(model.levels):
        from .guard import ApiError

        raise ApiError(422, f"level {level} does not exist; this map has levels 0 to {len(model.levels) - 1}")
    return model


def router(live: Live, topics: TopicsState) -> APIRouter:
    page = APIRouter(include_in_schema=False)
    page.include_router(files())
    rendered: dict[tuple[int, int], str] = {}

    @page.get("/map")
    def topic_map(level: int = 0) -> HTMLResponse:
        """The topic map of the generation topics were last brought up to; searching rings hits via the API."""
        from ..topics.maps import render_html

        ready = topics.require()
        model = check_level(ready.model, level)
        key = (ready.generation, level)
        if key not in rendered:
            index = live.current.index
            documents = index.documents if index.generation == ready.generation else _documents(live, ready)
            title = f"{index.name}: {len(model.ids)} papers, {len(model.topics(level))} topics"
            rendered.clear()
            rendered[key] = render_html(model, documents, title, level, plotly_src="/static/plotly.min.js",
                                        search_api="/search")
        return HTMLResponse(rendered[key])

    return page


def _documents(live: Live, ready):
    from ..index import Index

    return Index.load(live.path, generation=ready.generation).documents
