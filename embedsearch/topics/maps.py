"""Topic maps: a self-contained interactive HTML page (plotly, inlined, works offline) and a static PNG
(matplotlib). The page shows every paper coloured by topic with labels at topic centres; hovering
shows the first sentence, the search box highlights matching papers, clicking shows the abstract.
Above ``max_points`` papers the page draws a seeded sample that keeps every topic's share, so a
million-paper corpus still gives a page a browser can open; the PNG always draws every paper."""

from __future__ import annotations

import html
import json
from string import Template
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..corpus import Document
from ..errors import InputError
from ..disk.durable import durable_file
from ..store.docstore import DocumentStore
from ..store.snapshot import LiveDocuments
from .model import TopicModel

WEBGL_ABOVE = 5000
TOOLBAR_MARGIN = 44  # px above the plot: plotly's toolbar sits there instead of over the legend
MAX_POINTS = 20_000



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
               title: str, level: int = 0, max_points: int = MAX_POINTS) -> Path:
    """The standalone page: plotly inlined, word search in the page; written durably (a failed write leaves
    an old file as it was). Where it may go is the caller's to check (the CLI: ``cli.output``)."""
    page = render_html(model, documents, title, level, max_points)
    with durable_file(path) as fh:
        fh.write(page)
    return path


def render_html(model: TopicModel, documents: Sequence[Document] | DocumentStore | LiveDocuments, title: str,
                level: int = 0, max_points: int = MAX_POINTS, plotly_src: str | None = None,
                search_api: str | None = None) -> str:
    """The map page (``map_page.html``, a ``string.Template``: ``$$`` for a dollar sign). Served by ``embedsearch
    serve``, plotly comes from ``plotly_src`` and the search box asks ``search_api`` (search by meaning, hits
    ringed and listed); standalone, both are inside the page."""
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
    below = [float(coords[assigned == t.id][:, 1].min()) for t in topics]
    page = Template((Path(__file__).parent / "map_page.html").read_text(encoding="utf-8"))
    return page.substitute(title=html.escape(title), counted=counted, plot=plot, placeholder=placeholder, links=links,
                        below=json.dumps(below),
                        api=json.dumps(search_api), docs=json.dumps(docs, ensure_ascii=False).replace("</", "<\\/"))


def write_png(model: TopicModel, path: Path, title: str, level: int = 0) -> Path:
    """The static map (every paper drawn), written as ``write_html`` writes the page."""
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
    from adjustText import (
        adjust_text,  # labels pushed off the points and off each other
    )

    adjust_text(texts, x=coords[:, 0], y=coords[:, 1], ax=ax, arrowprops={"arrowstyle": "-", "color": "#555", "lw": 0.6})
    ax.set_title(title)
    ax.set_axis_off()
    fig.tight_layout()
    with durable_file(path, binary=True) as fh:
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
