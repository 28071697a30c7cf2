"""One immutable segment: documents, embeddings, vector index, BM25 postings and metadata of a batch of
documents, written once under ``segments/NAME/`` and never changed (deletions live beside it)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable, Sequence
from functools import cached_property
from pathlib import Path

import numpy as np

from ..corpus import Document
from ..embedding.piece_vectors import StaticVectors
from ..jobs.runner import JobRunner, local_map
from ..errors import CorruptIndexError
from ..disk.durable import file_records, sha256, staged_folder
from . import lexical as lex
from . import metadata, npy
from . import vectors as vec
from .docstore import DocumentStore, write_documents
from .generation import SegmentEntry
from .files import EMBEDDINGS, SEGMENTS, VECTORS
from .settings import LexicalSettings, VectorSettings
from .sentences import Sentences
from .sentences import build as build_sentences
from .words import Words
from .words import build as build_words

INFO = "segment.json"
SMALL_BYTES = 16 << 20  # files up to this size are re-hashed when a reader first opens them: SHA-256 reads about
#                         1.5 GB/s here, so at most about 10 ms a file; larger ones get their size and invariants
OPENED_WHOLE = ("config.json", "vocab.json", "documents.offsets.npy", VECTORS)  # read whole by any reader that
#   opens their part: re-hashing them reads nothing more from disk. The rest are memory-mapped and read in pieces
#   (hashing them on open made a cold lexical query at 1M 22% slower, benchmarks/HISTORY.md): their sizes are
#   checked on open, their contents by the invariants of each read, by `check` and before a merge
DERIVED_PARTS = ("lexical/", "words/", "sentences/", VECTORS)  # what `check --repair` makes again


def repair_hint(file: Path, root: Path) -> str:
    """What a user does about a damaged file of a segment: derived parts are made again by ``check --repair``."""
    name = file.relative_to(root / SEGMENTS).as_posix().split("/", 1)[-1]
    if name.startswith(DERIVED_PARTS):
        return f"`embedsearch check --repair --index {root}` makes it again from the documents and embeddings"
    return "restore the index from a backup, or rebuild it (`embedsearch check --index ... --json` names its sources)"


def new_name() -> str:
    return uuid.uuid4().hex[:16]


def write(root: Path, documents: Sequence[Document] | Iterable[Document], matrix: np.ndarray | None,
          write_vectors: Callable[[Path], str], lexical: LexicalSettings, name: str | None = None,
          write_lexical: Callable[[Path], None] | None = None,
          write_metadata: Callable[[Path], dict[str, str]] | None = None,
          write_embeddings: Callable[[Path], int] | None = None, fields: dict[str, str] | None = None,
          model: str | None = None) -> SegmentEntry:
    """Write a segment under ``root/segments`` and return its entry for a generation manifest.
    ``write_vectors(file)`` writes the FAISS index and returns its kind; ``write_lexical(folder)``,
    ``write_metadata(folder)`` (returning the field kinds) and ``write_embeddings(file)`` replace building
    postings and metadata from the documents and saving ``matrix`` (a merge streams merged ones, and then
    ``documents`` may be a one-pass iterator and ``matrix`` None). ``fields`` is the index's field contract,
    which the segment records, extended by any field its documents bring. The word postings and the sentences
    (with ``model``'s word pieces, ``store.sentences``) are derived from the written documents and recorded too."""
    name = name or new_name()
    target = root / SEGMENTS / name
    with staged_folder(target) as tmp:
        count = write_documents(tmp, documents)
        if write_embeddings is None:
            np.save(tmp / EMBEDDINGS, np.ascontiguousarray(matrix, dtype=np.float32))
        elif write_embeddings(tmp / EMBEDDINGS) != count:
            raise CorruptIndexError(f"{target}: the merged vectors and documents differ in number; rebuild the index")
        kind = write_vectors(tmp / VECTORS)
        (write_lexical or (lambda folder: lex.build(documents, folder, lexical)))(tmp)
        kinds = (write_metadata or (lambda folder: metadata.write(folder, documents, fields)))(tmp)
        build_words(DocumentStore(tmp), tmp)
        build_sentences(DocumentStore(tmp), tmp, None if model is None else StaticVectors.of(model))
        info = {"name": name, "rows": count, "index_type": kind, "fields": kinds, "files": file_records(tmp)}
        (tmp / INFO).write_text(json.dumps(info, indent=1))
    return entry_of(target)


def vector_writer(settings: VectorSettings, existing: Sequence[Segment], matrix: np.ndarray,
                  map_shards: JobRunner = local_map, merged: bool = False) -> Callable[[Path], str]:
    """The vector-index writer for a new segment (an add, or a ``merged`` one) of an index with ``existing``
    segments."""
    return vec.segment_writer(settings, matrix, [(s.index_type, s.folder / VECTORS, s.rows) for s in existing],
                              map_shards, merged)


def entry_of(folder: Path) -> SegmentEntry:
    """What a generation records of a segment: its name, size, index kind and the checksum of its
    ``segment.json`` (which in turn records every file's size and checksum)."""
    info = json.loads((folder / INFO).read_text())
    return SegmentEntry(info["name"], info["rows"], info["index_type"], sha256(folder / INFO))


class Segment:
    """Read access to one segment; files open lazily, each checked against its neighbours' row counts."""

    def __init__(self, root: Path, entry: SegmentEntry, dimension: int):
        self.name = entry.name
        self.root, self.entry = root, entry
        self.folder = root / SEGMENTS / self.name
        self.rows = entry.rows
        self.index_type = entry.index_type
        self.dimension = dimension
        if not (self.folder / INFO).is_file():
            raise CorruptIndexError(f"{self.folder / INFO}: missing, the segment's record; the index is damaged, "
                                    "restore it or rebuild")

    @cached_property
    def records(self) -> dict[str, dict]:
        """Each file's size and SHA-256 as ``segment.json`` recorded them, once that record matches the checksum
        its generation holds."""
        info = self.folder / INFO
        try:
            if sha256(info) != self.entry.info_sha256:
                raise ValueError("does not match the checksum its generation recorded")
            records = json.loads(info.read_text())["files"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise CorruptIndexError(f"{info}: {exc}; restore the index from a backup, or rebuild it") from None
        return records if isinstance(records, dict) else {}

    def verified(self, *prefixes: str) -> bool:
        """Check the recorded files whose names start with ``prefixes`` before a reader first uses them: every
        size, and the contents of the small ones a reader loads whole (``OPENED_WHOLE`` up to ``SMALL_BYTES``:
        offsets, vocabularies, ids, records, whose damage would turn into quiet wrong answers). Whether any
        such file is recorded."""
        named = {n: r for n, r in self.records.items() if n.startswith(prefixes)}
        for name, record in named.items():
            file = self.folder / name
            size = file.stat().st_size if file.is_file() else None
            if size is None or size != record.get("bytes"):
                fault = "missing" if size is None else f"{size:,} bytes, {INFO} recorded {record.get('bytes')}"
            elif size <= SMALL_BYTES and file.name in OPENED_WHOLE and sha256(file) != record.get("sha256"):
                fault = f"does not match the checksum {INFO} recorded"
            else:
                continue
            raise CorruptIndexError(f"{file}: {fault}; {repair_hint(file, self.root)}")
        return bool(named)
    @cached_property
    def fields(self) -> dict[str, str]:
        """The kind of each metadata field, as this segment records it (``corpus.kinds``)."""
        self.verified(metadata.FILE)
        try:
            info = json.loads((self.folder / INFO).read_text())
        except (OSError, ValueError) as exc:
            raise CorruptIndexError(f"{self.folder / INFO}: unreadable ({exc}); restore it or rebuild") from exc
        return metadata.recorded(self.folder, info if isinstance(info, dict) else {})

    @cached_property
    def documents(self) -> DocumentStore:
        self.verified("documents.", "ids.")
        store = DocumentStore(self.folder)
        if len(store) != self.rows:
            raise CorruptIndexError(f"{self.folder}: {len(store)} documents, the generation says {self.rows}")
        return store

    @cached_property
    def embeddings(self) -> np.ndarray:
        return self._embeddings(scattered=False)

    @cached_property
    def scanned(self) -> np.ndarray:
        """The embeddings a flat segment's search scans whole (read ahead) in place of its FAISS copy, which
        is checked all the same, as opening it would be: a damaged index is reported on its first search."""
        self.verified(VECTORS)
        return self.embeddings

    @cached_property
    def scattered(self) -> np.ndarray:
        """The embeddings mapped again without read-ahead, for reads of a few rows here and there (a search's
        re-scoring); the same pages in memory, so warm it costs nothing, and cold a row costs one page."""
        return self._embeddings(scattered=True)

    def _embeddings(self, scattered: bool) -> np.ndarray:
        file = self.folder / EMBEDDINGS
        self.verified(EMBEDDINGS)
        try:
            matrix = npy.mapped(file, scattered)
        except (OSError, ValueError) as exc:
            raise CorruptIndexError(f"{file}: unreadable ({str(exc).strip()[:120]}); rebuild the index") from exc
        if matrix.shape != (self.rows, self.dimension):
            raise CorruptIndexError(f"{file}: shape {matrix.shape}, expected {(self.rows, self.dimension)}; "
                                    "rebuild the index")
        return matrix

    @cached_property
    def vectors(self):
        self.verified(VECTORS)
        index = vec.read(self.folder / VECTORS, self.index_type)
        if index.ntotal != self.rows:
            raise CorruptIndexError(f"{self.folder / VECTORS}: {index.ntotal} vectors for {self.rows} documents; "
                                    "rebuild the index")
        return index

    @cached_property
    def words(self) -> Words:
        """The folded-word postings of author names, titles and bodies (made on first use)."""
        return Words(self.folder, self.documents, self.rows, remake=not self.verified("words/"))

    def sentences(self, static=None) -> Sentences:
        """The sentence spans, with ``static``'s word pieces where given (made on first use)."""
        kept = self.__dict__.setdefault("_sentences", {})
        key = None if static is None else static.name
        if key not in kept:
            recorded = self.verified("sentences/")
            kept[key] = Sentences(self.folder, self.documents, self.rows, static, remake=not recorded)
        return kept[key]

    @cached_property
    def postings(self) -> lex.Postings:
        self.verified("lexical/")
        postings = lex.Postings(self.folder)
        if len(postings.lengths) != self.rows:
            raise CorruptIndexError(f"{postings.folder}: BM25 over {len(postings.lengths)} documents, "
                                    f"expected {self.rows}")
        return postings
