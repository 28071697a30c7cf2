"""Commands that manage an index and the cache: build, add, remove, info, cache."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from ..embedding.settings import EmbedSettings
from .app import (EngineOpt, IndexOpt, JsonOpt, RayAddressOpt, WorkersOpt, app, friendly, open_index,
                  ray_settings)


def _fields(id_field: str | None, title_field: str | None, text_field: str | None):
    from ..corpus import FieldMap

    return FieldMap(id_field, title_field, text_field)


def _report_skipped(skipped) -> None:
    if skipped:
        typer.echo(f"skipped {len(skipped)} invalid record(s):", err=True)
        for problem in skipped[:20]:
            typer.echo(f"  {problem}", err=True)
        if len(skipped) > 20:
            typer.echo(f"  ... and {len(skipped) - 20} more", err=True)


@app.command()
@friendly
def build(sources: list[Path] = typer.Argument(..., help="Corpus files: .txt (seed format), .jsonl, .csv, .parquet."),
          index: str = typer.Option(..., "--index", "-i", help="Index folder to create or replace."),
          model: str = typer.Option(EmbedSettings().model, "--model", help="sentence-transformers name or path; static-minilm (or a model2vec folder) for a fast draft index."),
          id_field: str | None = typer.Option(None, "--id-field"),
          title_field: str | None = typer.Option(None, "--title-field"),
          text_field: str | None = typer.Option(None, "--text-field"),
          index_type: str = typer.Option("auto", "--index-type", help="auto, flat, hnsw or ivfpq."),
          max_windows: int = typer.Option(EmbedSettings().max_windows, "--max-windows", min=1,
                                          help="Windows averaged per long abstract (1 = truncate)."),
          precision: str = typer.Option(EmbedSettings().precision, "--precision",
                                        help="fp32 (default), int8 (smoothed, quantized ONNX: about 2x faster on a CPU, "
                                             "fp32's retrieval quality) or fp16 (CUDA GPU)."),
          skip_invalid: bool = typer.Option(False, "--skip-invalid", help="Skip bad records and report them."),
          name: str | None = typer.Option(None, "--name", help="What to call the corpus in headings (default: the "
                                                               "seed files' header line, or the file's name)."),
          engine: str = EngineOpt, ray_address: str | None = RayAddressOpt,
          workers: int | None = WorkersOpt) -> None:
    """Index a corpus (replaces the index atomically; unchanged texts come from the cache)."""
    from ..embedding.settings import EmbedSettings
    from ..index import Index
    from ..store.settings import VectorSettings

    ray = ray_settings(engine, ray_address, workers)
    idx = Index.from_sources(sources, index, _fields(id_field, title_field, text_field), skip_invalid,
                             embed=EmbedSettings(model=model, max_windows=max_windows, precision=precision),
                             vectors=VectorSettings(index_type=index_type), progress=True, ray=ray, name=name or "")
    _report_skipped(idx.skipped)
    typer.echo(f"indexed {len(idx)} documents into {idx.path} ({idx.snapshot.index_type}, "
               f"{idx.manifest.model.settings.precision})", err=True)


NoWaitOpt = typer.Option(False, "--no-wait", help="Fail at once if another process is writing the index.")


@app.command()
@friendly
def add(sources: list[Path] = typer.Argument(..., help="Corpus files to add."),
        index: str = typer.Option(..., "--index", "-i"),
        id_field: str | None = typer.Option(None, "--id-field"),
        title_field: str | None = typer.Option(None, "--title-field"),
        text_field: str | None = typer.Option(None, "--text-field"),
        skip_invalid: bool = typer.Option(False, "--skip-invalid"), no_wait: bool = NoWaitOpt,
        check_duplicates: bool = typer.Option(False, "--check-duplicates",
                                              help="Judge each new abstract against the index first."),
        on_duplicate: str = typer.Option("refuse", "--on-duplicate",
                                         help="With --check-duplicates: refuse the add (exit 2), skip the "
                                              "duplicates, or add them anyway (refuse, skip, add)."),
        as_json: bool = JsonOpt) -> None:
    """Add documents to an index as a new segment, embedding only the new ones."""
    from ..corpus import read_sources
    from ..corpus.kinds import FieldKinds
    from ..dedup import ON_DUPLICATE
    from ..errors import DuplicateError, check_choice
    from ..index import Index
    from .dedup import print_report

    check_choice("--on-duplicate", on_duplicate, ON_DUPLICATE)
    idx = Index.load(index)
    result = read_sources(sources, _fields(id_field, title_field, text_field), skip_invalid,
                          FieldKinds(idx.snapshot.field_kinds))
    docs = result.documents
    if skip_invalid:
        present = idx.documents.row_of
        clashes = [d for d in docs if d.id in present]
        docs = [d for d in docs if d.id not in present]
        from ..corpus import Problem

        result.skipped.extend(Problem(d.id, "id already in the index") for d in clashes)
    _report_skipped(result.skipped)
    if not check_duplicates:
        idx.add(docs, progress=True, wait=not no_wait, sources=sources)
        typer.echo(f"added {len(docs)} documents; {idx.path} now holds {len(idx)}", err=True)
        return
    try:
        report = idx.add_checked(docs, on_duplicate, progress=True, wait=not no_wait, sources=sources)
    except DuplicateError as exc:
        print_report(exc.report, as_json, "", against=True)
        raise DuplicateError(f"{exc} (--on-duplicate skip or --on-duplicate add)", exc.report) from None
    skipped = {p.a for p in report.pairs} if on_duplicate == "skip" else set()
    print_report(report, as_json, f"no near-duplicates of the {len(docs)} new abstracts", against=True)
    typer.echo(f"added {len(docs) - len(skipped)} documents"
               f"{f' (skipped {len(skipped)} duplicates)' if skipped else ''}; {idx.path} now holds {len(idx)}",
               err=True)


@app.command()
@friendly
def remove(ids: list[str] = typer.Argument(..., help="Document ids to remove."),
           index: str = typer.Option(..., "--index", "-i"), no_wait: bool = NoWaitOpt) -> None:
    """Remove documents by id (a deletion file is written; nothing is rewritten or re-embedded)."""
    from ..index import Index

    idx = Index.load(index)
    unique = list(dict.fromkeys(ids))
    idx.remove(unique, wait=not no_wait)
    typer.echo(f"removed {len(unique)} documents; {idx.path} now holds {len(idx)}", err=True)


@app.command()
@friendly
def info(index: str | None = IndexOpt, as_json: bool = JsonOpt) -> None:
    """Documents, model, index type, size on disk and build time; a damaged index says so (exit 3)."""
    idx = open_index(index)
    _fail_if_damaged(idx, idx.check())
    details = idx.info()
    if as_json:
        typer.echo(json.dumps(details))
        return
    for key, value in details.items():
        typer.echo(f"{key:>16}: {value}")


@app.command()
@friendly
def check(index: str | None = IndexOpt, as_json: bool = JsonOpt,
          repair: bool = typer.Option(False, "--repair", help="Make again every derived file that is damaged or "
                                      "missing (postings, vector index, ids, deletion files, the generation pointer) "
                                      "from the documents and embeddings, as a new version; say what cannot be.")) -> None:
    """Verify every file of an index against the sizes and checksums in its manifest, and the row counts
    of every part; one line per problem and exit 3 when damaged. ``--repair`` mends what can be mended."""
    from ..store.merges import plan

    if repair:
        _repair(index, as_json)
    idx = open_index(index)
    problems = idx.check(deep=True)
    pending = sum(len(plan(part, part.manifest.store.merge)) for part in idx.snapshot.parts.values() or [idx.snapshot])
    spare = idx.expendable()
    if as_json:
        typer.echo(json.dumps({"path": str(idx.path), "healthy": not problems, "problems": problems,
                               "merges_pending": pending, "safe_to_lose": spare}))
        if problems:
            raise typer.Exit(3)
        return
    _fail_if_damaged(idx, problems)
    typer.echo(f"{idx.path}: healthy ({len(idx)} documents, every file matches the manifest)")
    if spare:
        typer.echo(f"safe to lose, not verified (nothing reads them): {'; '.join(spare)}")
    if pending:
        typer.echo(f"{pending} merge(s) the merge policy asks for are pending (deferred after a commit); the next "
                   "commit retries them, `embedsearch compact` runs them now")


@app.command()
@friendly
def compact(index: str = typer.Option(..., "--index", "-i"), no_wait: bool = NoWaitOpt) -> None:
    """Merge every segment into one and drop deleted rows (small merges also happen by themselves)."""
    from ..index import Index

    idx = Index.load(index)
    before, generation = len(idx.snapshot.segments), idx.generation
    idx = idx.compact(wait=not no_wait)
    if idx.generation == generation:
        typer.echo(f"{idx.path} is already compact ({before} segment(s), nothing deleted); nothing was rewritten",
                   err=True)
        return
    typer.echo(f"compacted {before} segment(s) into {len(idx.snapshot.segments)}; {idx.path} holds {len(idx)} "
               f"documents ({'cut' if idx.folder.kind == 'cluster' else 'generation'} {idx.generation})", err=True)


@app.command()
@friendly
def shard(index: str | None = IndexOpt, out: Path = typer.Option(..., "--out", help="New folder for the cluster."),
          shards: int = typer.Option(..., "--shards", min=1, help="How many shards (documents routed by id hash).")) -> None:
    """Split an index into a cluster of shards, each an ordinary index, with its vectors (nothing is embedded
    again). Every command then takes the cluster as its --index."""
    cluster = open_index(index).split(out, shards)
    sizes = ", ".join(f"{name}: {len(part):,}" for name, part in cluster.snapshot.parts.items())
    typer.echo(f"split {len(cluster):,} documents into {shards} shard(s) at {out} ({sizes})")


@app.command()
@friendly
def upgrade(index: str = typer.Option(..., "--index", "-i")) -> None:
    """Convert an older index in place (nothing is re-embedded): format 1 to segments, format 2's BM25 postings
    made again so word forms meet (colouring and coloring, vortex and vortices)."""
    from ..store.files import FORMAT_VERSION
    from ..store.upgrade import upgrade as convert

    count = convert(index)
    typer.echo(f"upgraded {index} to format {FORMAT_VERSION} ({count:,} documents)", err=True)


def _repair(index: str | None, as_json: bool) -> None:
    """``check --repair``: the repair's account, then (when it mended everything) the check of the result."""
    from ..index import Index

    done = Index.repair(index if index is not None else Index.bundled().path)
    if as_json and done.cannot:
        typer.echo(json.dumps({"healthy": False, **done.to_json()}))
        raise typer.Exit(3)
    for line in done.repaired:
        typer.echo(f"repaired: {line}", err=as_json)
    for line in done.cannot:
        typer.echo(f"error: {line}", err=True)
    if done.cannot:
        typer.echo(f"{len(done.cannot)} problem(s) a repair cannot mend; {len(done.repaired)} mended", err=True)
        raise typer.Exit(3)
    if not done.repaired and not as_json:
        typer.echo("nothing to repair")


