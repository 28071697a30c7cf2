"""The grammar's narrowing terms (phrases, ``-word``, ``author:``, ``title:``) as exact sets over a whole
index: a part's rows that hold them, found in each segment's word postings (``store.words``) and checked
against the text where the postings cannot tell (the words of one author's name, a title phrase's order).
A ``Fielded`` travels with a search's filters, so the search ranks within exactly the rows a scan of the
corpus would keep, on one index or on every shard of a cluster alike (``parts.candidates``).

A term's words are folded as the grammar folds text (``corpus.fold``). A phrase or an exclusion is answered
by the positional postings alone (its words one after another in the folded body: the grammar's own test);
a title term or an author's name of several words by the rows holding all their words, each then checked
with ``Query.keeps``, the same test the grammar always applied. An exclusion of one word also drops the rows
holding any of its forms, as BM25 reads them (``store.forms``: ``-vortex`` drops "vortices"), on an index
whose tokens meet their forms (format 3)."""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..corpus.fold import author_names, plain
from ..store.lexical import Tokenizer
from . import bm25
from ..store.segment import Segment
from ..store.snapshot import Snapshot
from .filters import Filter
from .filters import allowed as filter_rows
from .query import Query

_FIELD = {"phrases": "body", "titles": "title", "authors": "author"}
_LOCK = threading.Lock()  # a service's request threads share the masks
_MASKS: OrderedDict[tuple[Path, Fielded], np.ndarray] = OrderedDict()
_KEEP = 64


@dataclass(frozen=True)
class Fielded:
    """The terms that narrow a query, as plain data a remote part receives."""

    phrases: tuple[str, ...] = ()
    without: tuple[str, ...] = ()
    authors: tuple[str, ...] = ()
    titles: tuple[str, ...] = ()

    @classmethod
    def of(cls, query: Query) -> Fielded | None:
        """The query's narrowing terms, or ``None`` when it has none."""
        return cls(query.phrases, query.without, query.authors, query.titles) if query.narrows else None

    def mask(self, snapshot: Snapshot) -> np.ndarray:
        """A flag per live row of ``snapshot``: whether it holds every term."""
        tokenize = bm25.of(snapshot).tokenizer if self.without and snapshot.manifest.lexical.forms else None
        masks = [self._segment(s, tokenize) for s in snapshot.segments]
        return np.concatenate([m if live is None else m[live] for m, live in zip(masks, snapshot.live)]) \
            if masks else np.zeros(0, dtype=bool)

    def _segment(self, segment: Segment, tokenize: Tokenizer | None) -> np.ndarray:
        """The segment's mask over its physical rows, kept for repeated queries (segments never change)."""
        key = (segment.folder, self)
        with _LOCK:
            if key in _MASKS:
                _MASKS.move_to_end(key)
                return _MASKS[key]
        mask = self._compute(segment, tokenize)
        mask.flags.writeable = False
        with _LOCK:
            _MASKS[key] = mask
            while len(_MASKS) > _KEEP:
                _MASKS.popitem(last=False)
        return mask

    def _compute(self, segment: Segment, tokenize: Tokenizer | None) -> np.ndarray:
        words = segment.words
        rows: np.ndarray | None = None  # None: every row
        check: dict[str, list[str]] = {"titles": [], "authors": []}
        for name, field in _FIELD.items():
            for term in getattr(self, name):
                folded = plain(term).split()
                if folded:
                    held = words.phrase_rows(folded) if name == "phrases" else words.rows_with_all(field, folded)
                    rows = held if rows is None else rows[np.isin(rows, held, assume_unique=True)]
                if name != "phrases" and len(folded) != 1 or not folded:  # word order, one author's name, no word
                    check.setdefault(name, []).append(term)
        mask = np.zeros(segment.rows, dtype=bool)
        if rows is None:
            mask[:] = True
        else:
            mask[rows] = True
        verify = Query("", tuple(check.get("phrases", ())), (), (), tuple(check["titles"]))
        if verify.narrows:
            _keep_only(segment, mask, verify)
        if check["authors"]:
            _keep_authors(segment, mask, Query("", authors=tuple(check["authors"])))
        for term in self.without:
            folded = plain(term).split()
            if not folded:  # the grammar reads a term of no words as held by every paper
                mask[:] = False
            else:
                mask[words.phrase_rows(folded)] = False
            if tokenize is not None and len(folded) == 1:  # -vortex drops vortices: every form BM25 counts as one
                for token in tokenize(term):
                    mask[segment.postings.term(token)[0]] = False
        return mask


