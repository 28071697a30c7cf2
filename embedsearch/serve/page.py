"""The web page at ``/`` (``embedsearch/web``: HTML, CSS and ES modules shipped with the package, no CDN,
works offline) and the topic map at ``/map``, rendered from the topics the service holds, with a search box
that asks the API; plotly, served by the app, draws its topics over time."""

from __future__ import annotations

import html
import json
import re
from functools import lru_cache
from pathlib import Path
from string import Template

from fastapi import APIRouter
from fastapi.responses import FileResponse, HTMLResponse, Response

from ..web import FOLDER, SERVED, shipped
from ..web import text as web_text
from .live import Live
from .topics import TopicsState

HOME = FOLDER / "page" / "index.html"


@lru_cache(maxsize=1)
def _plotly() -> Path:
    import plotly

    return Path(plotly.__file__).parent / "package_data" / "plotly.min.js"


KATEX = '<link rel="stylesheet" href="/static/vendor/katex/katex.min.css">'  # the map panel's math; the module loads itself


def files() -> APIRouter:
    """The page itself, a page per paper and the files they load: all a front end needs that is not the API."""
    page = APIRouter(include_in_schema=False)

    @page.api_route("/", methods=["GET", "HEAD"])
    def home() -> FileResponse:
        return FileResponse(HOME, media_type="text/html")

    @page.get("/paper/{doc_id:path}")
    def paper(doc_id: str) -> FileResponse:
        """A page per paper (a link to share): the page's script shows the paper, its similar papers and
        near-duplicates; a missing id is said on the page."""
        return FileResponse(HOME, media_type="text/html")

    @page.get("/favicon.ico")
    def favicon() -> Response:
        """No icon, said without an error (browsers ask for one on every page)."""
        return Response(status_code=204)

    @page.get("/static/{name:path}")
    def static(name: str) -> Response:
        if name == "plotly.min.js":
            return FileResponse(_plotly(), media_type="text/javascript",
                                headers={"Cache-Control": "public, max-age=86400"})
        if name not in shipped():
            from .guard import error

            return error(404, f"no such file {name[:100]!r}")
        file = FOLDER / name
        cache = {"Cache-Control": "public, max-age=86400"} if name.startswith("vendor/") else None
        return FileResponse(file, media_type=SERVED.get(file.suffix, "application/octet-stream"), headers=cache)

    return page


WAITING = Template(web_text("templates/map_waiting.html"))


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

        if topics.enabled and topics.ready is None:
            if not topics.failure:
                return HTMLResponse(WAITING.substitute(
                    wait=10, state="being prepared", role="status", message="Topics are being fitted for this index; "
                    "on a few thousand papers that takes a minute or two.", then="This page reloads itself every 10 "
                    "seconds and shows the map when it is ready."))
            wait = topics.retry_in()
            return HTMLResponse(WAITING.substitute(
                wait=wait, state="not ready", role="alert", message="The last attempt to fit topics failed: "
                f"{html.escape(topics.failure)}", then=f"It is tried again in {wait} seconds; this page reloads "
                "itself then."), 503, {"Retry-After": str(wait)})
        ready = topics.require()
        model = check_level(ready.model, level)
        key = (ready.generation, level)
        if key not in rendered:
            index = live.current.index
            documents = index.documents if index.generation == ready.generation else _documents(live, ready)
            shards = f" in {len(index.snapshot.parts)} shards" if index.snapshot.parts else ""
            title = f"{index.name}: {len(model.ids)} papers{shards}, {len(model.topics(level))} topics"
            rendered.clear()
            page_html = render_html(model, documents, title, level, search_api="/search")
            field = time_field(live.current.fields)
            page_html = page_html.replace("</head>", KATEX + "</head>", 1)  # the paper panel renders math
            rendered[key] = page_html if field is None else \
                page_html.replace("</body>", over_time_panel(field, level) + "</body>", 1)
        return HTMLResponse(rendered[key])

    return page


def time_field(fields: list[dict]) -> str | None:
    """The field a "Topics over time" chart reads: one named for a year or a date, holding numbers or dates."""
    named = [f for f in fields if re.search(r"year|date", f["name"], re.I) and f["kind"] in ("integer", "number", "text")]
    return named[0]["name"] if named else None


def over_time_panel(field: str, level: int) -> str:
    """The "Topics over time" button and chart (``web/map/over_time.js``) for ``field``, added to the served map."""
    config = json.dumps({"field": field, "level": int(level)}).replace("</", "<\\/")
    return ('<script src="/static/plotly.min.js"></script>\n'
            f'<script type="application/json" id="over-time-config">{config}</script>\n'
            '<script type="module" src="/static/map/over_time.js"></script>\n')


def _documents(live: Live, ready):
    from ..index import Index

    return Index.load(live.path, generation=ready.generation).documents
