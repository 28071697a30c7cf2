"""The ``embedsearch`` command: parse arguments, call the ``Index`` facade, render results.

Tables go to stdout, progress and errors to stderr; ``--json`` prints machine-readable lines.
Heavy libraries load inside the commands that need them so that ``search`` starts fast.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any, Optional

import typer

from .errors import EmbedsearchError, InputError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Find related papers, topic maps and near-duplicates in a corpus of abstracts.")

IndexOpt = typer.Option(None, "--index", "-i", help="Index folder (default: the bundled NeurIPS 2026 corpus).")
KOpt = typer.Option(10, "-k", "--k", min=1, help="How many results.")
JsonOpt = typer.Option(False, "--json", help="One JSON object per line instead of a table.")


def _friendly(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn embedsearch errors into one line on stderr and their exit code."""

    @wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except EmbedsearchError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(exc.exit_code) from None
        except KeyboardInterrupt:
            typer.echo("interrupted; nothing was changed on disk", err=True)
            raise typer.Exit(130) from None

    return wrapper


def _open(path: Optional[Path], model: Optional[str] = None):
    from .index import Index

    if path is None:
        return Index.bundled(progress=True)
    return Index.load(path, model=model)


def _print_hits(hits, as_json: bool, query: Optional[str] = None) -> None:
    if as_json:
        for hit in hits:
            record = hit.to_json()
            typer.echo(json.dumps({"query": query, **record} if query is not None else record, ensure_ascii=False))
        return
    if query is not None:
        typer.echo(f"\n# {query}")
    width = shutil.get_terminal_size((120, 20)).columns
    id_width = max([len(h.id) for h in hits] + [2])
    for hit in hits:
        line = f"{hit.rank:>3}  {hit.score:.3f}  {hit.id:<{id_width}}  {hit.preview}"
        typer.echo(line if len(line) <= width else line[: width - 1] + "…")
    if not hits:
        typer.echo("no results")


def _read_queries(file: Path) -> list[str]:
    from .search import check_query

    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{file}: cannot read queries ({exc})") from exc
    queries = []
    for number, line in enumerate(lines, start=1):
        if line.strip():
            try:
                queries.append(check_query(line))
            except InputError as exc:
                raise InputError(f"{file}:{number}: {exc}") from None
    if not queries:
        raise InputError(f"{file}: no queries (one per line)")
    return queries


@app.command()
@_friendly
def search(query: Optional[str] = typer.Argument(None, help="Free-text query."),
           index: Optional[Path] = IndexOpt, k: int = KOpt, as_json: bool = JsonOpt,
           queries: Optional[Path] = typer.Option(None, "--queries", help="File with one query per line."),
           mode: Optional[str] = typer.Option(None, "--mode", help="hybrid (default), dense or lexical."),
           filters: list[str] = typer.Option([], "--filter", help="FIELD=VALUE or FIELD>=NUMBER; repeatable.")) -> None:
    """Related abstracts for a free-text query (or every line of --queries)."""
    if (query is None) == (queries is None):
        raise InputError("give a QUERY or --queries FILE (not both)")
    idx = _open(index)
    if queries is None:
        _print_hits(idx.search(query, k, mode=mode, filters=filters), as_json)
        return
    batch = _read_queries(queries)
    for text, hits in zip(batch, idx.search_many(batch, k, mode=mode, filters=filters)):
        _print_hits(hits, as_json, query=text)


@app.command()
@_friendly
def similar(doc_id: Optional[str] = typer.Argument(None, help="Id of a paper in the index."),
            text: Optional[str] = typer.Option(None, "--text", help="An abstract's text."),
            file: Optional[Path] = typer.Option(None, "--file", help="A file holding an abstract."),
            index: Optional[Path] = IndexOpt, k: int = KOpt, as_json: bool = JsonOpt) -> None:
    """Related papers for a paper in the index, or for a new abstract."""
    given = [x for x in (doc_id, text, file) if x is not None]
    if len(given) != 1:
        raise InputError("give exactly one of DOC_ID, --text or --file")
    idx = _open(index)
    if doc_id is not None:
        if doc_id not in idx.documents.row_of:
            raise InputError(f"no document with id {doc_id!r} in {idx.path}; use --text for new abstracts")
        _print_hits(idx.similar(doc_id, k), as_json)
        return
    if file is not None:
        try:
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"{file}: cannot read abstract ({exc})") from exc
    _print_hits(idx.similar_to_text(text or "", k), as_json)


def _fields(id_field: Optional[str], title_field: Optional[str], text_field: Optional[str]):
    from .corpus import FieldMap

    return FieldMap(id_field, title_field, text_field)


def _report_skipped(skipped) -> None:
    if skipped:
        typer.echo(f"skipped {len(skipped)} invalid record(s):", err=True)
        for problem in skipped[:20]:
            typer.echo(f"  {problem}", err=True)
        if len(skipped) > 20:
            typer.echo(f"  ... and {len(skipped) - 20} more", err=True)


