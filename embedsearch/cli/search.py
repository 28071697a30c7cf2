"""Commands that find papers: search, similar, eval."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import typer

from ..errors import InputError, UnknownIdError
from .app import IndexOpt, JsonOpt, KOpt, app, friendly, one_line, open_index


def _topic_labels(idx) -> dict[str, str]:
    """Each paper's topic label, when topics were already computed for this index (never computed here)."""
    from ..topics import cached

    model = cached(idx.snapshot)
    if model is None:
        return {}
    labels = {t.id: t.label for t in model.topics()}
    return {doc_id: labels[t] for doc_id, t in zip(model.ids, model.assignments[0]) if t >= 0}


def _print_hits(hits, as_json: bool, query: str | None = None, topics: dict[str, str] | None = None,
                mode: str = "dense", note: bool = True) -> None:
    """A table of hits: rank, the score that orders them, the band, the id, a preview; then one line on
    what the score is (``note``)."""
    from ..retrieval.search import best_match, score_note

    if as_json:
        for hit in hits:
            record = hit.to_json()
            typer.echo(json.dumps({"query": query, **record} if query is not None else record, ensure_ascii=False))
        return
    if query is not None:
        typer.echo(f"\n# {query}")
    width = shutil.get_terminal_size((120, 20)).columns
    shown = [one_line(h.id) for h in hits]
    id_width = max([len(i) for i in shown] + [2])
    for hit, shown_id in zip(hits, shown):
        topic = f"[{topics.get(hit.id, 'unassigned')}]  " if topics else ""
        line = (f"{hit.rank:>3}  {hit.score:.3f} {hit.match:<7}  {shown_id:<{id_width}}  "
                f"{topic}{one_line(hit.preview)}")
        typer.echo(line if len(line) <= width else line[: width - 1] + "…")
    if not hits:
        typer.echo("no results")
    elif best_match(hits) == "none":
        typer.echo(f"no close match: the nearest papers are shown, but none is related (best cosine "
                   f"{max(h.cosine or 0 for h in hits):.3f})")
    if hits and note:
        typer.echo(score_note(mode))


def _read_queries(file: Path) -> list[str]:
    from ..retrieval.search import check_query

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


def named(check, value: str, option: str):
    """``check(value)``, with its error naming the argument or option the value came from."""
    try:
        return check(value)
    except InputError as exc:
        raise InputError(f"{option}: {exc}") from None


@app.command()
@friendly
def search(query: str | None = typer.Argument(None, help="Free-text query."),
           index: str | None = IndexOpt, k: int = KOpt, as_json: bool = JsonOpt,
           queries: Path | None = typer.Option(None, "--queries", help="File with one query per line."),
           mode: str | None = typer.Option(None, "--mode", help="hybrid (default), dense or lexical."),
           filters: list[str] = typer.Option([], "--filter", help="FIELD=VALUE or FIELD>=NUMBER; repeatable.")) -> None:
    """Related abstracts for a free-text query (or every line of --queries)."""
    from ..retrieval.search import check_query
    from ..retrieval.settings import SearchSettings

    if (query is None) == (queries is None):
        raise InputError("give a QUERY or --queries FILE (not both)")
    if mode is not None:
        named(lambda m: SearchSettings(mode=m), mode, "--mode")
    if query is not None:
        named(check_query, query, "QUERY")
    idx = open_index(index)
    topics = None if as_json else _topic_labels(idx)
    scored = mode or idx.search_settings.mode
    if queries is None:
        _print_hits(idx.search(query, k, mode=mode, filters=filters), as_json, topics=topics, mode=scored)
        return
    batch = _read_queries(queries)
    answers = idx.search_many(batch, k, mode=mode, filters=filters)
    for n, (text, hits) in enumerate(zip(batch, answers)):
        _print_hits(hits, as_json, query=text, topics=topics, mode=scored, note=n == len(batch) - 1)


@app.command()
@friendly
def similar(doc_id: str | None = typer.Argument(None, help="Id of a paper in the index."),
            text: str | None = typer.Option(None, "--text", help="An abstract's text."),
            file: Path | None = typer.Option(None, "--file", help="A file holding an abstract."),
            index: str | None = IndexOpt, k: int = KOpt, as_json: bool = JsonOpt) -> None:
    """Related papers for a paper in the index, or for a new abstract."""
    given = [x for x in (doc_id, text, file) if x is not None]
    if len(given) != 1:
        raise InputError("give exactly one of DOC_ID, --text or --file")
    if file is not None and not file.is_file():
        raise InputError(f"{file}: no such file" if not file.exists() else f"{file}: is a folder, not a file")
    if text is not None:
        from ..retrieval.search import check_query

        named(check_query, text, "--text")
    idx = open_index(index)
    if doc_id is not None:
        if doc_id not in idx.documents.row_of:
            raise UnknownIdError(f"no document with id {doc_id!r} in {idx.path}; use --text for new abstracts")
        _print_hits(idx.similar(doc_id, k), as_json, topics=None if as_json else _topic_labels(idx))
        return
    if file is None:
        _print_hits(idx.similar_to_text(text or "", k), as_json, topics=None if as_json else _topic_labels(idx))
        return
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise InputError(f"{file}: cannot read the abstract ({reason})") from None
    try:
        hits = idx.similar_to_text(text, k)
    except InputError as exc:
        raise InputError(f"{file}: {exc}") from None
    _print_hits(hits, as_json, topics=None if as_json else _topic_labels(idx))


@app.command("eval")
@friendly
def eval_(beir: Path = typer.Option(..., "--beir", help="BEIR folder: corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv."),
          mode: str | None = typer.Option(None, "--mode", help="hybrid (default), dense or lexical."),
          split: str = typer.Option("test", "--split"),
          as_json: bool = typer.Option(False, "--json", help="One JSON object instead of a table.")) -> None:
    """nDCG@10, Recall@100 and MRR@10 on a BEIR-format dataset."""
    import tempfile

    from ..index import Index
    from ..retrieval.beir import load_beir, rank_queries, score_run
    from ..retrieval.settings import SearchSettings

    if mode is not None:
        named(lambda m: SearchSettings(mode=m), mode, "--mode")
    data = load_beir(beir, split)
    with tempfile.TemporaryDirectory(prefix="embedsearch-eval-") as tmp:  # embeddings stay in the cache
        index = Index.build(data.documents, Path(tmp) / "index", progress=True)
        mode = mode or index.search_settings.mode
        metrics = score_run(rank_queries(index, data.queries, mode, progress=True), data.qrels)
    result = {"dataset": data.name, "split": split, "mode": mode, "queries": len(data.qrels),
              **{name: round(value, 4) for name, value in metrics.items()}}
    if as_json:
        typer.echo(json.dumps(result))
        return
    for key, value in result.items():
        typer.echo(f"{key:>10}: {value}")
