"""Commands that explore a corpus: topics, map, dedup."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import typer

from ..dedup.settings import DedupSettings
from ..errors import InputError
from ..disk.durable import durable_file
from ..topics.settings import TopicSettings
from .app import (EngineOpt, ForceOpt, IndexOpt, JsonOpt, RayAddressOpt, app, friendly, one_line, open_index,
                  ray_settings)
from .output import check_output
from .over_time import BinsOpt, ByOpt, CsvOpt, OverOpt, PlotOpt, PngOpt, StrictOpt

_DEDUP, _TOPICS = DedupSettings(), TopicSettings()


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


def _open_against(path: Path, like, scratch: Path, skip_invalid: bool):
    """An index folder, or a corpus file indexed into ``scratch`` with ``like``'s model (through the cache)."""
    from ..index import Index

    if path.is_dir():
        return Index.load(path)
    against = Index.from_sources([path], scratch / "index", skip_invalid=skip_invalid, progress=True,
                                 embed=like.snapshot.manifest.model.settings)
    if against.skipped:
        typer.echo(f"skipped {len(against.skipped)} invalid record(s) of {path}; first: {against.skipped[0]}", err=True)
    return against


@app.command()
@friendly
def dedup(index: str | None = IndexOpt, as_json: bool = JsonOpt,
          csv_file: Path | None = typer.Option(None, "--csv", help="Also write every flagged pair to this CSV."),
          threshold: float | None = typer.Option(None, "--threshold",
                                                    help=f"Cosine that alone makes a duplicate (default {_DEDUP.threshold})."),
          min_cosine: float | None = typer.Option(None, "--min-cosine",
                                                     help=f"Cosine needed before overlap counts (default {_DEDUP.min_cosine})."),
          min_overlap: float | None = typer.Option(None, "--min-overlap",
                                                      help=f"Shared word 5-grams, of the shorter (default {_DEDUP.min_overlap})."),
          against: Path | None = typer.Option(None, "--against",
                                                 help="Existing corpus (index folder or corpus file) to check against."),
          skip_invalid: bool = typer.Option(False, "--skip-invalid",
                                            help="Skip bad records of an --against corpus file and report them."),
          write_kept: Path | None = typer.Option(None, "--write-kept",
                                                    help="Write the deduplicated corpus (every record not absorbed, "
                                                         "with its metadata) to this JSONL file."),
          force: bool = ForceOpt, engine: str = EngineOpt, ray_address: str | None = RayAddressOpt) -> None:
    """Groups of near-duplicate abstracts, with evidence and which record is kept."""
    from ..dedup import DedupSettings

    given = {"threshold": threshold, "min_cosine": min_cosine, "min_overlap": min_overlap}
    settings = DedupSettings(**{k: v for k, v in given.items() if v is not None})
    ray = ray_settings(engine, ray_address)
    outputs = [(option, value) for option, value in (("--csv", csv_file), ("--write-kept", write_kept)) if value]
    if len({Path(os.path.realpath(v)) for _, v in outputs}) < len(outputs):
        raise InputError("--csv and --write-kept name the same file; name two files")
    for option, value in outputs:
        check_output(value, option, [against] if against else (), force)
    if index is not None and Path(index).is_file():
        return _dedup_file(Path(index), against, settings, as_json, csv_file, write_kept, skip_invalid, force)
    idx = open_index(index)
    with tempfile.TemporaryDirectory(prefix="embedsearch-against-") as scratch:
        reference = _open_against(against, idx, Path(scratch), skip_invalid) if against else None
        sources = index_sources(idx, reference, against)
        for option, value in outputs:
            check_output(value, option, sources, force)
        report = idx.duplicates(settings, against=reference, ray=ray)
    if csv_file is not None:
        _write_pairs_csv(report, csv_file)
    if write_kept is not None:
        _write_kept(report, idx, write_kept)
    print_report(report, as_json, f"no near-duplicates among {len(idx)} abstracts", bool(against))