def _keep_only(segment: Segment, mask: np.ndarray, test: Query, rows: np.ndarray | None = None) -> None:
    """Clear the flags of ``rows`` (default: the flagged ones) whose documents fail ``test``."""
    rows = np.flatnonzero(mask) if rows is None else rows
    passes = _checker(test)
    for start in range(0, len(rows), 2048):
        batch = rows[start:start + 2048].tolist()
        for row, doc in zip(batch, segment.documents.get(batch)):
            if not passes(doc):
                mask[row] = False


def _keep_authors(segment: Segment, mask: np.ndarray, test: Query) -> None:
    """Clear the flags of rows none of whose authors has every word of each name in ``test``, reading the
    names from the metadata columns (not the documents: a prolific author's thousands of papers in ms)."""
    rows = np.flatnonzero(mask)
    columns = {n: c.take(rows).to_pylist() for n, c in _columns(segment.folder, ("authors", "author")).items()}
    for i, row in enumerate(rows.tolist()):
        if not test.holds(" ", " ", author_names({n: values[i] for n, values in columns.items()})):
            mask[row] = False


def _checker(test: Query):
    """``test.keeps`` on a document, faster where it can be exact: on an ASCII paper, a phrase, exclusion or
    title term of ASCII words is a case-blind search for its words as whole words, separated by anything
    that is no word, the very test the folded text answers (ASCII text folds to its lower case)."""
    def keeps(doc) -> bool:
        return test.keeps(doc.title, doc.text, doc.metadata)

    terms = [*test.phrases, *test.without, *test.titles]
    words = [plain(t).split() for t in terms]
    if test.authors or any(not w or not all(x.isascii() for x in w) for w in words):
        return keeps
    found = [re.compile(r"(?<!\w)" + r"\W+".join(map(re.escape, w)) + r"(?!\w)", re.IGNORECASE) for w in words]
    held, shunned, titled = (found[:len(test.phrases)], found[len(test.phrases):len(test.phrases) + len(test.without)],
                             found[len(test.phrases) + len(test.without):])

    def passes(doc) -> bool:
        body = f"{doc.title or ''} {doc.text}"
        if not body.isascii():
            return keeps(doc)
        return all(p.search(body) for p in held) and not any(p.search(body) for p in shunned) \
            and all(p.search(doc.title or "") for p in titled)

    return passes


def allowed(snapshot: Snapshot, filters: Sequence[Filter | Fielded], kinds: dict[str, str] | None = None) \
        -> np.ndarray | None:
    """Live rows of ``snapshot`` passing every metadata filter and fielded term (None when there are none)."""
    mask = filter_rows(snapshot, [f for f in filters if isinstance(f, Filter)], kinds)
    for terms in (f for f in filters if isinstance(f, Fielded)):
        found = terms.mask(snapshot)
        mask = found if mask is None else mask & found
    if mask is not None:
        mask.flags.writeable = False
    return mask


def matching(snapshot: Snapshot, filters: Sequence[Filter | Fielded], kinds: dict[str, str] | None = None) \
        -> tuple[np.ndarray, list[str]]:
    """A part's live rows passing every filter and term, ascending, with each one's date as sortable text
    (its ``date``, else its ``year``; empty when it has neither): what a listing of a query with no free
    words sorts and pages."""
    mask = allowed(snapshot, filters, kinds)
    rows = np.arange(len(snapshot)) if mask is None else np.flatnonzero(mask)
    return rows, dates(snapshot, rows)


def dates(snapshot: Snapshot, rows: np.ndarray) -> list[str]:
    """The sortable date of each live row in ``rows``, read from the segments' metadata columns."""
    out = [""] * len(rows)
    for s, positions, local in snapshot.locate(rows):
        columns = {n: c.take(np.asarray(local)).to_pylist()
                   for n, c in _columns(snapshot.segments[s].folder, ("date", "year")).items()}
        for i, position in enumerate(positions.tolist()):
            value = (columns["date"][i] if "date" in columns else None) or \
                (columns["year"][i] if "year" in columns else None)
            out[position] = "" if value is None or isinstance(value, bool) else str(value)
    return out


@lru_cache(maxsize=128)
def _columns(folder: Path, names: tuple[str, ...]) -> dict:
    """Those of a segment's metadata columns ``names`` that it has, read once: segments never change."""
    import pyarrow.parquet as pq

    from ..store.metadata import FILE

    file = folder / FILE
    present = sorted(set(pq.read_schema(file).names) & set(names)) if file.is_file() else []
    table = pq.read_table(file, columns=present) if present else None
    return {n: table.column(n).combine_chunks() for n in present}
