"""``embedsearch watch``: saved searches kept with an index, and the new papers each finds since it last ran
(``--atom`` writes them as a feed)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from .app import JsonOpt, app, friendly, one_line
from .output import check_output

watch_app = typer.Typer(no_args_is_help=True, rich_markup_mode="markdown",
                        help="Saved searches: new papers since each last ran (add, run, list, remove).")
app.add_typer(watch_app, name="watch")
IndexReq = typer.Option(..., "--index", "-i", help="The index the watch is kept with.")


@watch_app.command("add")
@friendly
def add(name: str = typer.Argument(..., help="The watch's name (letters, digits, '.', '_', '-')."),
        query: str | None = typer.Argument(None, help="A query in the search grammar."),
        index: str = IndexReq,
        like: list[str] = typer.Option([], "--like", help="Id of a paper you like; repeatable."),
        unlike: list[str] = typer.Option([], "--unlike", help="Id of a paper you do not want; repeatable."),
        library: Path | None = typer.Option(None, "--library", help="Your papers (.bib, .ris, CSL-JSON, Zotero CSV)."),
        k: int = typer.Option(10, "-k", "--k", min=1, help="At most this many new papers a run."),
        filters: list[str] = typer.Option([], "--filter", help="FIELD=VALUE or FIELD>=NUMBER; repeatable.")) -> None:
    """Save a search with the index; its first run lists papers added after now."""
    from ..index import Index
    from ..watch import Watch
    from ..watch import add as keep

    idx = Index.load(index)
    watch = keep(idx, Watch(name, query or "", tuple(like), tuple(unlike), str(library) if library else "", k,
                            tuple(filters)))
    typer.echo(f"watch {watch.name} kept with {idx.path} ({len(idx)} papers seen); `embedsearch watch run "
               f"{watch.name} --index {idx.path}` lists what arrives", err=True)


@watch_app.command("run")
@friendly
def run(name: str | None = typer.Argument(None, help="The watch to run (default: every watch)."),
        index: str = IndexReq, as_json: bool = JsonOpt,
        atom: Path | None = typer.Option(None, "--atom", help="Also write the new papers as an Atom feed."),
        force: bool = typer.Option(False, "--force", help="Replace an --atom file that exists.")) -> None:
    """Papers added to the index since the watch last ran, best first (then it remembers this run)."""
    from ..errors import InputError
    from ..index import Index
    from ..watch import listed
    from ..watch import run as go
    from ..watch.runs import atom_feed

    idx = Index.load(index)
    if atom is not None:
        check_output(atom, "--atom", idx.sources, force)
    names = [name] if name else [w.name for w in listed(idx.path)]
    if not names:
        raise InputError(f"{idx.path} keeps no watches; add one with `embedsearch watch add NAME QUERY --index "
                         f"{idx.path}`")
    runs = [go(idx, n) for n in names]
    for result in runs:
        if as_json:
            typer.echo(json.dumps(result.to_json(), ensure_ascii=False))
            continue
        typer.echo(f"# {result.watch.name}: {len(result.answer)} new of {result.arrived} arrived since the last run")
        for hit in result.answer:
            typer.echo(f"{hit.rank:>3}  {hit.cosine:.3f} {hit.match:<7}  {one_line(hit.id)}  {one_line(hit.preview)}")
    if atom is not None:
        from ..disk.durable import durable_file

        with durable_file(atom.resolve()) as fh:
            fh.write(atom_feed(idx, runs))
        typer.echo(f"wrote {sum(len(r.answer) for r in runs)} entries to {atom}", err=True)


@watch_app.command("list")
@friendly
def list_(index: str = IndexReq, as_json: bool = JsonOpt) -> None:
    """The watches kept with an index."""
    from ..index import Index
    from ..watch import listed

    for watch in listed(Index.load(index).path):
        what = watch.query or f"like {', '.join(watch.like) or '-'}" + (f" + {watch.library}" if watch.library else "")
        typer.echo(json.dumps(watch.to_json(), ensure_ascii=False) if as_json else
                   f"{watch.name}: {what} (last run {watch.last_run or 'never'}, {watch.runs} runs)")


@watch_app.command("remove")
@friendly
def remove(name: str = typer.Argument(...), index: str = IndexReq) -> None:
    """Forget a watch."""
    from ..index import Index
    from ..watch import remove as forget

    idx = Index.load(index)
    forget(idx.path, name)
    typer.echo(f"removed watch {name} from {idx.path}", err=True)
