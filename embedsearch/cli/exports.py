"""The reference-manager outputs of search, similar and recommend: ``--bibtex``, ``--ris``, ``--csl-json``,
each checked like every output before any work and written atomically."""

from __future__ import annotations

import os
from pathlib import Path

import typer

from ..corpus.export import paper_record, render
from ..disk.durable import durable_file
from .output import check_output

BibOpt = typer.Option(None, "--bibtex", help="Also write the results as BibTeX to this file.")
RisOpt = typer.Option(None, "--ris", help="Also write the results as RIS to this file.")
CslOpt = typer.Option(None, "--csl-json", help="Also write the results as CSL-JSON to this file.")
ForceExportOpt = typer.Option(False, "--force", help="Replace export files that already exist.")


def outputs(bibtex: Path | None, ris: Path | None, csl: Path | None) -> list[tuple[str, str, Path]]:
    return [(kind, option, path) for kind, option, path in
            (("bibtex", "--bibtex", bibtex), ("ris", "--ris", ris), ("csl-json", "--csl-json", csl)) if path]


def check(wanted: list[tuple[str, str, Path]], sources=(), force: bool = False) -> None:
    from ..errors import InputError

    if len({os.path.realpath(p) for _, _, p in wanted}) < len(wanted):
        raise InputError("two export options name the same file; name one file each")
    for _, option, path in wanted:
        check_output(path, option, sources, force)


def write(wanted: list[tuple[str, str, Path]], hits) -> None:
    """Every hit once (in order, across queries), in each format asked for."""
    seen, records = set(), []
    for hit in hits:
        if hit.id not in seen:
            seen.add(hit.id)
            records.append(paper_record(hit.id, hit.title, hit.text, hit.metadata))
    for kind, _, path in wanted:
        with durable_file(Path(os.path.realpath(path))) as fh:
            fh.write(render(kind, records))
        typer.echo(f"wrote {len(records)} reference(s) to {path}", err=True)
