"""How a segment's folded-word postings are written (``store.words`` reads them): each chunk of documents
folded as the query grammar folds text, its keys and body occurrences spilled to disk, then assembled into
CSR files (a vocabulary; per key its rows; per body key and row its count and positions), written aside and
renamed into place."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from ..corpus import Document
from ..corpus.fold import author_names, plain
from ..disk.durable import staged_folder
from .files import DERIVED

FOLDER = DERIVED
FORMAT = 2  # 2: positions of body words
FIELDS = {"author": "a", "title": "t", "body": "b"}
CHUNK = 20_000  # documents folded at a time: memory is the postings, not the text
SHIFT = 32  # a body occurrence as one sortable number: row << SHIFT | position


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
