"""The web page at ``/`` (static HTML, CSS and JavaScript shipped with the package: no CDN, works
offline) and the topic map at ``/map``, rendered from the topics the service holds, with plotly served
by the app and a search box that asks the API."""

from __future__ import annotations

import html
import json
import re
from functools import lru_cache
from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse, HTMLResponse, Response

from .live import Live
from .topics import TopicsState

STATIC = Path(__file__).parent / "static"
_TYPES = {".js": "text/javascript", ".css": "text/css", ".html": "text/html", ".png": "image/png",
          ".woff2": "font/woff2"}


@lru_cache(maxsize=1)
def _plotly() -> Path:
    import plotly

    return Path(plotly.__file__).parent / "package_data" / "plotly.min.js"


@lru_cache(maxsize=1)
def _shipped() -> frozenset[str]:
    """The page's own files, KaTeX's among them (``katex/...``): only these names are ever opened."""
    return frozenset(p.relative_to(STATIC).as_posix() for p in STATIC.rglob("*") if p.is_file())


def files() -> APIRouter:
    """The page itself, a page per paper and the files they load: all a front end needs that is not the API."""
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

    @page.get("/static/{name:path}")
    def static(name: str) -> Response:
        if name == "plotly.min.js":
            return FileResponse(_plotly(), media_type="text/javascript",
                                headers={"Cache-Control": "public, max-age=86400"})
        if name not in _shipped():
            from .guard import error

            return error(404, f"no such file {name[:100]!r}")
        file = STATIC / name
        cache = {"Cache-Control": "public, max-age=86400"} if name.startswith("katex/") else None
        return FileResponse(file, media_type=_TYPES.get(file.suffix, "application/octet-stream"), headers=cache)

    return page


PREPARING = """<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><meta http-equiv="refresh" content="10">
<title>Topic map: being prepared · embedsearch</title><link rel="stylesheet" href="/static/style.css"></head>
<body><main><h1>The topic map is being prepared</h1>
<p role="status">Topics are being fitted for this index; on a few thousand papers that takes a minute or two.
This page reloads itself every 10 seconds and shows the map when it is ready.</p>
<p><a href="/">Search the papers meanwhile</a></p></main></body></html>"""

FAILED = """<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><meta http-equiv="refresh" content="WAIT">
<title>Topic map: not ready · embedsearch</title><link rel="stylesheet" href="/static/style.css"></head>
<body><main><h1>The topic map is not ready</h1>
<p role="alert">The last attempt to fit topics failed: WHY</p>
<p>It is tried again in WAIT seconds; this page reloads itself then.</p>
<p><a href="/">Search the papers meanwhile</a></p></main></body></html>"""


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
                return HTMLResponse(PREPARING)
            wait = topics.retry_in()
            return HTMLResponse(FAILED.replace("WAIT", str(wait)).replace("WHY", html.escape(topics.failure)),
                                503, {"Retry-After": str(wait)})
        ready = topics.require()
        model = check_level(ready.model, level)
        key = (ready.generation, level)
        if key not in rendered:
            index = live.current.index
            documents = index.documents if index.generation == ready.generation else _documents(live, ready)
            shards = f" in {len(index.snapshot.parts)} shards" if index.snapshot.parts else ""
            title = f"{index.name}: {len(model.ids)} papers{shards}, {len(model.topics(level))} topics"
            rendered.clear()
            page_html = render_html(model, documents, title, level, plotly_src="/static/plotly.min.js",
                                    search_api="/search")
            field = time_field(live.current.fields)
            rendered[key] = page_html if field is None else \
                page_html.replace("</body>", over_time_panel(field, level) + "</body>", 1)
        return HTMLResponse(rendered[key])

    return page


def time_field(fields: list[dict]) -> str | None:
    """The field a "Topics over time" chart reads: one named for a year or a date, holding numbers or dates."""
    named = [f for f in fields if re.search(r"year|date", f["name"], re.I) and f["kind"] in ("integer", "number", "text")]
    return named[0]["name"] if named else None


def over_time_panel(field: str, level: int) -> str:
    """A button on the map that opens the topics' shares per period of ``field`` (``/topics/over-time``), drawn
    with the page's plotly: the eight largest topics shown, the rest in the legend, keywords on hover."""
    return _OVER_TIME.replace("FIELD_JSON", json.dumps(field)).replace("LEVEL", str(int(level)))


_OVER_TIME = """
<button id="over-time-open" type="button" style="position:fixed;right:12px;bottom:12px;z-index:9">Topics over time</button>
<div id="over-time" role="dialog" aria-label="Topics over time" style="display:none;position:fixed;inset:4%;z-index:10;
 background:#fff;border:1px solid #bbb;box-shadow:0 4px 24px rgba(0,0,0,.25);padding:10px;flex-direction:column">
 <p style="margin:0 0 6px"><strong>Topics over time</strong> <span id="over-time-note"></span>
 <button id="over-time-close" type="button" style="float:right">Close</button></p>
 <div id="over-time-plot" style="flex:1;min-height:240px"></div>
</div>
<script>
(function () {
  const field = FIELD_JSON, box = document.getElementById("over-time"), note = document.getElementById("over-time-note");
  document.getElementById("over-time-close").onclick = () => { box.style.display = "none"; };
  document.getElementById("over-time-open").onclick = async () => {
    box.style.display = "flex";
    note.textContent = "share of each period's papers, by " + field;
    try {
      const response = await fetch(`/topics/over-time?field=${encodeURIComponent(field)}&level=LEVEL`);
      const body = await response.json();
      if (!response.ok) throw new Error(body.error || response.statusText);
      const byTopic = new Map();
      for (const r of body.rows) if (r.topic >= 0) byTopic.set(r.topic, [...(byTopic.get(r.topic) || []), r]);
      const lines = [...byTopic.values()].sort((a, b) => b.reduce((s, r) => s + r.count, 0) - a.reduce((s, r) => s + r.count, 0));
      const traces = lines.map((rows, i) => ({x: rows.map((r) => r.period), y: rows.map((r) => r.share), mode: "lines+markers",
        name: `${rows[0].topic}: ${rows[0].label}`, visible: i < 8 ? true : "legendonly", hoverinfo: "text",
        text: rows.map((r) => `${r.label}<br>${r.period}: ${r.count} papers (${Math.round(r.share * 100)}%)<br>${r.keywords.join(", ")}`)}));
      Plotly.newPlot("over-time-plot", traces, {margin: {l: 50, r: 10, t: 10, b: 40}, yaxis: {tickformat: ".0%"},
        xaxis: {title: {text: field}, type: "category"}, legend: {orientation: "h", y: -0.2}}, {responsive: true, displaylogo: false});
    } catch (e) { note.textContent = "could not load the chart: " + e.message; }
  };
})();
</script>
"""


def _documents(live: Live, ready):
    from ..index import Index

    return Index.load(live.path, generation=ready.generation).documents
