"""Commands that find papers: search, similar, eval."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import typer

from ..errors import InputError, UnknownIdError
from . import exports
from .app import IndexOpt, JsonOpt, KOpt, app, friendly, one_line, open_index
from .exports import BibOpt, CslOpt, ForceExportOpt, RisOpt


SCORES = {"hybrid": "the fused score (meaning and words, each relative to the best candidate)",
          "dense": "the cosine similarity (closeness in meaning)",
          "lexical": "the BM25 score (how well the words match)"}


def score_note(mode: str) -> str:
    """What the number beside a result is, in one line: the score that orders them; the band is a label."""
    return (f"score: {SCORES[mode]}, which orders the list; band: close, related or distant, read from the "
            "cosine beside it (how close in meaning), whatever the order.")


def _topic_labels(idx) -> dict[str, str]:
    """Each paper's topic label, when topics were already computed for this index (never computed here)."""
    from ..topics import cached

    model = cached(idx.snapshot)
    if model is None:
        return {}
    labels = {t.id: t.title for t in model.topics()}
    return {doc_id: labels[t] for doc_id, t in zip(model.ids, model.assignments[0]) if t >= 0}


def _print_listing(answer, sort: str) -> None:
    """Every paper a query of no free words matches, in date order: rank, date, id, preview."""
    from ..retrieval.find import when

    width = shutil.get_terminal_size((120, 20)).columns
    id_width = max([len(one_line(h.id)) for h in answer] + [2])
    for hit in answer:
        line = f"{hit.rank:>3}  {when(hit) or '-':<10}  {one_line(hit.id):<{id_width}}  {one_line(hit.preview)}"
        typer.echo(line if len(line) <= width else line[: width - 1] + "…")
    order = "oldest" if sort == "oldest" else "newest"
    typer.echo(f"{answer.total:,} papers match every term (exact over the whole index); {len(answer):,} shown, "
               f"{order} first (undated last){'; raise -k for more' if answer.total > len(answer) else ''}.")


def _print_hits(hits, as_json: bool, query: str | None = None, topics: dict[str, str] | None = None,
                mode: str = "dense", note: bool = True, explain: bool = False, sort: str = "relevance",
                line: int = 0) -> None:
    """A table of hits: rank, the score that orders them, the band, the id, a preview; then one line on
    what the score is (``note``). In JSON, one line a hit, each naming the ``query`` (and its ``line`` in a
    file of queries) it answers; a query of a batch with no hit has a line saying so."""
    from ..retrieval.answer import best_match

    if as_json:
        asked = {} if query is None else {"query": query, **({"line": line} if line else {})}
        for hit in hits:
            typer.echo(json.dumps({**asked, **hit.to_json()}, ensure_ascii=False))
        if not hits and query is not None:  # every query of a batch has its row, to join the output with the input
            typer.echo(json.dumps({**asked, "hits": 0, "note": "no paper matches this query"}, ensure_ascii=False))
        return
    if query is not None:
        typer.echo(f"\n# {f'line {line}: ' if line else ''}{query}")
    if getattr(hits, "listing", False):
        return _print_listing(hits, sort)
    width = shutil.get_terminal_size((120, 20)).columns
    shown = [one_line(h.id) for h in hits]
    id_width = max([len(i) for i in shown] + [2])
    if hits:  # each number under its own name: the score orders the list, the band is read from the cosine
        typer.echo(f"{'#':>3}  {'score':>6}  {'band':<7} {'cosine':>6}  {'id':<{id_width}}  "
                   f"{'[topic]  ' if topics else ''}abstract")
    for hit, shown_id in zip(hits, shown):
        topic = f"[{topics.get(hit.id, 'unassigned')}]  " if topics else ""
        cosine = "" if hit.cosine is None else f"{hit.cosine:.3f}"
        line = (f"{hit.rank:>3}  {hit.score:>6.3f}  {hit.match:<7} {cosine:>6}  {shown_id:<{id_width}}  "
                f"{topic}{one_line(hit.preview)}")
        typer.echo(line if len(line) <= width else line[: width - 1] + "…")
        if explain and hit.evidence:
            typer.echo(f"       {why(hit)}")
    if not hits:
        typer.echo("no results")
    elif best_match(hits) == "none":
        typer.echo(f"no close match: the nearest papers are shown, but none is related (best cosine "
                   f"{max(h.cosine or 0 for h in hits):.3f})")
    if hits and note:
        typer.echo(score_note(mode))
        if sort != "relevance":
            from ..retrieval.find import DEPTH

            typer.echo(f"Shown {sort} first (by date or year; undated last) among the {max(DEPTH, 10 * len(hits))} "
                       "most relevant papers.")


def why(hit) -> str:
    """A hit's evidence in one line: the words that matched with their share of BM25, the closest sentence."""
    words = ", ".join(f"{w['word']} {w['share']:.0%}" for w in hit.evidence.get("words", [])) or "no word"
    start, end = hit.evidence.get("sentence", (0, 0))
    seeds = ", ".join(f"{one_line(c['seed'])} {c['cosine']:.2f}" for c in hit.evidence.get("closest_seeds", []))
    return (f"closest to {seeds}; " if seeds else f"matched {words}; ") + \
        f"sentence: \u201c{one_line(hit.text[start:end])[:200]}\u201d"


