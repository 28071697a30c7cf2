"""A segment's folded-word postings: for each word of its papers' author names, titles and bodies (title and
abstract), folded as the query grammar folds text (``corpus.fold``), the rows that hold it. They make the
grammar's fielded terms exact over a whole index (``retrieval.fielded``): a word's rows are read, not
guessed from the most relevant papers.

Derived from the segment's documents, which never change, so they are made once, on first use (or right
after a build), and kept beside the segment under ``words/`` (written aside and renamed into place: a
killed process leaves none half-written). Kept apart from the BM25 postings, whose words are stemmed and
stop-worded: a phrase's words must be the words as written.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import cached_property
from pathlib import Path

import numpy as np

from ..corpus import Document
from ..corpus.fold import author_names, plain
from ..disk.durable import staged_folder
from ..errors import CorruptIndexError
from .layout import DERIVED

FOLDER = DERIVED
FORMAT = 1
FIELDS = {"author": "a", "title": "t", "body": "b"}
CHUNK = 20_000  # documents folded at a time: memory is the postings, not the text


def doc_words(doc: Document) -> list[str]:
    """A document's distinct keys, each ``FIELD:word`` (``a``, ``t``, ``b``)."""
    keys = {f"a:{w}" for name in author_names(doc.metadata) for w in name.split()}
    keys.update(f"t:{w}" for w in plain(doc.title).split())
    keys.update(f"b:{w}" for w in plain(f"{doc.title or ''} {doc.text}").split())
    return list(keys)


def build(documents: Iterable[Document], folder: Path, chunk_size: int = CHUNK) -> None:
    """Write the postings of ``documents`` (in row order) under ``folder/words``: a vocabulary, and per
    key its rows ascending (CSR: ``indptr``, ``rows``)."""
    vocab: dict[str, int] = {}
    keys: list[np.ndarray] = []
    counts: list[np.ndarray] = []
    chunk: list[list[str]] = []

    def fold() -> None:
        ids = [vocab.setdefault(k, len(vocab)) for words in chunk for k in words]
        keys.append(np.asarray(ids, dtype=np.int32))
        counts.append(np.asarray([len(words) for words in chunk], dtype=np.int32))
        chunk.clear()

    for doc in documents:
        chunk.append(doc_words(doc))
        if len(chunk) == chunk_size:
            fold()
    fold()
    per_doc = np.concatenate(counts)
    totals = np.zeros(len(vocab), dtype=np.int64)
    for part in keys:
        totals += np.bincount(part, minlength=len(vocab))
    indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
    np.cumsum(totals, out=indptr[1:])
    rows = np.empty(int(indptr[-1]), dtype=np.int32)
    cursor, first = indptr[:-1].copy(), 0
    for part, sizes in zip(keys, counts):
        owners = np.repeat(np.arange(first, first + len(sizes), dtype=np.int32), sizes)
        order = np.argsort(part, kind="stable")  # rows stay ascending within each key
        ranked = part[order]
        starts = np.searchsorted(ranked, ranked, side="left")
        rows[cursor[ranked] + np.arange(len(ranked)) - starts] = owners[order]
        cursor += np.bincount(part, minlength=len(vocab))
        first += len(sizes)
    with staged_folder(folder / FOLDER) as tmp:
        np.save(tmp / "indptr.npy", indptr)
        np.save(tmp / "rows.npy", rows)
        (tmp / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False))
        (tmp / "config.json").write_text(json.dumps({"format": FORMAT, "documents": int(len(per_doc))}))


class Words:
    """One segment's word postings, memory-mapped; made from its documents when missing."""

    def __init__(self, folder: Path, documents, rows: int):
        self.folder = folder / FOLDER
        try:
            config = json.loads((self.folder / "config.json").read_text())
            fresh = config.get("format") == FORMAT and config.get("documents") == rows
        except (OSError, ValueError, AttributeError):
            fresh = False
        if not fresh:
            build(iter(documents), folder)
        try:
            self.indptr = np.load(self.folder / "indptr.npy", mmap_mode="r")
            self.rows = np.load(self.folder / "rows.npy", mmap_mode="r")
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
        return np.asarray(self.rows[int(self.indptr[key]):int(self.indptr[key + 1])])

    def rows_with_all(self, field: str, words: Iterable[str]) -> np.ndarray:
        """The rows holding every one of ``words`` in ``field``, rarest word first."""
        lists = sorted((self.rows_of(field, w) for w in set(words)), key=len)
        if not lists:
            raise ValueError("rows_with_all needs at least one word")
        found = lists[0]
        for other in lists[1:]:
            found = found[np.isin(found, other, assume_unique=True)]
        return found
