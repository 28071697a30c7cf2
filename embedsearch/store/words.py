"""A segment's folded-word postings: for each word of its papers' author names, titles and bodies (title and
abstract), folded as the query grammar folds text (``corpus.fold``), the rows that hold it, and for a body
word each row's positions of it in the folded body (positional postings, as Lucene keeps them). They make the
grammar's fielded terms exact over a whole index (``retrieval.fielded``): a word's rows are read, not
guessed from the most relevant papers, and a phrase is an intersection of positions, with no document read.

Derived from the segment's documents, which never change: written with each segment (recorded in its
``segment.json``), or made on first use for a segment written before them, beside it under ``words/``
(written aside and renamed into place: a killed process leaves none half-written). Kept apart from the BM25
postings, whose words are stemmed and stop-worded: a phrase's words must be the words as written.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable, Sequence
from functools import cached_property
from pathlib import Path

import numpy as np

from ..corpus import Document
from ..corpus.fold import author_names, plain
from ..disk.durable import staged_folder
from ..errors import CorruptIndexError
from .files import DERIVED

FOLDER = DERIVED
FORMAT = 2  # 2: positions of body words
FIELDS = {"author": "a", "title": "t", "body": "b"}
CHUNK = 20_000  # documents folded at a time: memory is the postings, not the text
SHIFT = 32  # a body occurrence as one sortable number: row << SHIFT | position
REPAIR = "`embedsearch check --repair --index {root}` makes them again from the documents"
COMPILED_FROM = 1 << 16  # candidate rows from which a phrase takes the compiled loops (numba's import pays)


def doc_words(doc: Document) -> tuple[list[str], list[str]]:
    """A document's distinct author and title keys (``a:word``, ``t:word``), and its body's words in order."""
    keys = {f"a:{w}" for name in author_names(doc.metadata) for w in name.split()}
    keys.update(f"t:{w}" for w in plain(doc.title).split())
    return list(keys), plain(f"{doc.title or ''} {doc.text}").split()


def build(documents: Iterable[Document], folder: Path, chunk_size: int = CHUNK, replace: bool = False) -> None:
    """Write the postings of ``documents`` (in row order) under ``folder/words``: a vocabulary, per key its
    rows ascending (CSR: ``indptr``, ``rows``), and per body key and row how often the word occurs there
    (``counts``, beside ``rows``) and where (``positions``, from ``posptr``). Each chunk's occurrences wait
    on disk, so memory holds the postings, not every occurrence. ``replace``: an older folder there (another
    format) is replaced."""
    vocab: dict[str, int] = {}
    with staged_folder(folder / FOLDER, replace=replace) as tmp:
        spill = tmp / "chunks"
        spill.mkdir()
        chunks, rows_seen, longest = 0, 0, 0
        batch: list[Document] = []

        def fold() -> None:
            nonlocal chunks, rows_seen, longest
            keys, occurrences, owners, places = [], [], [], []
            for n, doc in enumerate(batch):
                named, body = doc_words(doc)
                ids = [vocab.setdefault(f"b:{w}", len(vocab)) for w in body]
                distinct = dict.fromkeys(ids)
                keys.extend(vocab.setdefault(k, len(vocab)) for k in named)
                keys.extend(distinct)
                owners.append(len(named) + len(distinct))
                occurrences.extend(ids)
                places.append(len(ids))
                longest = max(longest, len(ids))
            sizes = np.asarray(owners, dtype=np.int64)
            body = np.asarray(places, dtype=np.int64)
            np.save(spill / f"{chunks}.keys.npy", np.asarray(keys, dtype=np.int32))
            np.save(spill / f"{chunks}.sizes.npy", sizes)
            np.save(spill / f"{chunks}.occ.npy", np.asarray(occurrences, dtype=np.int32))
            np.save(spill / f"{chunks}.body.npy", body)
            chunks, rows_seen = chunks + 1, rows_seen + len(batch)
            batch.clear()

        for doc in documents:
            batch.append(doc)
            if len(batch) == chunk_size:
                fold()
        fold()
        _assemble(spill, chunks, len(vocab), rows_seen, longest, tmp)
        shutil.rmtree(spill)
        (tmp / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False))
        (tmp / "config.json").write_text(json.dumps({"format": FORMAT, "documents": rows_seen}))


def _assemble(spill: Path, chunks: int, size: int, documents: int, longest: int, out: Path) -> None:
    """The CSR files from the chunks' keys and occurrences (each chunk's rows follow the last's)."""
    totals, occurs = np.zeros(size, dtype=np.int64), np.zeros(size, dtype=np.int64)
    for c in range(chunks):
        totals += np.bincount(np.load(spill / f"{c}.keys.npy"), minlength=size)
        occurs += np.bincount(np.load(spill / f"{c}.occ.npy"), minlength=size)
    indptr, posptr = np.zeros(size + 1, dtype=np.int64), np.zeros(size + 1, dtype=np.int64)
    np.cumsum(totals, out=indptr[1:])
    np.cumsum(occurs, out=posptr[1:])
    rows = np.empty(int(indptr[-1]), dtype=np.int32)
    counts = np.lib.format.open_memmap(out / "counts.npy", "w+", np.uint16 if longest < 1 << 16 else np.uint32,
                                       (int(indptr[-1]),))
    positions = np.lib.format.open_memmap(out / "positions.npy", "w+",
                                          np.uint16 if longest < 1 << 16 else np.uint32, (int(posptr[-1]),))
    counts[:] = 0
    cursor, at, first = indptr[:-1].copy(), posptr[:-1].copy(), 0
    for c in range(chunks):
        part, sizes = np.load(spill / f"{c}.keys.npy"), np.load(spill / f"{c}.sizes.npy")
        occ, body = np.load(spill / f"{c}.occ.npy"), np.load(spill / f"{c}.body.npy")
        owners = np.repeat(np.arange(first, first + len(sizes), dtype=np.int32), sizes)
        order = np.argsort(part, kind="stable")  # rows stay ascending within each key
        ranked = part[order]
        rows[cursor[ranked] + _rank(ranked)] = owners[order]
        order = np.argsort(occ, kind="stable")  # by word, then row, then position
        ranked = occ[order]
        owner = np.repeat(np.arange(first, first + len(body), dtype=np.int32), body)[order]
        positions[at[ranked] + _rank(ranked)] = (np.arange(len(occ)) - np.repeat(np.cumsum(body) - body, body))[order]
        if len(ranked):  # a (word, row) run's length, on that word's entry for that row
            starts = np.flatnonzero(np.r_[True, (ranked[1:] != ranked[:-1]) | (owner[1:] != owner[:-1])])
            word = ranked[starts]
            counts[cursor[word] + _rank(word)] = np.diff(np.r_[starts, len(ranked)])
        cursor += np.bincount(part, minlength=size)
        at += np.bincount(occ, minlength=size)
        first += len(sizes)
    np.save(out / "indptr.npy", indptr)
    np.save(out / "rows.npy", rows)
    np.save(out / "posptr.npy", posptr)
    counts.flush()
    positions.flush()
    del counts, positions


