"""A segment's sentences, kept for a hit's evidence (``retrieval.evidence``): each abstract's sentence spans,
cut by blingfire's sentence splitter (a trained one: "Fig. 3", "U.S. Census" and "Sec. 4" stay inside their
sentence), and, for a model with its own word-piece vectors (``embedding.static``), each sentence's kept
word pieces and the norm of their summed vectors. The sentence of a hit closest to a query is then a gather
and a dot product, with no tokenizer pass at query time.

Written with each segment (recorded in its ``segment.json``), or made on first use for a segment written
before them, beside it under ``sentences/`` (written aside and renamed into place)."""

from __future__ import annotations

import ctypes
import json
from collections.abc import Iterable, Sequence
from itertools import islice
from pathlib import Path

import numpy as np

from ..corpus import Document
from ..disk.durable import staged_folder
from ..errors import CorruptIndexError, MissingDependencyError

FOLDER = "sentences"
FORMAT = 1
CHUNK = 5_000
_FILES = ("sentptr.npy", "spans.npy")
_PIECES = ("pieceptr.npy", "pieces.npy", "norms.npy")


def split(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of ``text``, in characters (the whole text when it has no sentence)."""
    try:
        import blingfire
    except ImportError as exc:
        raise MissingDependencyError("the sentence splitter needs blingfire: pip install blingfire") from exc
    data = text.encode("utf-8")
    if not data.strip():
        return [(0, len(text))]
    size = len(data) * 2
    out, starts, ends = ctypes.create_string_buffer(size), (ctypes.c_int32 * size)(), (ctypes.c_int32 * size)()
    written = blingfire.blingfire.TextToSentencesWithOffsets(ctypes.c_char_p(data), ctypes.c_int(len(data)),
                                                             ctypes.byref(out), ctypes.byref(starts),
                                                             ctypes.byref(ends), ctypes.c_int(size))
    if written < 0 or written > size:
        return [(0, len(text))]
    count = out.value.count(b"\n") + 1
    first = np.frombuffer(starts, dtype=np.int32, count=count).astype(np.int64)
    last = np.frombuffer(ends, dtype=np.int32, count=count).astype(np.int64) + 1
    if len(data) != len(text):  # byte offsets to character offsets: count the bytes that start a character
        chars = np.r_[0, np.cumsum((np.frombuffer(data, dtype=np.uint8) & 0xC0) != 0x80)]
        first, last = chars[first], chars[np.minimum(last, len(data))]
    spans = [(a, b) for a, b in zip(first.tolist(), last.tolist()) if b > a]
    return spans or [(0, len(text))]


def build(documents: Iterable[Document], folder: Path, static=None, chunk_size: int = CHUNK,
          replace: bool = False) -> None:
    """Write the sentences of ``documents`` (in row order) under ``folder/sentences``; with ``static``
    (``StaticVectors``), each sentence's kept word pieces and the norm of their summed vectors too.
    ``replace``: an older folder there (another format, or made without word pieces) is replaced."""
    ptr, spans, pieces, lengths, norms = [np.zeros(1, np.int64)], [], [], [], []
    documents = iter(documents)
    while chunk := list(islice(documents, chunk_size)):
        found = [split(doc.text) for doc in chunk]
        ptr.append(ptr[-1][-1] + np.cumsum([len(f) for f in found], dtype=np.int64))
        spans.append(np.asarray([span for f in found for span in f], dtype=np.int32).reshape(-1, 2))
        if static is not None:  # each chunk's pieces kept as one array, not one per sentence
            cut = static.pieces([doc.text[a:b] for doc, doc_spans in zip(chunk, found) for a, b in doc_spans])
            pieces.append(np.concatenate([*cut, np.zeros(0, np.int64)]))
            lengths.append(np.asarray([len(c) for c in cut], dtype=np.int64))
            norms.append(np.linalg.norm(static.sums(cut), axis=1).astype(np.float32))
    ptr = np.concatenate(ptr)
    with staged_folder(folder / FOLDER, replace=replace) as tmp:
        np.save(tmp / "sentptr.npy", ptr)
        np.save(tmp / "spans.npy", np.concatenate([*spans, np.zeros((0, 2), np.int32)]))
        if static is not None:
            dtype = np.uint16 if len(static.matrix) <= 1 << 16 else np.int32
            np.save(tmp / "pieceptr.npy", np.r_[0, np.cumsum(np.concatenate([*lengths, np.zeros(0, np.int64)]))])
            np.save(tmp / "pieces.npy", np.concatenate([*pieces, np.zeros(0, np.int64)]).astype(dtype))
            np.save(tmp / "norms.npy", np.concatenate([*norms, np.zeros(0, np.float32)]))
        (tmp / "config.json").write_text(json.dumps({"format": FORMAT, "documents": int(len(ptr) - 1),
                                                     "vectors": None if static is None else static.name}))


class Sentences:
    """One segment's sentences, memory-mapped; made from its documents when missing."""

    def __init__(self, folder: Path, documents, rows: int, static=None, remake: bool = True):
        self.folder = folder / FOLDER
        want = None if static is None else static.name
        try:
            config = json.loads((self.folder / "config.json").read_text())
            fresh = config.get("format") == FORMAT and config.get("documents") == rows and \
                config.get("vectors") == want
        except (OSError, ValueError, AttributeError):
            fresh = False
        if not fresh and not remake:  # recorded with the segment: never remade in place, repaired as a new one
            raise CorruptIndexError(f"{self.folder}: sentences of another format, size or model than the segment; "
                                    f"`embedsearch check --repair --index {folder.parent.parent}` makes them again")
        if not fresh:
            build(iter(documents), folder, static, replace=True)
        try:  # mapped, then seen as plain arrays: slicing a np.memmap costs microseconds a slice
            self.ptr, self.spans = (np.asarray(np.load(self.folder / n, mmap_mode="r")) for n in _FILES)
            self.pieceptr, self.pieces, self.norms = \
                (np.asarray(np.load(self.folder / n, mmap_mode="r")) for n in _PIECES) \
                if static is not None else (None, None, None)
        except (OSError, ValueError) as exc:
            raise CorruptIndexError(f"{self.folder}: sentences unreadable ({exc}); delete that folder and "
                                    "search again to remake it") from exc
        if len(self.ptr) != rows + 1 or int(self.ptr[-1]) != len(self.spans):
            raise CorruptIndexError(f"{self.folder}: sentences do not match the segment's {rows} documents; "
                                    "delete that folder and search again to remake it")

    def of(self, row: int) -> np.ndarray:
        """The (start, end) spans of row ``row``'s sentences."""
        return np.asarray(self.spans[int(self.ptr[row]):int(self.ptr[row + 1])])

    def closest(self, rows: Sequence[int], target: np.ndarray, matrix: np.ndarray) -> list[tuple[int, int]]:
        """For each row, the span of its sentence whose summed piece vectors (rows of ``matrix``) have the
        highest cosine to the unit vector ``target`` (the first on a tie; a sentence of no kept piece scores 0).
        A row's sentences' pieces lie together, so a page is one slice a row, one gather and one product."""
        rows = np.asarray(rows, dtype=np.int64)
        firsts, lasts = self.ptr[rows], self.ptr[rows + 1]
        begin, end = self.pieceptr[firsts], self.pieceptr[lasts]
        ids = np.concatenate([self.pieces[a:b] for a, b in zip(begin.tolist(), end.tolist())])
        distinct, inverse = np.unique(ids, return_inverse=True)  # a page repeats its pieces: each read once
        per_piece = np.asarray(matrix[distinct.astype(np.int64)] @ target, dtype=np.float64)[inverse]
        running = np.r_[0.0, np.cumsum(per_piece)]
        sizes = lasts - firsts
        owner = np.repeat(np.arange(len(rows)), sizes)
        sentence = np.arange(int(sizes.sum())) - np.repeat(np.cumsum(sizes) - sizes, sizes) + firsts[owner]
        shift = (np.cumsum(end - begin) - (end - begin) - begin)[owner]  # page offset of each row's pieces
        dots = running[self.pieceptr[sentence + 1] + shift] - running[self.pieceptr[sentence] + shift]
        norms = self.norms[sentence]
        scores = np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)
        order = np.lexsort((sentence, -scores, owner))  # by row, best score first, the first sentence on a tie
        best = sentence[order[np.searchsorted(owner[order], np.arange(len(rows)))]]
        return [(int(a), int(b)) for a, b in self.spans[best]]
