"""The two large parts of a merged segment, written in bounded memory: the live vectors copied block by
block into ``embeddings.npy``, and the BM25 postings rewritten term range by term range. Each holds at most
about ``budget`` bytes at once (``StoreSettings.merge_buffer_mb``), whatever the corpus; the sources are read
with plain reads, not memory maps (see ``npy``). What stays proportional to the merged rows is small: four
bytes a row of document lengths, and the vocabulary."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import asdict
from pathlib import Path

import numpy as np

from ..errors import CorruptIndexError
from .lexical import FOLDER, TOKEN_PATTERN
from .npy import NpyRows, NpyWriter
from .settings import LexicalSettings

Part = tuple[Path, "np.ndarray | None"]
POSTING_BYTES = 40  # a posting in flight: term, row and tf read, their renumbered copies, and the sort order


def copy_live_rows(parts: Sequence[Part], target: Path, budget: int) -> int:
    """Write the live rows of each ``(embeddings.npy, live mask)`` in order into ``target``; returns the rows."""
    sources = [(NpyRows(file), live) for file, live in parts]
    dims = {s.shape[1:] for s, _ in sources}
    if len(dims) != 1:
        raise CorruptIndexError(f"segments to merge hold vectors of different shapes {sorted(dims)}; rebuild the index")
    rows = sum(len(s) if live is None else int(live.sum()) for s, live in sources)
    shape = sources[0][0].shape[1:]
    block = max(1, budget // max(1, int(np.prod(shape)) * 4 * 2))
    with NpyWriter(target, np.float32, (rows, *shape)) as out:
        for source, live in sources:
            for start, matrix in source.blocks(block):
                out.append(matrix if live is None else matrix[live[start:start + len(matrix)]])
    return rows


class _Source:
    """One segment's postings, read from its files: the map from its term ids to the merged ones, its
    offsets, and the renumbering of its live rows into the merged segment."""

    def __init__(self, folder: Path, live: np.ndarray | None, vocab: dict[str, int], base: int):
        self.folder = folder / FOLDER
        self.rows, self.tf = NpyRows(self.folder / "rows.npy"), NpyRows(self.folder / "tf.npy")
        self.indptr = np.asarray(NpyRows(self.folder / "indptr.npy"))
        self.lengths = np.asarray(NpyRows(self.folder / "lengths.npy"))
        self.live = live
        try:
            local = json.loads((self.folder / "vocab.json").read_text())
        except (OSError, ValueError) as exc:
            raise CorruptIndexError(f"{self.folder / 'vocab.json'}: unreadable ({exc}); rebuild the index") from exc
        self.to_merged = np.full(len(self.indptr) - 1, -1, dtype=np.int64)
        for term, number in local.items():
            if not isinstance(number, int) or not 0 <= number < len(self.to_merged):
                raise CorruptIndexError(f"{self.folder / 'vocab.json'}: term {term!r} has no postings; rebuild")
            self.to_merged[number] = vocab.setdefault(term, len(vocab))
        if len(local) != len(self.to_merged) or (self.to_merged < 0).any() or \
                int(self.indptr[-1]) != len(self.rows) or len(self.tf) != len(self.rows):
            raise CorruptIndexError(f"{self.folder}: vocabulary and postings disagree; rebuild the index")
        self.renumber = base + (np.arange(len(self.lengths)) if live is None else np.cumsum(live) - 1)
        self.live_rows = len(self.lengths) if live is None else int(live.sum())

    def live_lengths(self) -> np.ndarray:
        return self.lengths if self.live is None else self.lengths[self.live]

    def postings(self, first: int, last: int, block: int) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """``(merged term, merged row, tf)`` of the live postings stored between offsets ``first`` and ``last``."""
        for start in range(first, last, max(1, block)):
            stop = min(last, start + block)
            rows, tf = self.rows.read(start, stop), self.tf.read(start, stop)
            terms = np.searchsorted(self.indptr, np.arange(start, stop), side="right") - 1
            keep = slice(None) if self.live is None else self.live[rows]
            yield self.to_merged[terms[keep]], self.renumber[rows[keep]], tf[keep]


def merge_postings(parts: Sequence[Part], folder: Path, settings: LexicalSettings, budget: int) -> None:
    """Write the postings of the live rows of several segments (each ``(segment folder, live mask)``) under
    ``folder/lexical``, renumbered in order, without re-tokenising; as ``lexical.build`` would have written them."""
    vocab: dict[str, int] = {}
    sources, base = [], 0
    for segment, live in parts:
        sources.append(_Source(segment, live, vocab, base))
        base += sources[-1].live_rows
    block = max(1, budget // POSTING_BYTES)
    counts = np.zeros(len(vocab), dtype=np.int64)
    for source in sources:
        if source.live is None:
            counts[source.to_merged] += np.diff(source.indptr)
            continue
        for terms, _, _ in source.postings(0, len(source.rows), block):
            counts += np.bincount(terms, minlength=len(vocab))
    indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    target = folder / FOLDER
    target.mkdir()
    with NpyWriter(target / "rows.npy", np.int32, (int(indptr[-1]),)) as rows_out, \
            NpyWriter(target / "tf.npy", np.float32, (int(indptr[-1]),)) as tf_out:
        for low, high in _term_ranges(indptr, block):
            terms, rows, tfs = [], [], []
            for source in sources:
                for t, r, f in source.postings(*_span(source, low, high), block):
                    inside = (t >= low) & (t < high)
                    terms.append(t[inside]), rows.append(r[inside]), tfs.append(f[inside])
            order = np.argsort(np.concatenate(terms), kind="stable") if terms else np.zeros(0, np.int64)
            rows_out.append(np.concatenate(rows)[order] if rows else np.zeros(0, np.int32))
            tf_out.append(np.concatenate(tfs)[order] if tfs else np.zeros(0, np.float32))
    np.save(target / "indptr.npy", indptr)
    lengths = np.concatenate([s.live_lengths() for s in sources]).astype(np.int32)
    np.save(target / "lengths.npy", lengths)
    (target / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False))
    (target / "config.json").write_text(json.dumps({"settings": asdict(settings), "documents": len(lengths),
                                                    "token_pattern": TOKEN_PATTERN}))


def _term_ranges(indptr: np.ndarray, block: int) -> Iterator[tuple[int, int]]:
    """Merged term ranges ``[low, high)`` of about ``block`` postings each (a larger term alone)."""
    low, terms = 0, len(indptr) - 1
    while low < terms:
        high = int(np.searchsorted(indptr, indptr[low] + block, side="right")) - 1
        high = min(terms, max(low + 1, high))
        yield low, high
        low = high


def _span(source: _Source, low: int, high: int) -> tuple[int, int]:
    """The stored offsets holding every posting of the merged terms ``[low, high)`` in ``source``: one
    contiguous run, tight where the source numbers terms in the merged order (the first source does)."""
    local = np.flatnonzero((source.to_merged >= low) & (source.to_merged < high))
    if len(local) == 0:
        return 0, 0
    return int(source.indptr[local[0]]), int(source.indptr[local[-1] + 1])