def _fail_if_damaged(idx, problems: list[str]) -> None:
    if problems:
        for problem in problems:
            typer.echo(f"error: {problem}", err=True)
        typer.echo(f"{idx.path} is damaged ({len(problems)} problem(s)); `embedsearch check --repair --index "
                   f"{idx.path}` mends what can be made again, else restore it from a backup or rebuild it", err=True)
        raise typer.Exit(3)


@app.command()
@friendly
def cache(clear: bool = typer.Option(False, "--clear", help="Delete the cached vectors, ONNX exports and numba code."),
          as_json: bool = JsonOpt) -> None:
    """Where the cache lives, what it holds and its size; --clear frees it (all of it is rebuilt on demand)."""
    from ..embedding import cache as store

    root = store.default_cache_dir()
    parts = store.usage(root)
    if clear:
        freed = store.clear(root)
        typer.echo(json.dumps({"path": str(root), "freed_bytes": freed}) if as_json
                   else f"cleared {root}: {_megabytes(freed)} freed")
        return
    if as_json:
        typer.echo(json.dumps({"path": str(root), "bytes": sum(p.bytes for p in parts),
                               "parts": [{"path": str(p.path), "what": p.what, "bytes": p.bytes, "vectors": p.vectors}
                                         for p in parts]}))
        return
    typer.echo(f"{root}  (set EMBEDSEARCH_CACHE_DIR to move it)")
    for p in parts:
        count = f"{p.vectors:,} vectors, " if p.vectors is not None else ""
        typer.echo(f"  {p.path.relative_to(root)}: {p.what}, {count}{_megabytes(p.bytes)}")
    typer.echo(f"total {_megabytes(sum(p.bytes for p in parts))}" if parts else "  (empty)")


def _megabytes(size: int) -> str:
    return f"{size / 1e6:,.1f} MB"
