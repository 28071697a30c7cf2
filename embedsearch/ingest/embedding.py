"""Vectors at write time: a build's through the embedding cache (on Ray if asked), an add's as the index's
were made (the fast query encoder for a few, the model for many), and the ONNX export a build leaves for
fast queries."""

from __future__ import annotations

import sys
from collections.abc import Sequence

import numpy as np

from ..corpus import Document, check_unique
from ..corpus.kinds import FieldKinds
from ..embedding.embed import Embedder, check_fingerprint
from ..store.batches import admit
from ..store.snapshot import Snapshot
from ..store.writer import refuse_present


def embed_documents(embedder, documents: Sequence[Document], progress, label: str, ray=None) -> np.ndarray:
    """Vectors for ``documents`` through the embedder's cache; ``progress`` is ``True`` for a bar of its own
    on stderr, or a callable a caller's bar counts with. With ``ray`` (a ``distributed.RaySettings``),
    texts missing from the cache are encoded on Ray."""
    texts = [d.embed_text for d in documents]
    options = {}
    if ray is not None:
        from ..jobs.on_ray import ray_encoder

        options = {"encode": ray_encoder(embedder.settings, ray), "chunk": ray.chunk}
    if callable(progress):
        return embedder.embed(texts, progress=progress, **options)
    if not progress:
        return embedder.embed(texts, **options)
    with progress_bar(len(texts), label) as bar:
        return embedder.embed(texts, progress=bar.update, **options)


def progress_bar(total: int, label: str):
    """A bar on stderr that shows abstracts/s and the time left."""
    from tqdm import tqdm

    return tqdm(total=total, desc=label, unit=" abstracts", file=sys.stderr, dynamic_ncols=True, smoothing=0.05)


FAST_ADD = 32


def embed_new(snapshot: Snapshot, documents: Sequence[Document], progress: bool, encoder=None) -> np.ndarray:
    """Vectors for documents being added, made as the index's were. Up to ``FAST_ADD`` documents go through
    the fast query encoder (ONNX, no torch import: a submission is checked in well under two seconds; its
    parity with the model is tested), more through the model and its embedding cache. ``encoder``, when it
    is this index's model (a service's shared one), takes every batch. Repeated ids, ids already live and
    values that do not fit the index's field kinds are refused first, before any work."""
    check_unique(documents)
    refuse_present(snapshot, [d.id for d in documents])
    admit(FieldKinds(snapshot.field_kinds), documents, "nothing was added")
    model = snapshot.manifest.model
    if encoder is not None and encoder.fingerprint == model.fingerprint:
        return encoder.encode([d.embed_text for d in documents])
    if len(documents) <= FAST_ADD:
        return snapshot.encoder.encode([d.embed_text for d in documents])
    embedder = Embedder(model.settings)
    check_fingerprint(model, embedder.fingerprint, embedder.settings.model, snapshot.root, embedder.settings.precision)
    return embed_documents(embedder, documents, progress, "embedding new")


def export_query_encoder(embedder) -> None:
    """Leave the export a search of the new index opens (made during the build unless every window was
    cached; an fp16 index's CPU queries use the fp32 export)."""
    from ..embedding.onnx_export import export_onnx, exported
    from ..embedding.precision import export_precision

    if embedder.direct is None and exported(embedder.fingerprint) is None:
        export_onnx(embedder.model, embedder.model_fingerprint, export_precision(embedder.settings.precision))
