"""Writing an index version: embed with progress, check ids, and write every part of the folder
(documents, embeddings, FAISS, BM25, metadata, manifest) into a temporary folder swapped in atomically."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from . import filters as flt
from . import lexical as lex
from . import store
from .corpus import Document
from .docstore import write_documents
from .errors import InputError


def check_unique(documents: Sequence[Document]) -> None:
    if not documents:
        raise InputError("no documents to index")
    seen: set[str] = set()
    for doc in documents:
        if doc.id in seen:
            raise InputError(f"duplicate document id {doc.id!r}; ids must be unique")
        seen.add(doc.id)


def embed_documents(embedder, documents: Sequence[Document], progress: bool, label: str, ray=None) -> np.ndarray:
    """Vectors for ``documents`` through the embedder's cache, with a progress bar on stderr if asked;
    with ``ray`` (a ``distributed.RaySettings``), texts missing from the cache are encoded on Ray."""
    texts = [d.embed_text for d in documents]
    options = {}
    if ray is not None:
        from .distributed import ray_encoder

        options = {"encode": ray_encoder(embedder.settings, ray), "chunk": ray.chunk}
    if not progress:
        return embedder.embed(texts, **options)
    from tqdm import tqdm

    with tqdm(total=len(texts), desc=label, unit="doc", file=sys.stderr, dynamic_ncols=True) as bar:
        return embedder.embed(texts, progress=bar.update, **options)


def write_version(path: Path, documents: list[Document], matrix: np.ndarray,
                  write_vectors: Callable[[Path], Any], manifest: dict[str, Any]) -> None:
    """Write every part of an index into a fresh folder and swap it in atomically;
    ``write_vectors(file)`` writes the FAISS index at ``file``."""
    with store.atomic_folder(path) as tmp:
        write_documents(tmp, documents)
        np.save(tmp / store.EMBEDDINGS, matrix)
        write_vectors(tmp / store.VECTORS)
        lex.build(documents, tmp, lex.LexicalSettings(**manifest.get("lexical", {})))
        flt.write(tmp, documents)
        store.write_manifest(tmp, {**manifest, "files": store.file_records(tmp)})


def refill(path: Path, manifest: dict[str, Any], matrix: np.ndarray) -> Callable[[Path], Any]:
    """A vectors writer that re-indexes ``matrix`` as the same kind of index as the one at ``path``,
    reusing its trained IVF quantizer (after ``add`` or ``remove``)."""
    from . import ivf
    from . import vectors as vec

    entry = manifest["index"]
    settings = vec.VectorSettings(**{**entry["settings"], "index_type": entry["type"]})
    trained = ivf.read_trained(path / store.VECTORS) if entry.get("ondisk") else None
    return lambda file: vec.save(file, matrix, settings, trained=trained)


def export_query_encoder(embedder) -> None:
    """Export the model for the fast query path (cached per model fingerprint)."""
    from .query_encoder import export_onnx

    export_onnx(embedder.model, embedder.fingerprint)
