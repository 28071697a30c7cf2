"""``embedsearch recommend``: papers like the ones a reader has (ids of the index, or a library file) and
unlike the ones they do not want, with the seeds each hit is closest to."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from . import exports
from .app import IndexOpt, JsonOpt, KOpt, app, friendly, one_line, open_index
from .exports import BibOpt, CslOpt, ForceExportOpt, RisOpt
from .search import why


@app.command()
@friendly
def recommend(like: list[str] = typer.Option([], "--like", help="Id of a paper you like; repeatable."),
              unlike: list[str] = typer.Option([], "--unlike", help="Id of a paper you do not want; repeatable."),
              library: Path | None = typer.Option(None, "--library",
                                                  help="Your papers: .bib, .ris, CSL-JSON (.json) or Zotero's CSV "
                                                       "export; matched to the index, the rest embedded as seeds."),
              index: str | None = IndexOpt, k: int = KOpt, as_json: bool = JsonOpt,
              filters: list[str] = typer.Option([], "--filter", help="FIELD=VALUE or FIELD>=NUMBER; repeatable."),
              bibtex: Path | None = BibOpt, ris: Path | None = RisOpt, csl: Path | None = CslOpt,
              force: bool = ForceExportOpt) -> None:
    """Papers like your seed papers (several --like, a --library) and unlike --unlike ones: a linear classifier
    fitted for the request; each hit names the seeds it is closest to. Seeds are never returned."""
    from ..errors import InputError

    if any(not i.strip() for i in [*like, *unlike]):
        raise InputError("--like and --unlike take a paper's id; one was empty")
    if not like and library is None:
        raise InputError("give at least one --like ID or a --library FILE")
    wanted = exports.outputs(bibtex, ris, csl)
    exports.check(wanted, [library] if library else (), force)
    idx = open_index(index)
    exports.check(wanted, [*idx.sources, *([library] if library else [])], force)
    found = idx.recommend(like, unlike, library, k, filters)
    if found.library is not None:
        typer.echo(f"library {library}: {found.library.summary()}; each entry, in the file's order:", err=True)
        for line in found.library.entries:  # one line an entry, so the library joins with what became of it
            typer.echo(f"  {one_line(line)}", err=True)
    if as_json:
        for hit in found.answer:
            typer.echo(json.dumps(hit.to_json(), ensure_ascii=False))
    else:
        for hit in found.answer:
            typer.echo(f"{hit.rank:>3}  {hit.score:.3f} {hit.match:<7}  {one_line(hit.id)}  {one_line(hit.preview)}"
                       f"\n       {why(hit)}")
        if not found.answer:
            typer.echo("no results")
        typer.echo(f"method: {found.method} over {len(found.seeds.like) + len(found.seeds.texts)} liked and "
                   f"{len(found.seeds.unlike)} unliked paper(s); the score ranks within this answer, the band is "
                   "the closest seed's cosine")
    exports.write(wanted, found.answer)