def _dedup_file(file: Path, against: Path | None, settings, as_json: bool, csv_file: Path | None,
                write_kept: Path | None, skip_invalid: bool, force: bool) -> None:
    """``dedup --index SUBMISSIONS.jsonl --against INDEX``: each submission judged against the index and the
    file's other submissions, one row each in the file's order ("submission X matches paper Y (its title)")."""
    from ..corpus import read_sources
    from ..dedup.batch import sentence, submissions, write_csv
    from ..index import Index

    if against is None or not against.is_dir():
        raise InputError(f"--index {file}: a file of submissions is checked against an index; add --against "
                         "INDEX (an index folder), or build an index of the file first")
    if write_kept is not None:
        raise InputError("--write-kept writes an index's deduplicated records; with --index FILE there are none")
    reference = Index.load(against)
    if csv_file is not None:
        check_output(csv_file, "--csv", [*reference.sources, str(file)], force)
    read = read_sources([file], skip_invalid=skip_invalid)
    if read.skipped:
        typer.echo(f"skipped {len(read.skipped)} invalid record(s) of {file}; first: {read.skipped[0]}", err=True)
    docs = reference.documents
    rows = submissions(reference.check_duplicates(read.documents, settings), read.documents,
                       lambda i: docs.get([docs.row_of[i]])[0])
    if csv_file is not None:
        with durable_file(Path(os.path.realpath(csv_file)), newline="") as fh:
            write_csv(rows, fh)
    if as_json:
        typer.echo(json.dumps({"judged": len(rows), "submissions": rows}, ensure_ascii=False))
        return
    batch = {r["id"] for r in rows}
    for row in rows:
        typer.echo(one_line(sentence(row, batch)))
    flagged = sum(1 for r in rows if r.get("match"))
    typer.echo(f"{len(rows)} submission(s) of {file} checked against {reference.path}: {flagged} flagged, "
               f"{len(rows) - flagged} with no duplicate")


def print_report(report, as_json: bool, none: str, against: bool = False) -> None:
    """A duplicate report as JSON, or as groups with their pairs and the first shared passage."""
    from ..corpus.readable import readable

    if as_json:
        typer.echo(json.dumps(report.to_json(), ensure_ascii=False))
        return
    if not report.groups:
        typer.echo(none)
    new, old = ("new ", "existing ") if against else ("", "")
    for number, group in enumerate(report.groups, start=1):
        typer.echo(f"group {number}: keep {old}{one_line(group.kept)}; "
                   f"absorbs {new}{', '.join(one_line(a) for a in group.absorbed)}")
        for p in group.pairs:
            typer.echo(f"  {new}{one_line(p.a)} ~ {old}{one_line(p.b)}  {p.verdict:<14} cosine {p.cosine:.3f}  overlap {p.overlap:.2f}")
            if p.passages:
                quote = readable(p.passages[0]) or ""
                typer.echo(f"    shared: \"{quote[:100]}{'…' if len(quote) > 100 else ''}\"")


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
    from ..retrieval.search import check_query
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


def _write_kept(report, idx, path: Path) -> None:
    """The records the report keeps, in corpus order, as JSONL that ``build`` reads back (metadata as fields)."""
    rows = [idx.documents.row_of[i] for i in report.selected]
    with durable_file(Path(os.path.realpath(path))) as fh:
        for start in range(0, len(rows), 10_000):
            for doc in idx.documents.get(rows[start:start + 10_000]):
                record = {**doc.metadata, "id": doc.id, "title": doc.title, "text": doc.text}
                fh.write(json.dumps({k: v for k, v in record.items() if v is not None}, ensure_ascii=False) + "\n")
    typer.echo(f"wrote {len(rows)} of {len(report.ids)} records to {path} "
               f"({report.duplicate_ratio:.1%} were duplicates)", err=True)


def _write_pairs_csv(report, path: Path) -> None:
    with durable_file(Path(os.path.realpath(path)), newline="") as fh:
        report.write_csv(fh)
