"""Topics over time drawn: a self-contained plotly page (plotly inlined, no remote asset) with one line per
topic, the ``shown`` largest visible and the rest a click away in the legend, each point's hover naming the
period's keywords; and the same lines as a PNG. Where it may go is the caller's to check (``cli.output``)."""

from __future__ import annotations

import html
from pathlib import Path

from ..disk.durable import durable_file
from .over_time import UNASSIGNED, TopicsOverTime

SHOWN = 8


def _lines(result: TopicsOverTime, measure: str) -> list[tuple[int, str, list[float], list[str], int]]:
    """Per topic: id, name, its values per period, hover texts, and its size (largest first)."""
    out = []
    for topic in sorted({r.topic for r in result.rows} - {UNASSIGNED}):
        rows = result.of(topic)
        values = [getattr(r, measure) for r in rows]
        hover = [f"{html.escape(r.name)}<br>{html.escape(r.period)}: {r.count} papers ({r.share:.0%} of the "
                 f"period)<br>{html.escape(', '.join(r.keywords))}" for r in rows]
        out.append((topic, rows[0].name, values, hover, sum(r.count for r in rows)))
    return sorted(out, key=lambda line: -line[4])


def render_html(result: TopicsOverTime, title: str, measure: str = "share", shown: int = SHOWN) -> str:
    import plotly.graph_objects as go

    fig = go.Figure()
    for i, (topic, label, values, hover, _) in enumerate(_lines(result, measure)):
        fig.add_trace(go.Scatter(x=list(result.periods), y=values, mode="lines+markers", name=f"{topic}: {label}",
                                 hovertext=hover, hoverinfo="text", visible=True if i < shown else "legendonly"))
    axis = {"share": "share of the period's papers", "count": "papers",
            "topic_share": "share of the topic's papers"}[measure]
    fig.update_layout(title=title, xaxis_title=result.field, yaxis_title=axis, hovermode="closest",
                      legend={"orientation": "h", "y": -0.25}, margin={"l": 50, "r": 20, "t": 60, "b": 40})
    if measure != "count":
        fig.update_yaxes(tickformat=".0%")
    return fig.to_html(include_plotlyjs=True, full_html=True, config={"responsive": True})


def write_html(result: TopicsOverTime, path: Path, title: str, measure: str = "share") -> Path:
    page = render_html(result, title, measure)
    with durable_file(path) as fh:
        fh.write(page)
    return path


def write_png(result: TopicsOverTime, path: Path, title: str, measure: str = "share", shown: int = SHOWN) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(12, 6), dpi=120)
    for topic, label, values, _, _ in _lines(result, measure)[:shown]:
        ax.plot(list(result.periods), values, marker="o", label=f"{topic}: {label}")
    ax.set_title(title)
    ax.set_xlabel(result.field)
    ax.set_ylabel(measure.replace("_", " "))
    ax.tick_params(axis="x", rotation=45)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    with durable_file(path, binary=True) as fh:
        fig.savefig(fh, format="png")
    plt.close(fig)
    return path