@app.command()
@_friendly
def build(sources: list[Path] = typer.Argument(..., help="Corpus files: .txt (seed format), .jsonl, .csv, .parquet."),
          index: Path = typer.Option(..., "--index", "-i", help="Index folder to create or replace."),
          model: str = typer.Option("all-MiniLM-L6-v2", "--model", help="sentence-transformers name or path."),
          id_field: Optional[str] = typer.Option(None, "--id-field"),
          title_field: Optional[str] = typer.Option(None, "--title-field"),
          text_field: Optional[str] = typer.Option(None, "--text-field"),
          index_type: str = typer.Option("auto", "--index-type", help="auto, flat, hnsw or ivfpq."),
          max_windows: int = typer.Option(8, "--max-windows", min=1,
                                          help="Windows averaged per long abstract (1 = truncate)."),
          skip_invalid: bool = typer.Option(False, "--skip-invalid", help="Skip bad records and report them.")) -> None:
    """Index a corpus (replaces the index atomically; unchanged texts come from the cache)."""
    from .embed import EmbedSettings
    from .index import Index
    from .vectors import VectorSettings

    idx = Index.from_sources(sources, index, _fields(id_field, title_field, text_field), skip_invalid,
                             embed=EmbedSettings(model=model, max_windows=max_windows),
                             vectors=VectorSettings(index_type=index_type), progress=True)
    _report_skipped(idx.skipped)
    typer.echo(f"indexed {len(idx)} documents into {idx.path} ({idx.manifest['index']['type']})", err=True)


@app.command()
@_friendly
def add(sources: list[Path] = typer.Argument(..., help="Corpus files to add."),
        index: Path = typer.Option(..., "--index", "-i"),
        id_field: Optional[str] = typer.Option(None, "--id-field"),
        title_field: Optional[str] = typer.Option(None, "--title-field"),
        text_field: Optional[str] = typer.Option(None, "--text-field"),
        skip_invalid: bool = typer.Option(False, "--skip-invalid")) -> None:
    """Add documents to an index, embedding only the new ones."""
    from .corpus import read_sources
    from .index import Index

    idx = Index.load(index)
    result = read_sources(sources, _fields(id_field, title_field, text_field), skip_invalid)
    docs = result.documents
    if skip_invalid:
        present = idx.documents.row_of
        clashes = [d for d in docs if d.id in present]
        docs = [d for d in docs if d.id not in present]
        from .corpus import Problem

        result.skipped.extend(Problem(d.id, "id already in the index") for d in clashes)
    _report_skipped(result.skipped)
    before = len(idx)
    idx.add(docs, progress=True)
    typer.echo(f"added {len(idx) - before} documents; {idx.path} now holds {len(idx)}", err=True)


@app.command()
@_friendly
def remove(ids: list[str] = typer.Argument(..., help="Document ids to remove."),
           index: Path = typer.Option(..., "--index", "-i")) -> None:
    """Remove documents by id (nothing is re-embedded)."""
    from .index import Index

    idx = Index.load(index)
    before = len(idx)
    idx.remove(ids)
    typer.echo(f"removed {before - len(idx)} documents; {idx.path} now holds {len(idx)}", err=True)


@app.command()
@_friendly
def info(index: Optional[Path] = IndexOpt, as_json: bool = JsonOpt) -> None:
    """Documents, model, index type, size on disk and build time."""
    details = _open(index).info()
    if as_json:
        typer.echo(json.dumps(details))
        return
    for key, value in details.items():
        typer.echo(f"{key:>16}: {value}")


def _open_against(path: Path, like):
    """An index folder, or corpus files indexed on the fly with ``like``'s model (through the cache)."""
    from .index import Index

    if (path / "manifest.json").exists():
        return Index.load(path)
    import tempfile

    from .embed import EmbedSettings

    tmp = Path(tempfile.mkdtemp(prefix="embedsearch-against-"))
    return Index.from_sources([path], tmp / "index", embed=EmbedSettings(**like.manifest["model"]["settings"]),
                              progress=True)


@app.command()
@_friendly
def dedup(index: Optional[Path] = IndexOpt, as_json: bool = JsonOpt,
          csv_file: Optional[Path] = typer.Option(None, "--csv", help="Also write every flagged pair to this CSV."),
          threshold: float = typer.Option(0.95, "--threshold", help="Cosine that alone makes a duplicate."),
          min_cosine: float = typer.Option(0.80, "--min-cosine", help="Cosine needed before overlap counts."),
          min_overlap: float = typer.Option(0.50, "--min-overlap", help="Shared word 5-grams (of the shorter)."),
          against: Optional[Path] = typer.Option(None, "--against",
                                                 help="Existing corpus (index folder or corpus file) to check against.")) -> None:
    """Groups of near-duplicate abstracts, with evidence and which record is kept."""
    from .dedup import DedupSettings

    settings = DedupSettings(threshold=threshold, min_cosine=min_cosine, min_overlap=min_overlap)
    idx = _open(index)
    report = idx.duplicates(settings, against=_open_against(against, idx) if against else None)
    if csv_file is not None:
        _write_pairs_csv(report, csv_file)
    if as_json:
        typer.echo(json.dumps(report.to_json(), ensure_ascii=False))
        return
    if not report.groups:
        typer.echo(f"no near-duplicates among {len(idx)} abstracts")
    for number, group in enumerate(report.groups, start=1):
        typer.echo(f"group {number}: keep {group.kept}; absorbs {', '.join(group.absorbed)}")
        for p in group.pairs:
            typer.echo(f"  {p.a} ~ {p.b}  {p.verdict:<14} cosine {p.cosine:.3f}  overlap {p.overlap:.2f}")
            if p.passages:
                quote = p.passages[0]
                typer.echo(f"    shared: \"{quote[:100]}{'…' if len(quote) > 100 else ''}\"")