def _read_queries(file: Path) -> list[tuple[int, str, object]]:
    """Each query line of ``file``: its number, its text and its parse (checked once, here: the facade takes it
    as it is); blank lines are no query."""
    from ..retrieval.query import parse
    from ..retrieval.answer import check_query

    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{file}: cannot read queries ({exc})") from exc
    queries = []
    for number, line in enumerate(lines, start=1):
        if line.strip():
            try:
                queries.append((number, line, parse(check_query(line))))
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
           filters: list[str] = typer.Option([], "--filter", help="FIELD=VALUE or FIELD>=NUMBER; repeatable."),
           sort: str = typer.Option("relevance", "--sort", help="relevance, newest or oldest (by date or year)."),
           explain: bool = typer.Option(False, "--explain", help="Show why each hit matched: its query words' "
                                                                 "shares of BM25 and its closest sentence."),
           bibtex: Path | None = BibOpt, ris: Path | None = RisOpt, csl: Path | None = CslOpt,
           force: bool = ForceExportOpt) -> None:
    """Related abstracts for a free-text query (or every line of --queries). A query may hold "exact phrases",
    -word and -"phrase" exclusions, author:Name, title:word and year:2019..2022 (docs/search.md)."""
    from ..errors import check_choice
    from ..retrieval.query import parse
    from ..retrieval.answer import check_query
    from ..retrieval.settings import SORTS, SearchSettings

    if (query is None) == (queries is None):
        raise InputError("give a QUERY or --queries FILE (not both)")
    if mode is not None:
        named(lambda m: SearchSettings(mode=m), mode, "--mode")
    check_choice("--sort", sort, SORTS)
    parsed = named(lambda q: parse(check_query(q)), query, "QUERY") if query is not None else None
    wanted = exports.outputs(bibtex, ris, csl)
    exports.check(wanted, force=force)
    idx = open_index(index)
    exports.check(wanted, idx.sources, force)
    topics = None if as_json else _topic_labels(idx)
    scored = mode or idx.search_settings.mode
    if queries is None:
        hits = idx.find(parsed, k, mode, filters, sort, evidence=as_json or explain)
        _print_hits(hits, as_json, topics=topics, mode=scored, explain=explain, sort=sort)
        exports.write(wanted, hits)
        return
    batch = _read_queries(queries)
    answers = idx.find_many([q for _, _, q in batch], k, mode, filters, sort, evidence=as_json or explain)
    for n, ((line, text, _), hits) in enumerate(zip(batch, answers)):
        _print_hits(hits, as_json, query=text, topics=topics, mode=scored, note=n == len(batch) - 1,
                    explain=explain, sort=sort, line=line)
    exports.write(wanted, [h for hits in answers for h in hits])


@app.command()
@friendly
def similar(doc_id: str | None = typer.Argument(None, help="Id of a paper in the index."),
            text: str | None = typer.Option(None, "--text", help="An abstract's text."),
            file: Path | None = typer.Option(None, "--file", help="A file holding an abstract."),
            index: str | None = IndexOpt, k: int = KOpt, as_json: bool = JsonOpt,
            bibtex: Path | None = BibOpt, ris: Path | None = RisOpt, csl: Path | None = CslOpt,
            force: bool = ForceExportOpt) -> None:
    """Related papers for a paper in the index, or for a new abstract."""
    given = [x for x in (doc_id, text, file) if x is not None]
    if len(given) != 1:
        raise InputError("give exactly one of DOC_ID, --text or --file")
    wanted = exports.outputs(bibtex, ris, csl)
    exports.check(wanted, [file] if file else (), force)
    if file is not None and not file.is_file():
        raise InputError(f"{file}: no such file" if not file.exists() else f"{file}: is a folder, not a file")
    if text is not None:
        from ..retrieval.answer import check_query

        named(check_query, text, "--text")
    idx = open_index(index)
    exports.check(wanted, [*idx.sources, *([file] if file else [])], force)
    topics = None if as_json else _topic_labels(idx)
    if doc_id is not None:
        if doc_id not in idx.documents.row_of:
            raise UnknownIdError(f"no document with id {doc_id!r} in {idx.path}; use --text for new abstracts")
        hits = idx.similar(doc_id, k)
    elif file is None:
        hits = idx.similar_to_text(text or "", k)
    else:
        hits = _similar_to_file(idx, file, k)
    _print_hits(hits, as_json, topics=topics)
    exports.write(wanted, hits)


def _similar_to_file(idx, file: Path, k: int):
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise InputError(f"{file}: cannot read the abstract ({reason})") from None
    try:
        return idx.similar_to_text(text, k)
    except InputError as exc:
        raise InputError(f"{file}: {exc}") from None


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
