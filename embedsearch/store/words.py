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
from collections.abc import Iterable, Sequence
from functools import cached_property
from pathlib import Path

import numpy as np

from ..errors import CorruptIndexError
from .words_build import FIELDS, FOLDER, FORMAT, SHIFT, _distinct, build

__all__ = ["FIELDS", "FOLDER", "FORMAT", "SHIFT", "Words", "build"]  # the writer's names, re-exported
REPAIR = "`embedsearch check --repair --index {root}` makes them again from the documents"
COMPILED_FROM = 1 << 16  # candidate rows from which a phrase takes the compiled loops (numba's import pays)


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
