"""Topic maps: a self-contained interactive HTML page (plotly, inlined, works offline) and a static PNG
(matplotlib). The page shows every paper coloured by topic with labels at topic centres; hovering
shows the first sentence, the search box highlights matching papers, clicking shows the abstract.
Above ``max_points`` papers the page draws a seeded sample that keeps every topic's share, so a
million-paper corpus still gives a page a browser can open; the PNG always draws every paper."""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..corpus import Document
from ..errors import InputError
from ..files import durable_file
from ..store.docstore import DocumentStore
from ..store.output import check_output
from ..store.snapshot import LiveDocuments
from .model import TopicModel

WEBGL_ABOVE = 5000
TOOLBAR_MARGIN = 44  # px above the plot: plotly's toolbar sits there instead of over the legend
MAX_POINTS = 20_000

_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body {{ font-family: system-ui, sans-serif; margin: 0; display: flex; height: 100vh; }}
#side {{ width: 360px; padding: 12px; overflow-y: auto; border-right: 1px solid #ddd; box-sizing: border-box; }}
#map {{ flex: 1; min-width: 0; }}
#links {{ font-size: 13px; margin: 0 0 8px; }}
@media (max-width: 700px) {{
  body {{ flex-direction: column; height: auto; }}
  #side {{ width: 100%; border-right: none; border-bottom: 1px solid #ddd; max-height: 45vh; }}
  #map, #plotly-map {{ height: 70vh !important; }}
}}
#search {{ width: 100%; padding: 6px; font-size: 14px; box-sizing: border-box; }}
#count {{ color: #555; margin: 6px 0 12px; font-size: 13px; }}
#paper h3 {{ font-size: 14px; margin: 8px 0 4px; }} #paper p {{ font-size: 13px; line-height: 1.4; }}
.topic {{ color: #555; font-size: 12px; }}
</style></head><body>
<div id="side"><h2 style="font-size:16px">{title}</h2>{links}
<input id="search" type="search" placeholder="{placeholder}" aria-label="search">
<div id="count">{counted}</div><div id="paper"><p>Click a point to read its abstract.</p></div></div>
<div id="map">{plot}</div>
<script>
const DOCS = {docs};
const API = {api};
const plot = document.getElementById("plotly-map");
const BY_ID = new Map(DOCS.map(d => [d.id, d]));
const COUNTED = "{counted}";
async function show(i) {{
  const d = DOCS[i];
  document.getElementById("paper").innerHTML = "";
  const h = document.createElement("h3"); h.textContent = d.title || d.id;
  const t = document.createElement("div"); t.className = "topic"; t.textContent = d.id + " · " + d.label;
  const p = document.createElement("p"); p.textContent = d.text || "Loading…";
  document.getElementById("paper").append(h, t, p);
  if (API) {{  // served: the text comes from the API when asked for, not inside the page
    fetch("/documents/" + encodeURIComponent(d.id) + "?display=true").then(r => r.json())
      .then(doc => {{ p.textContent = doc.display ? doc.display.text : doc.error; }})
      .catch(() => {{ p.textContent = "The abstract could not be loaded."; }});
    const a = document.createElement("a"); a.href = "/paper/" + encodeURIComponent(d.id); a.textContent = "Open the paper's page";
    document.getElementById("paper").append(a);
  }}
}}
plot.on("plotly_click", ev => show(ev.points[0].customdata[0]));
const HIGHLIGHT = plot.data.length - 1;
function ring(hits, note) {{
  Plotly.restyle(plot, {{x: [hits.map(d => d.x)], y: [hits.map(d => d.y)], customdata: [hits.map(d => [d.i])],
                        text: [hits.map(d => d.id)]}}, [HIGHLIGHT]);
  const count = document.getElementById("count");
  count.textContent = note === null ? COUNTED : note;
  count.dataset.matches = hits.length;
}}
function wordSearch(q) {{
  const hits = DOCS.filter(d => (d.id + " " + (d.title || "") + " " + d.text).toLowerCase().includes(q.toLowerCase()));
  ring(hits, hits.length + " matching papers highlighted");
}}
let pending = null, timer = null;
async function meaningSearch(q) {{
  if (pending) pending.abort();
  pending = new AbortController();
  try {{
    const r = await fetch(API + "?k=10&q=" + encodeURIComponent(q), {{signal: pending.signal}});
    const body = await r.json();
    if (!r.ok) {{ ring([], r.status === 422 ? "Type some words to search for." : body.error); return; }}
    const hits = body.hits.filter(h => h.match !== "distant").map(h => BY_ID.get(h.id)).filter(Boolean);
    ring(hits, hits.length ? hits.length + " best matches ringed (close or related in meaning)"
                           : "No close match on this map: no paper is related to the query.");
    const link = document.getElementById("to-search");
    if (link) link.href = "/?q=" + encodeURIComponent(q);
  }} catch (e) {{ if (e.name !== "AbortError") ring([], "search failed: " + e.message); }}
}}
const box = document.getElementById("search");
box.addEventListener("input", ev => {{
  const q = ev.target.value.trim();
  clearTimeout(timer);
  if (!q) {{ ring([], null); return; }}
  if (API) timer = setTimeout(() => meaningSearch(q), 250); else wordSearch(q);
}});
const params = new URLSearchParams(location.search);
if (params.get("focus") && BY_ID.has(params.get("focus"))) {{
  const d = BY_ID.get(params.get("focus"));
  show(d.i); ring([d], "showing " + d.id);
}}
if (params.get("q")) {{ box.value = params.get("q"); box.dispatchEvent(new Event("input")); }}
</script></body></html>
"""


def shown_rows(assigned: np.ndarray, max_points: int = MAX_POINTS, seed: int = 0) -> np.ndarray:
    """The rows the page draws: all of them when they fit, else a seeded sample of about ``max_points``
    in which every topic (and the unassigned) keeps its share, with at least five points each."""
    if max_points < 1:
        raise InputError(f"--max-points must be at least 1, got {max_points}")
    if len(assigned) <= max_points:
        return np.arange(len(assigned))
    rng = np.random.default_rng(seed)
    order = np.argsort(assigned, kind="stable")
    _, starts = np.unique(assigned[order], return_index=True)
    picked = []
    for rows in np.split(order, starts[1:]):
        take = min(len(rows), max(5, round(max_points * len(rows) / len(assigned))))
        picked.append(rng.choice(rows, take, replace=False))
    return np.sort(np.concatenate(picked))


def write_html(model: TopicModel, documents: Sequence[Document] | DocumentStore | LiveDocuments, path: Path,
               title: str, level: int = 0, max_points: int = MAX_POINTS, force: bool = False,
               sources: Sequence[str | Path] = ()) -> Path:
    """The standalone page: plotly inlined, word search in the page. Written as every output is
    (``store.output``): not inside an index, not over a source, an existing file only with ``force``."""
    target = check_output(path, "--out", sources, force)
    page = render_html(model, documents, title, level, max_points)
    with durable_file(target) as fh:
        fh.write(page)
    return path


def render_html(model: TopicModel, documents: Sequence[Document] | DocumentStore | LiveDocuments, title: str,
                level: int = 0, max_points: int = MAX_POINTS, plotly_src: str | None = None,
                search_api: str | None = None) -> str:
    """The map page. Served by ``embedsearch serve``, plotly comes from ``plotly_src`` and the search box
    asks ``search_api`` (search by meaning, hits ringed); standalone, both are inside the page."""
    import plotly.graph_objects as go
    import plotly.io as pio

    assigned = np.asarray(model.assignments[level])
    rows = shown_rows(assigned, max_points, model.settings.get("seed", 0))
    shown = [d.readable() for d in (documents.get(rows.tolist()) if hasattr(documents, "get")
                                     else [documents[r] for r in rows])]
    coords = model.coordinates[rows]
    assigned = assigned[rows]
    topics = model.topics(level)
    labels = {t.id: t.label for t in topics}
    scatter = go.Scattergl if len(rows) > WEBGL_ABOVE else go.Scatter
    fig = go.Figure()
    for topic_id in [t.id for t in topics] + [-1]:
        members = np.flatnonzero(assigned == topic_id)
        if len(members) == 0:
            continue
        name = labels.get(topic_id, "unassigned")
        fig.add_trace(scatter(
            x=coords[members, 0], y=coords[members, 1], mode="markers",
            name=f"{topic_id}: {name}" if topic_id >= 0 else name,
            marker={"size": 7, "opacity": 0.8} if topic_id >= 0 else {"size": 5, "opacity": 0.35, "color": "#9e9e9e"},
            customdata=[[int(i), shown[i].id, _wrap(shown[i].first_sentence(200))] for i in members],
            hovertemplate="<b>%{customdata[1]}</b><br>%{customdata[2]}<extra>" + html.escape(name) + "</extra>"))
    fig.add_trace(scatter(x=[], y=[], mode="markers", name="search matches", hoverinfo="skip",
                          marker={"size": 14, "color": "rgba(0,0,0,0)", "line": {"width": 2.5, "color": "#d62728"}}))
    for topic in topics:  # above the topic's points, not on them
        members = coords[assigned == topic.id]
        cx, top = float(np.median(members[:, 0])), float(members[:, 1].max())
        fig.add_annotation(x=cx, y=top, yshift=6, yanchor="bottom", text=f"<b>{html.escape(topic.label)}</b>",
                           showarrow=False, font={"size": 12}, bgcolor="rgba(255,255,255,0.75)")
    fig.update_layout(template="plotly_white", margin={"l": 10, "r": 10, "t": TOOLBAR_MARGIN, "b": 10},
                      xaxis={"visible": False}, yaxis={"visible": False},
                      legend={"font": {"size": 10}, "yanchor": "top", "y": 1}, hovermode="closest")
    plot = pio.to_html(fig, full_html=False, include_plotlyjs=plotly_src or True, div_id="plotly-map",
                       config={"displaylogo": False, "responsive": True})
    docs = [{"i": i, "id": d.id, "title": d.title, **({} if search_api else {"text": d.text}), "x": float(coords[i, 0]),
             "y": float(coords[i, 1]), "label": labels.get(int(assigned[i]), "unassigned")} for i, d in enumerate(shown)]
    counted = (f"{len(model.ids):,} papers, {len(topics)} topics" if len(rows) == len(model.ids) else
               f"{len(rows):,} of {len(model.ids):,} papers shown (a sample keeping each topic's share), "
               f"{len(topics)} topics")
    placeholder = "Search by meaning…" if search_api else "Search abstracts (id or words)…"
    links = ('<p id="links"><a id="to-search" href="/">← Search the papers</a></p>' if search_api else "")
    return _PAGE.format(title=html.escape(title), counted=counted, plot=plot, placeholder=placeholder, links=links,
                        api=json.dumps(search_api), docs=json.dumps(docs, ensure_ascii=False).replace("</", "<\\/"))


def write_png(model: TopicModel, path: Path, title: str, level: int = 0, force: bool = False,
              sources: Sequence[str | Path] = ()) -> Path:
    """The static map (every paper drawn), written as ``write_html`` writes the page."""
    target = check_output(path, "--png", sources, force)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    coords = model.coordinates
    assigned = np.asarray(model.assignments[level])
    fig, ax = plt.subplots(figsize=(12, 9), dpi=120)
    outliers = assigned < 0
    ax.scatter(coords[outliers, 0], coords[outliers, 1], s=5, c="#bdbdbd", alpha=0.4, label="unassigned")
    cmap = plt.get_cmap("tab20")
    texts = []
    for topic in model.topics(level):
        rows = assigned == topic.id
        ax.scatter(coords[rows, 0], coords[rows, 1], s=10, color=cmap(topic.id % 20), alpha=0.85)
        cx, cy = np.median(coords[rows], axis=0)
        texts.append(ax.text(cx, cy, topic.label, fontsize=9, ha="center", va="center", weight="bold",
                             bbox={"facecolor": "white", "alpha": 0.75, "edgecolor": "none", "pad": 1.5}))
    from adjustText import adjust_text  # labels pushed off the points and off each other

    adjust_text(texts, x=coords[:, 0], y=coords[:, 1], ax=ax, arrowprops={"arrowstyle": "-", "color": "#555", "lw": 0.6})
    ax.set_title(title)
    ax.set_axis_off()
    fig.tight_layout()
    with durable_file(target, binary=True) as fh:
        fig.savefig(fh, format="png")
    plt.close(fig)
    return path


def _wrap(text: str, width: int = 80) -> str:
    words, lines, line = text.split(), [], ""
    for word in words:
        if len(line) + len(word) > width:
            lines.append(line)
            line = ""
        line = f"{line} {word}".strip()
    return "<br>".join(html.escape(x) for x in lines + [line])
