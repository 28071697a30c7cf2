"""One immutable segment: documents, embeddings, vector index, BM25 postings and metadata of a batch of
documents, written once under ``segments/NAME/`` and never changed (deletions live beside it)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from .. import filters as flt
from .. import lexical as lex
from ..corpus import Document
from ..docstore import DocumentStore, write_documents
from ..errors import CorruptIndexError
from .files import file_records, sha256, staged_folder
from .layout import EMBEDDINGS, SEGMENTS, VECTORS

INFO = "segment.json"


def new_name() -> str:
    return uuid.uuid4().hex[:16]


def write(root: Path, documents: Sequence[Document] | Iterable[Document], matrix: np.ndarray, write_vectors: Callable[[Path], str],
          lexical: lex.LexicalSettings, name: str | None = None,
          write_lexical: Callable[[Path], None] | None = None,
          write_metadata: Callable[[Path], None] | None = None) -> dict[str, Any]:
    """Write a segment under ``root/segments`` and return its entry for a generation manifest.
    ``write_vectors(file)`` writes the FAISS index and returns its kind; ``write_lexical(folder)`` and
    ``write_metadata(folder)`` replace building postings and metadata from the documents (a merge
    passes merged ones, and then ``documents`` may be a one-pass iterator)."""
    name = name or new_name()
    target = root / SEGMENTS / name
    with staged_folder(target) as tmp:
        count = write_documents(tmp, documents)
        np.save(tmp / EMBEDDINGS, np.ascontiguousarray(matrix, dtype=np.float32))
        kind = write_vectors(tmp / VECTORS)
        (write_lexical or (lambda folder: lex.build(documents, folder, lexical)))(tmp)
        (write_metadata or (lambda folder: flt.write(folder, documents)))(tmp)
        info = {"name": name, "rows": count, "index_type": kind, "files": file_records(tmp)}
        (tmp / INFO).write_text(json.dumps(info, indent=1))
    return entry_of(target)


def vector_writer(manifest: dict[str, Any], existing: Sequence["Segment"], matrix: np.ndarray,
                  map_shards=None) -> Callable[[Path], str]:
    """The vector-index writer for a new segment (an add or a merge): the kind the index's settings choose
    for its size; an index forced to IVF fills new segments with the trained quantizer of its largest IVF
    segment, so no small segment is ever trained on too few vectors."""
    from dataclasses import asdict

    from .. import ivf
    from .. import vectors as vec

    settings = vec.VectorSettings(**manifest["index"]["settings"])
    trained = None
    ivfs = [s for s in existing if s.index_type == "ivfpq"]
    if settings.choose(len(matrix)) == "ivfpq" and ivfs:
        trained = ivf.read_trained(max(ivfs, key=lambda s: s.rows).folder / VECTORS)
    elif settings.index_type != "auto" and settings.choose(len(matrix)) == "ivfpq":
        settings = vec.VectorSettings(**{**asdict(settings), "index_type": "auto"})
    options = {"map_shards": map_shards} if map_shards is not None else {}
    return lambda file: vec.save(file, matrix, settings, trained=trained, **options)


def entry_of(folder: Path) -> dict[str, Any]:
    """What a generation records of a segment: its name, size, index kind and the checksum of its
    ``segment.json`` (which in turn records every file's size and checksum)."""
    info = json.loads((folder / INFO).read_text())
    return {"name": info["name"], "rows": info["rows"], "index_type": info["index_type"],
            "info_sha256": sha256(folder / INFO)}


class Segment:
    """Read access to one segment; files open lazily, each checked against its neighbours' row counts."""

    def __init__(self, root: Path, entry: dict[str, Any], dimension: int):
        self.name = entry["name"]
        self.folder = root / SEGMENTS / self.name
        self.rows = int(entry["rows"])
        self.index_type = entry["index_type"]
        self.dimension = dimension
        if not (self.folder / INFO).is_file():
            raise CorruptIndexError(f"{self.folder}: segment missing; the index is damaged, restore it or rebuild")

    @cached_property
    def documents(self) -> DocumentStore:
        store = DocumentStore(self.folder)
        if len(store) != self.rows:
            raise CorruptIndexError(f"{self.folder}: {len(store)} documents, the generation says {self.rows}")
        return store

    @cached_property
    def embeddings(self) -> np.ndarray:
        file = self.folder / EMBEDDINGS
        try:
            matrix = np.load(file, mmap_mode="r")
        except (OSError, ValueError) as exc:
            raise CorruptIndexError(f"{file}: unreadable ({str(exc).strip()[:120]}); rebuild the index") from exc
        if matrix.shape != (self.rows, self.dimension):
            raise CorruptIndexError(f"{file}: shape {matrix.shape}, expected {(self.rows, self.dimension)}; "
                                    "rebuild the index")
        return matrix

    @cached_property
    def vectors(self):
        from .. import vectors as vec
        from ..ivf import IVFDATA

        if self.index_type == "ivfpq" and not (self.folder / IVFDATA).exists():
            raise CorruptIndexError(f"{self.folder / IVFDATA} is missing; rebuild with `embedsearch build`")
        index = vec.read(self.folder / VECTORS)
        if index.ntotal != self.rows:
            raise CorruptIndexError(f"{self.folder / VECTORS}: {index.ntotal} vectors for {self.rows} documents; "
                                    "rebuild the index")
        return index

    @cached_property
    def postings(self) -> lex.Postings:
        postings = lex.Postings(self.folder)
        if len(postings.lengths) != self.rows:
            raise CorruptIndexError(f"{postings.folder}: BM25 over {len(postings.lengths)} documents, "
                                    f"expected {self.rows}")
        return postings