def _distinct(ascending: np.ndarray) -> np.ndarray:
    """The distinct values of an ascending array (a pass, not ``np.unique``'s sort), as rows."""
    if not len(ascending):
        return np.zeros(0, dtype=np.int32)
    return ascending[np.r_[True, ascending[1:] != ascending[:-1]]].astype(np.int32)


def _rank(ranked: np.ndarray) -> np.ndarray:
    """Each item's place among the equal items before it in a sorted array."""
    return np.arange(len(ranked)) - np.searchsorted(ranked, ranked, side="left")


class Words:
    """One segment's word postings, memory-mapped; made from its documents when missing."""

    def __init__(self, folder: Path, documents, rows: int, remake: bool = True):
        self.folder, self.count = folder / FOLDER, rows
        try:
            config = json.loads((self.folder / "config.json").read_text())
            fresh = config.get("format") == FORMAT and config.get("documents") == rows
        except (OSError, ValueError, AttributeError):
            fresh = False
        if not fresh and not remake:  # recorded with the segment: never remade in place, repaired as a new one
            raise CorruptIndexError(f"{self.folder}: word postings of another format or size than the segment; "
                                    f"{REPAIR.format(root=folder.parent.parent)}")
        if not fresh:
            build(iter(documents), folder, replace=True)
        try:
            # mapped, then seen as plain arrays: slicing a np.memmap costs microseconds a slice
            self.indptr = np.asarray(np.load(self.folder / "indptr.npy", mmap_mode="r"))
            self.rows = np.asarray(np.load(self.folder / "rows.npy", mmap_mode="r"))
        except (OSError, ValueError) as exc:
            raise CorruptIndexError(f"{self.folder}: word postings unreadable ({exc}); delete that folder and "
                                    "search again to remake it") from exc

    @cached_property
    def vocab(self) -> dict[str, int]:
        try:
            vocab = json.loads((self.folder / "vocab.json").read_text())
        except (OSError, ValueError) as exc:
            raise CorruptIndexError(f"{self.folder / 'vocab.json'}: unreadable ({exc}); delete that folder and "
                                    "search again to remake it") from exc
        if len(vocab) != len(self.indptr) - 1:
            raise CorruptIndexError(f"{self.folder}: vocabulary and postings disagree; delete that folder and "
                                    "search again to remake it")
        return vocab

    def rows_of(self, field: str, word: str) -> np.ndarray:
        """The rows whose ``field`` (``author``, ``title``, ``body``) holds the folded ``word``, ascending."""
        key = self.vocab.get(f"{FIELDS[field]}:{word}")
        if key is None:
            return np.zeros(0, dtype=np.int32)
        return self._listed(int(self.indptr[key]), int(self.indptr[key + 1]))

    def _listed(self, lo: int, hi: int) -> np.ndarray:
        """The rows ``lo:hi`` of the postings, after the invariants a read can afford: a list ascends, ends within
        the segment, and every row of it holds the word at least once (zeroed numbers fail all three)."""
        rows = np.asarray(self.rows[lo:hi])
        if hi > lo and (rows[-1] >= self.count or (hi - lo > 1 and rows[0] >= rows[-1]) or rows[0] < 0):
            raise CorruptIndexError(f"{self.folder / 'rows.npy'}: a posting list out of order or past the segment's "
                                    f"{self.count} documents; {REPAIR.format(root=self.folder.parent.parent.parent)}")
        return rows

    @cached_property
    def _positional(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        try:
            arrays = tuple(np.asarray(np.load(self.folder / f"{n}.npy", mmap_mode="r"))
                           for n in ("counts", "posptr", "positions"))
        except (OSError, ValueError) as exc:
            raise CorruptIndexError(f"{self.folder}: positions unreadable ({exc}); delete that folder and search "
                                    "again to remake it") from exc
        counts, posptr, positions = arrays
        if len(counts) != len(self.rows) or len(posptr) != len(self.indptr) or int(posptr[-1]) != len(positions):
            raise CorruptIndexError(f"{self.folder}: positions and postings disagree; delete that folder and search "
                                    "again to remake it")
        return counts, posptr, positions

    def occurrences(self, word: str, rows: np.ndarray) -> np.ndarray:
        """Every place of the folded body ``word`` in ``rows`` (ascending, each holding it), as ascending
        numbers ``row << SHIFT | position``."""
        key = self.vocab.get(f"b:{word}")
        if key is None or not len(rows):
            return np.zeros(0, dtype=np.int64)
        counts, posptr, positions = self._positional
        lo, hi = int(self.indptr[key]), int(self.indptr[key + 1])
        held = np.asarray(counts[lo:hi], dtype=np.int64)
        if hi > lo and (held[0] < 1 or held[-1] < 1):
            raise CorruptIndexError(f"{self.folder / 'counts.npy'}: a word held 0 times by a row that lists it; "
                                    f"{REPAIR.format(root=self.folder.parent.parent.parent)}")
        ends = np.cumsum(held)
        if len(rows) == hi - lo:  # every row holding the word: its positions are one slice
            found = np.asarray(positions[int(posptr[key]):int(posptr[key + 1])], dtype=np.int64)
            return (np.repeat(np.asarray(rows, dtype=np.int64), held) << SHIFT) | found
        picked = np.searchsorted(np.asarray(self.rows[lo:hi]), rows)
        many = held[picked]
        places = np.repeat(ends[picked] - np.cumsum(many), many) + np.arange(int(many.sum()))
        found = np.asarray(positions[int(posptr[key]) + places], dtype=np.int64)
        return (np.repeat(np.asarray(rows, dtype=np.int64), many) << SHIFT) | found

    def phrase_rows(self, words: Sequence[str], compiled_from: int = COMPILED_FROM) -> np.ndarray:
        """The rows whose folded body holds ``words`` one after another (what ``plain(phrase) in body`` tests),
        ascending: the rows holding them all, then their positions intersected, the word of fewest places first
        (by the compiled loops from ``compiled_from`` candidate rows on)."""
        rows = self.rows_with_all("body", words)
        if len(words) < 2 or not len(rows):
            return rows
        order = sorted(range(len(words)), key=lambda i: self._occurring(words[i]))  # fewest places first
        if len(rows) >= compiled_from:
            return self._compiled(words, order, rows)
        first = self.occurrences(words[order[0]], rows)
        starts = first[(first & ((1 << SHIFT) - 1)) >= order[0]] - order[0]  # where the phrase would begin
        for i in order[1:]:
            if not len(starts):
                break
            places = self.occurrences(words[i], _distinct(starts >> SHIFT))
            wanted = starts + i
            at = np.searchsorted(places, wanted)
            hit = at < len(places)
            hit[hit] = places[at[hit]] == wanted[hit]
            starts = starts[hit]
        return _distinct(starts >> SHIFT)

    def _occurring(self, word: str) -> int:
        """How many places the body ``word`` has in the segment."""
        key = self.vocab.get(f"b:{word}")
        return 0 if key is None else int(self._positional[1][key + 1] - self._positional[1][key])

    def _compiled(self, words: Sequence[str], order: list[int], rows: np.ndarray) -> np.ndarray:
        from . import phrases_compiled as loops

        counts, posptr, positions = self._positional

        def postings(word: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            key = self.vocab[f"b:{word}"]
            lo, hi = int(self.indptr[key]), int(self.indptr[key + 1])
            return self._listed(lo, hi), counts[lo:hi], positions[int(posptr[key]):int(posptr[key + 1])]

        starts = loops.starts_of(rows, *postings(words[order[0]]), order[0])
        for i in order[1:]:
            if not len(starts):
                break
            starts = starts[loops.follow(starts, i, *postings(words[i]))]
        return _distinct(starts >> SHIFT)

    def rows_with_all(self, field: str, words: Iterable[str]) -> np.ndarray:
        """The rows holding every one of ``words`` in ``field``, rarest word first."""
        lists = sorted((self.rows_of(field, w) for w in set(words)), key=len)
        if not lists:
            raise ValueError("rows_with_all needs at least one word")
        found = lists[0]
        for other in lists[1:]:
            found = found[np.isin(found, other, assume_unique=True)]
        return found