def _topic_settings(min_size, seed, assign_outliers):
    from .topics import TopicSettings

    return TopicSettings(min_size=min_size, seed=seed, assign_outliers=assign_outliers)


MinSizeOpt = typer.Option(None, "--min-size", help="Smallest topic (default scales with corpus size).")
SeedOpt = typer.Option(42, "--seed", help="Random seed: same index + seed gives identical topics.")


@app.command()
@_friendly
def topics(index: Optional[Path] = IndexOpt, as_json: bool = JsonOpt, min_size: Optional[int] = MinSizeOpt,
           seed: int = SeedOpt, level: int = typer.Option(0, "--level", help="0 = finest; higher = broader."),
           assign_outliers: bool = typer.Option(False, "--assign-outliers",
                                                help="Attach unassigned papers to their nearest topic."),
           query: Optional[str] = typer.Option(None, "--query", help="List the topics nearest this query.")) -> None:
    """Topics of an index: label, size, keywords, representative and member papers."""
    idx = _open(index)
    model = idx.topics(_topic_settings(min_size, seed, assign_outliers))
    if query is not None:
        nearest = model.nearest(idx.encode([query])[0], level)
        if as_json:
            typer.echo(json.dumps({"query": query, "topics": [{**t.to_json(), "cosine": round(s, 4)}
                                                              for t, s in nearest]}, ensure_ascii=False))
        for topic, score in ([] if as_json else nearest):
            typer.echo(f"{score:.3f}  topic {topic.id} ({topic.size} papers): {topic.label}")
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
        typer.echo(f"\ntopic {topic.id}: {topic.label}  ({topic.size} papers{parent})")
        typer.echo(f"  keywords: {', '.join(topic.keywords[:8])}")
        for rep in topic.representatives:
            typer.echo(f"  - {rep}: {docs[rep].title or docs[rep].first_sentence(110)}")


@app.command("map")
@_friendly
def map_(index: Optional[Path] = IndexOpt, out: Path = typer.Option(Path("map.html"), "--out"),
         png: bool = typer.Option(False, "--png", help="Also write a static PNG next to the HTML."),
         min_size: Optional[int] = MinSizeOpt, seed: int = SeedOpt,
         level: int = typer.Option(0, "--level")) -> None:
    """An interactive, self-contained HTML topic map (works offline); --png adds a static image."""
    from .topics.maps import write_html, write_png

    idx = _open(index)
    model = idx.topics(_topic_settings(min_size, seed, False))
    title = f"{idx.path.name}: {len(idx)} papers, {len(model.topics(level))} topics"
    written = [write_html(model, list(idx.documents), out, title, level)]
    if png:
        written.append(write_png(model, out.with_suffix(".png"), title, level))
    typer.echo("wrote " + " and ".join(str(p) for p in written), err=True)


def _write_pairs_csv(report, path: Path) -> None:
    import csv

    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["group", "kept", "a", "b", "verdict", "cosine", "overlap", "passages"])
        for number, group in enumerate(report.groups, start=1):
            for p in group.pairs:
                writer.writerow([number, group.kept, p.a, p.b, p.verdict, f"{p.cosine:.4f}", f"{p.overlap:.4f}",
                                 " | ".join(p.passages)])


@app.command("eval")
@_friendly
def eval_(beir: Path = typer.Option(..., "--beir", help="BEIR folder: corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv."),
          mode: Optional[str] = typer.Option(None, "--mode", help="hybrid (default), dense or lexical."),
          split: str = typer.Option("test", "--split"),
          as_json: bool = typer.Option(False, "--json", help="One JSON object instead of a table.")) -> None:
    """nDCG@10, Recall@100 and MRR@10 on a BEIR-format dataset."""
    from .evaluate import evaluate_beir
    from .search import SearchSettings

    if mode is not None:
        SearchSettings(mode=mode)
    result = evaluate_beir(beir, split, mode, progress=True)
    if as_json:
        typer.echo(json.dumps(result))
        return
    for key, value in result.items():
        typer.echo(f"{key:>10}: {value}")


def main() -> None:
    app(prog_name="embedsearch")


if __name__ == "__main__":
    sys.exit(main())
