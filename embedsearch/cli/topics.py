"""Commands that explore a corpus: topics and its map (``dedup`` has its own module)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from ..errors import InputError
from ..topics.settings import TopicSettings
from .app import (EngineOpt, ForceOpt, IndexOpt, JsonOpt, RayAddressOpt, app, friendly, open_index,
                  ray_settings)
from .output import check_output
from .over_time import BinsOpt, ByOpt, CsvOpt, OverOpt, PlotOpt, PngOpt, StrictOpt

_TOPICS = TopicSettings()


def index_sources(*indexes_or_files) -> list[str]:
    """The files the indexes in use were built from (and a corpus file given as ``--against``): outputs
    may not overwrite them."""
    found: list[str] = []
    for item in indexes_or_files:
        if item is None:
            continue
        if hasattr(item, "sources"):
            found += item.sources
        elif Path(item).is_file():
            found.append(str(item))
    return found


def _topic_settings(min_size, seed, assign_outliers, sample):
    from ..topics import TopicSettings

    return TopicSettings(min_size=min_size, seed=seed, assign_outliers=assign_outliers, sample=sample)


MinSizeOpt = typer.Option(None, "--min-size", help="Smallest topic (default scales with corpus size).")
SeedOpt = typer.Option(_TOPICS.seed, "--seed", help="Random seed: same index + seed gives identical topics.")
SampleOpt = typer.Option(_TOPICS.sample, "--sample", help="Fit on at most this many papers; assign the rest.")
RefitOpt = typer.Option(False, "--refit", help="Fit again instead of placing papers added since the last fit "
                                                "into its topics (labels then may change).")


@app.command()
@friendly
def topics(index: str | None = IndexOpt, as_json: bool = JsonOpt, min_size: int | None = MinSizeOpt,
           seed: int = SeedOpt, level: int = typer.Option(0, "--level", min=0, help="0 = finest; higher = broader."),
           assign_outliers: bool = typer.Option(False, "--assign-outliers",
                                                help="Attach unassigned papers to their nearest topic."),
           query: str | None = typer.Option(None, "--query", help="List the topics nearest this query."),
           sample: int = SampleOpt, refit: bool = RefitOpt, engine: str = EngineOpt,
           ray_address: str | None = RayAddressOpt,
           over: str | None = OverOpt, by: str | None = ByOpt, bins: int = BinsOpt, csv_file: Path | None = CsvOpt,
           plot: Path | None = PlotOpt, png: bool = PngOpt, strict: bool = StrictOpt, force: bool = ForceOpt) -> None:
    """Topics of an index: label, size, keywords, representative and member papers; --over-time FIELD
    gives each topic's papers per period."""
    from ..retrieval.answer import check_query
    from .over_time import check_outputs, check_request, show

    query = check_query(query) if query is not None else None
    check_request(over, by, csv_file, plot, png, strict, force)
    ray = ray_settings(engine, ray_address)
    idx = open_index(index)
    model = idx.topics(_topic_settings(min_size, seed, assign_outliers, sample), ray=ray, level=level, refit=refit)
    if over is not None or by is not None:
        sources = index_sources(idx)
        check_outputs(csv_file, plot, png, force, sources)
        documents = idx.documents.get([idx.documents.row_of[i] for i in model.ids])
        show(idx.name or idx.path.name, model, documents, over or by, by is not None, bins, level, as_json, csv_file,
             plot, png, strict, force, sources)
        return
    if query is not None:
        nearest = model.nearest(idx.encode([query])[0], level)
        if as_json:
            typer.echo(json.dumps({"query": query, "topics": [{**t.to_json(), "cosine": round(s, 4)}
                                                              for t, s in nearest]}, ensure_ascii=False))
        for topic, score in ([] if as_json else nearest):
            typer.echo(f"{score:.3f}  topic {topic.id} ({topic.size} papers): {topic.title} [{topic.label}]")
        return
    if as_json:
        typer.echo(json.dumps(model.to_json(level), ensure_ascii=False))
        return
    shown = model.topics(level)
    typer.echo(f"{len(shown)} topics at level {level} (levels 0-{len(model.levels) - 1}); "
               f"{len(model.unassigned(level))} of {len(idx)} papers unassigned")
    if model.attached:
        typer.echo(f"{len(model.attached)} unassigned papers were attached to their nearest topic (--assign-outliers)")
    docs = {d.id: d for d in idx.documents.get([idx.documents.row_of[r] for t in shown for r in t.representatives])}
    for topic in shown:
        parent = f", inside topic {topic.parent} at level {level + 1}" if topic.parent is not None else ""
        typer.echo(f"\ntopic {topic.id}: {topic.title}  ({topic.size} papers{parent})")
        typer.echo(f"  keywords: {', '.join(topic.keywords[:8])}")
        for rep in topic.representatives:
            paper = docs[rep].readable()
            typer.echo(f"  - {rep}: {paper.title or paper.first_sentence(110)}")


@app.command("map")
@friendly
def map_(index: str | None = IndexOpt, out: Path = typer.Option(Path("map.html"), "--out"),
         png: bool = typer.Option(False, "--png", help="Also write a static PNG next to the HTML."),
         min_size: int | None = MinSizeOpt, seed: int = SeedOpt,
         level: int = typer.Option(0, "--level", min=0), sample: int = SampleOpt, refit: bool = RefitOpt,
         engine: str = EngineOpt,
         ray_address: str | None = RayAddressOpt,
         max_points: int | None = typer.Option(None, "--max-points",
                                               help="Draw at most about this many papers on the page (a sample "
                                                    "keeping each topic's share); by default all. The PNG draws all."),
         force: bool = ForceOpt) -> None:
    """An interactive, self-contained HTML topic map (works offline); --png adds a static image."""
    from ..topics.maps import write_html, write_png

    if max_points is not None and max_points < 1:
        raise InputError(f"--max-points must be at least 1, got {max_points}")
    outputs = [("--out", out)] + ([("--png", out.with_suffix(".png"))] if png else [])
    if png and out.suffix.lower() == ".png":
        raise InputError(f"--out {out} ends in .png, where --png writes the image; name the page .html")
    for option, value in outputs:
        check_output(value, option, (), force)
    ray = ray_settings(engine, ray_address)
    idx = open_index(index)
    sources = index_sources(idx)
    for option, value in outputs:
        check_output(value, option, sources, force)
    model = idx.topics(_topic_settings(min_size, seed, False, sample), ray=ray, level=level, refit=refit)
    title = f"{idx.path.name}: {len(idx)} papers, {len(model.topics(level))} topics"
    written = [write_html(model, idx.documents, out, title, level, max_points)]
    if png:
        written.append(write_png(model, out.with_suffix(".png"), title, level))
    typer.echo("wrote " + " and ".join(str(p) for p in written), err=True)
