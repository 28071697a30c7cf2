"""A query in the grammar (``retrieval.query``) answered by the one read path. Its year terms, the given
filters and its fielded terms (phrases, exclusions, authors, title terms: ``fielded``) are exact sets over
the whole corpus, read on every part; its free words rank within them. A query of no free words lists every
paper it matches in date order (newest first unless ``sort`` is ``oldest``). A date order of a ranked query
sorts its ``DEPTH`` most relevant matches (at least ten times ``k``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ..errors import EmptyFilterError, InputError, check_choice
from ..store.snapshot import Snapshot
from .evidence import explain
from .fielded import Fielded
from .filters import Filter
from .parts import Fanout
from .query import Query, parse
from .answer import Answer, Hit, check_k, check_query
from .settings import SORTS, Mode, Sort

DEPTH = 300
MOST = 1_000


def find_many(reader: Fanout, queries: Sequence[Query], k: int = 10, mode: Mode | None = None,
              filters: Sequence[str | Filter] = (), sort: Sort = "relevance") -> list[Answer]:
    """Each parsed query's ``k`` hits; ranked queries with the same terms share one batched search."""
    check_k(k)
    check_choice("sort", sort, SORTS)
    _check_authors(reader.snapshot, queries)
    out: dict[int, Answer] = {}
    groups: dict[tuple, list[int]] = {}
    for n, query in enumerate(queries):
        terms = (*query.filters, *filter(None, [Fielded.of(query)]))
        if query.free:
            groups.setdefault(terms, []).append(n)
        else:
            out[n] = reader.listing(k, [*filters, *terms], newest=sort != "oldest")
    deep = sort != "relevance"
    depth = min(max(DEPTH, 10 * k), MOST) if deep else k
    for terms, members in groups.items():
        answers = reader.search_many([queries[n].text for n in members], max(depth, k), mode, [*filters, *terms])
        for n, answer in zip(members, answers):
            out[n] = _dated(answer, k, sort) if deep else answer
    if filters and any(not len(a) for a in out.values()):
        _check_filters(reader.snapshot, filters)
    return [out[n] for n in range(len(queries))]


def _check_filters(snapshot: Snapshot, filters: Sequence[str | Filter]) -> None:
    """A filter no live paper passes is an error naming it, never an empty answer a reader would take for "no
    paper matches my words" (checked only when an answer came back empty: no cost otherwise)."""
    from .filters import allowed

    for given in filters:
        condition = given if isinstance(given, Filter) else Filter.parse(given)
        masks = [allowed(part, [condition], snapshot.field_kinds) for part in snapshot.parts.values() or [snapshot]]
        if not any(mask is None or mask.any() for mask in masks):
            raise EmptyFilterError(f"filter {given if isinstance(given, str) else condition.field!r}: no paper of this "
                             f"index passes it ({len(snapshot):,} papers); widen or drop it")


def _check_authors(snapshot: Snapshot, queries: Sequence[Query]) -> None:
    """``author:`` on an index none of whose papers has an author field is an error naming the fields it has
    (as ``year:`` is), never an empty answer a reader would take for "no papers by this author"; ``title:`` on
    an index none of whose papers has a title, likewise."""
    named = next((a for q in queries for a in q.authors), None)
    kinds = snapshot.field_kinds
    if named is not None and not {"authors", "author"} & set(kinds):
        listed = ", ".join(sorted(kinds)) or "none (this corpus has no metadata)"
        raise InputError(f"author:{named!r}: no paper of this index has an author field (authors or author); "
                         f"fields: {listed}")
    titled = next((t for q in queries for t in q.titles), None)
    if titled is not None and not _has_titles(snapshot):
        raise InputError(f"title:{titled!r}: no paper of this index has a title (its abstracts came without one); "
                         "search the words without title:")


def _has_titles(snapshot: Snapshot) -> bool:
    """Whether any paper has a title word (read from the word postings' vocabularies, first use only)."""
    return any(any(key.startswith("t:") for key in segment.words.vocab)
               for part in snapshot.parts.values() or [snapshot] for segment in part.segments)


def _dated(answer: Answer, k: int, sort: Sort) -> Answer:
    dated = [h for h in answer if when(h)]
    dated.sort(key=when, reverse=sort == "newest")
    hits = dated + [h for h in answer if not when(h)]
    return Answer(tuple(replace(h, rank=r) for r, h in enumerate(hits[:k], start=1)), answer.version, answer.missing)


def when(hit: Hit) -> str:
    """A hit's date as sortable text: its ``date`` field (ISO), else its ``year``; empty when it has neither."""
    value = hit.metadata.get("date") or hit.metadata.get("year")
    return "" if value is None or isinstance(value, bool) else str(value)


class Finds:
    """The facade's searches in the grammar (``Index`` inherits them); the class provides ``reader`` and
    ``snapshot``."""

    reader: Fanout
    snapshot: Snapshot

    def find(self, query: str | Query, k: int = 10, mode: Mode | None = None, filters: Sequence[str | Filter] = (),
             sort: Sort = "relevance", offset: int = 0, evidence: bool = True) -> Answer:
        """A query in the grammar the CLI, API and page share (``retrieval.query``: ``"phrases"``, ``-words``,
        ``author:``, ``title:``, ``year:``), in ``sort`` order, each hit with its ``evidence``. With ``offset``
        (a later page), the answer holds the ``offset + k`` best and only the last ``k`` carry evidence;
        ``evidence=False``: none does (a table that does not show it need not pay for it)."""
        return self.find_many([query], k, mode, filters, sort, offset, evidence)[0]

    def find_many(self, queries: Sequence[str | Query], k: int = 10, mode: Mode | None = None,
                  filters: Sequence[str | Filter] = (), sort: Sort = "relevance", offset: int = 0,
                  evidence: bool = True) -> list[Answer]:
        """``find`` for many queries (each a string, or a ``Query`` already parsed), with one batched encode."""
        check_k(k)
        if not isinstance(offset, int) or offset < 0:
            raise InputError(f"offset must be a whole number of 0 or more, got {offset!r}")
        parsed = [q if isinstance(q, Query) else parse(check_query(q)) for q in queries]
        answers = find_many(self.reader, parsed, offset + k, mode, filters, sort)
        return [a if a.listing or not evidence else explain(self.snapshot, a, q.text, offset=offset)
                for a, q in zip(answers, parsed)]
