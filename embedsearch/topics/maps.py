"""Topic maps: a self-contained interactive HTML page and a static PNG, both drawing every paper with the
same labels (``map_labels``). The page (``embedsearch/web/map``) draws with regl-scatterplot (WebGL, vendored,
its modules inlined: it works offline) from a compact binary payload (``map_payload``); hovering shows a
title, the search box rings matching papers, clicking shows the abstract."""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from pathlib import Path
from string import Template

import numpy as np

from ..corpus import Document
from ..disk.durable import durable_file
from ..store.docstore import DocumentStore
from ..store.snapshot import LiveDocuments
from ..web import inline_imports, served_imports
from ..web import text as web_text
from . import map_labels
from .map_payload import pack, shown_rows, unit_square
from .model import TopicModel

__all__ = ["render_html", "shown_rows", "write_html", "write_png"]


def write_html(model: TopicModel, documents: Sequence[Document] | DocumentStore | LiveDocuments, path: Path,
               title: str, level: int = 0, max_points: int | None = None) -> Path:
    """The standalone page, written durably (a failed write leaves an old file as it was). Where it may go
    is the caller's to check (the CLI: ``cli.output``)."""
    page = render_html(model, documents, title, level, max_points)
    with durable_file(path) as fh:
        fh.write(page)
    return path


def render_html(model: TopicModel, documents: Sequence[Document] | DocumentStore | LiveDocuments, title: str,
                level: int = 0, max_points: int | None = None, search_api: str | None = None) -> str:
    """The map page (``web/map/map_page.html``, a ``string.Template``). Served by ``embedsearch serve``, the search
    box asks ``search_api`` (search by meaning) and abstracts come from the API; standalone, a word search
    runs in the page over what it carries (abstracts too, up to ``map_payload.TEXTS_UP_TO`` papers)."""
    data = pack(model, documents, level, max_points, texts=search_api is None)
    topics = len(model.topics(level))
    counted = (f"{data['n']:,} papers drawn, {topics} topics" if data["n"] == data["total"] else
               f"{data['n']:,} of {data['total']:,} papers drawn (a sample keeping each topic's share), {topics} topics")
    placeholder = "Search by meaning…" if search_api else "Search titles (id or words)…"
    links = '<p id="links"><a id="to-search" href="/">← Search the papers</a></p>' if search_api else ""
    imports = served_imports() if search_api else inline_imports("map", "shared", vendored=("scatter.min.mjs",))
    config = json.dumps({"api": search_api, "counted": counted}, ensure_ascii=False).replace("</", "<\\/")
    return Template(web_text("map/map_page.html")).substitute(
        title=html.escape(title), counted=counted, placeholder=placeholder, links=links, config=config,
        data=json.dumps(data, ensure_ascii=False).replace("</", "<\\/"), imports=imports)


def write_png(model: TopicModel, path: Path, title: str, level: int = 0, width: int = 1440, height: int = 1080
              ) -> Path:
    """The static map: every paper drawn, with the labels the page shows at its first view of this size."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    dpi = 100
    coords = unit_square(np.asarray(model.coordinates, dtype=np.float64))
    assigned = np.asarray(model.assignments[level])
    fig = plt.figure(figsize=(width / dpi, height / dpi), dpi=dpi)
    ax = fig.add_axes((0, 0, 1, 1))
    scale = min(width, height) / 2
    ax.set_xlim(-width / 2 / scale, width / 2 / scale)
    ax.set_ylim(-height / 2 / scale, height / 2 / scale)
    ax.set_axis_off()
    dot = 28 if len(coords) <= 20_000 else 3 if len(coords) <= 200_000 else 0.4
    outliers = assigned < 0
    ax.scatter(coords[outliers, 0], coords[outliers, 1], s=dot * 0.6, c="#bdbdbd", alpha=0.5, linewidths=0)
    cmap = plt.get_cmap("tab20")
    for topic in model.topics(level):
        rows = assigned == topic.id
        ax.scatter(coords[rows, 0], coords[rows, 1], s=dot, color=cmap(topic.id % 20), alpha=0.8, linewidths=0)
    labels = map_labels.of_model(model, coords, level)
    broad = len(model.levels) - level == 1
    for label, left, top in map_labels.visible(labels, scale, (0.0, 0.0), (width, height)):
        x0, y0 = left / width, 1 - (top + label.height) / height
        ax.add_patch(plt.Rectangle((x0, y0), label.width / width, label.height / height, transform=fig.transFigure,
                                   facecolor="white", alpha=0.72, edgecolor="none"))
        fig.text(x0 + label.width / 2 / width, y0 + label.height / 2 / height, label.text, ha="center", va="center",
                 fontsize=label.font * 0.75 * 0.92, weight="bold" if label.level > level or broad else "normal")
    fig.text(0.01, 0.99, title, ha="left", va="top", fontsize=12)
    with durable_file(path, binary=True) as fh:
        fig.savefig(fh, format="png", dpi=dpi)
    plt.close(fig)
    return path
