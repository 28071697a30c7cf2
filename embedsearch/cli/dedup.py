"""``embedsearch dedup``: near-duplicate groups inside an index, an index against another corpus, or a file of
submissions against an index (one row each), with titles beside ids, as text, JSON or CSV."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import typer

from ..dedup.settings import DedupSettings
from ..errors import InputError
from ..disk.durable import durable_file
from .app import EngineOpt, ForceOpt, IndexOpt, JsonOpt, RayAddressOpt, app, friendly, one_line, open_index, ray_settings
from .topics import index_sources
from .output import check_output

_DEDUP = DedupSettings()


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
        titles = _titles(idx, reference)  # read while an --against file's scratch index exists
        if csv_file is not None:
            _write_pairs_csv(report, csv_file, titles)
        if write_kept is not None:
            _write_kept(report, idx, write_kept)
        print_report(report, as_json, f"no near-duplicates among {len(idx)} abstracts", bool(against), titles)


def _titles(idx, reference):
    """``titles(side, id)``: a paper's title, else its first sentence (side ``a`` of ``idx``, ``b`` of the
    ``--against`` corpus where there is one), for the rows a chair reads."""
    def title(side: str, doc_id: str) -> str:
        docs = (reference if side == "b" and reference is not None else idx).documents
        row = docs.row_of.get(doc_id)
        if row is None:
            return ""
        shown = docs.get([row])[0].readable()
        return shown.title or shown.first_sentence()
    return title


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


def print_report(report, as_json: bool, none: str, against: bool = False, titles=None) -> None:
    """A duplicate report as JSON, or as groups with their pairs (with ``titles(side, id)``, each id's title) and
    the first shared passage."""
    from ..corpus.readable import readable

    if as_json:
        typer.echo(json.dumps(report.to_json(), ensure_ascii=False))
        return
    if not report.groups:
        typer.echo(none)
    new, old = ("new ", "existing ") if against else ("", "")

    def named(side: str, doc_id: str) -> str:
        title = titles(side, doc_id) if titles else ""
        return one_line(doc_id) + (f" ({one_line(title[:80])}{'…' if len(title) > 80 else ''})" if title else "")

    for number, group in enumerate(report.groups, start=1):
        typer.echo(f"group {number}: keep {old}{named('b' if against else 'a', group.kept)}; "
                   f"absorbs {new}{', '.join(named('a', a) for a in group.absorbed)}"
                   + (f"; also keeps {', '.join(named('a', a) for a in group.also_kept)} (a duplicate of an "
                      "absorbed record, of no kept one)" if group.also_kept else ""))
        for p in group.pairs:
            typer.echo(f"  {new}{one_line(p.a)} ~ {old}{one_line(p.b)}  {p.verdict:<14} cosine {p.cosine:.3f}  "
                       f"overlap {p.overlap:.2f}")
            if p.passages:
                quote = readable(p.passages[0]) or ""
                typer.echo(f"    shared: \"{quote[:100]}{'…' if len(quote) > 100 else ''}\"")


def _write_kept(report, idx, path: Path) -> None:
    """The records the report keeps, in corpus order, as JSONL that ``build`` reads back (metadata as fields)."""
    titles = {d.id: d.title for d in idx.documents.get([idx.documents.row_of[i] for g in report.groups
                                                          for i in g.members])}
    series = report.distinct_titles(titles.get)
    kept = set(report.selected) | set(series)
    rows = [idx.documents.row_of[i] for i in report.ids if i in kept]
    with durable_file(Path(os.path.realpath(path))) as fh:
        for start in range(0, len(rows), 10_000):
            for doc in idx.documents.get(rows[start:start + 10_000]):
                record = {**doc.metadata, "id": doc.id, "title": doc.title, "text": doc.text}
                fh.write(json.dumps({k: v for k, v in record.items() if v is not None}, ensure_ascii=False) + "\n")
    typer.echo(f"wrote {len(rows)} of {len(report.ids)} records to {path} "
               f"({report.duplicate_ratio:.1%} were duplicates)", err=True)
    if series:
        typer.echo(f"kept {len(series)} flagged record(s) whose titles differ from the record they duplicate "
                   f"(distinct papers of a series reusing an abstract): {', '.join(series)}", err=True)


def _write_pairs_csv(report, path: Path, titles=None) -> None:
    with durable_file(Path(os.path.realpath(path)), newline="") as fh:
        report.write_csv(fh, titles)
