"""Building an index on a Ray cluster without the driver ever holding the texts.

Two rounds of Ray tasks, one task per corpus file (a source shard): the first reads and validates its
file on a worker and returns only the ids (so duplicates across files are found, and named, before any
embedding); the second reads the file again, embeds it and writes its documents as whole segments
straight into the new index folder, which must be on storage every node can reach. The driver then
commits generation 1 and swaps the folder in; a failed task leaves nothing behind.

Each worker process loads the model once (``embed.load_model`` keeps it) and embeds through the
embedding cache of its own node (``EMBEDSEARCH_CACHE_DIR`` there: a SQLite file per model that the
node's worker processes share under SQLite's own locking), so a rebuild on the same nodes embeds only
texts they have not seen. Segments hold at most ``StoreSettings.segment_rows`` documents and take the
vector index their size calls for (HNSW from 50,000 documents), so no quantizer is shared between
workers; ``embedsearch compact`` merges them later if one IVF index is wanted.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from .corpus import FieldMap, Problem, UniqueIds, iter_sources
from .embedding.embed import Embedder, EmbedSettings
from .engine.distributed import RaySettings, connect, job_map
from .engine.jobs import JobRunner
from .retrieval.search import SearchSettings
from .store import generation as gen
from .store import segment as seg
from .store.generation import SegmentEntry
from .store.lexical import LexicalSettings
from .store.manifest import Manifest
from .store.settings import StoreSettings
from .store.vectors import VectorSettings
from .store.writer import chunks, export_query_encoder, new_index


def read_ids(source: str, fields: dict, skip_invalid: bool) -> tuple[list[str], list[str]]:
    """On a worker: every id of one corpus file (validating it) and the records skipped."""
    skipped: list[Problem] = []
    ids = [doc.id for doc in iter_sources([source], FieldMap(**fields), skip_invalid, skipped)]
    return ids, [str(p) for p in skipped]


def write_segments(source: str, fields: dict, skip_invalid: bool, root: str, manifest: Manifest,
                   segment_rows: int) -> list[SegmentEntry]:
    """On a worker: embed one corpus file and write it as segments under ``root``; returns their entries."""
    import torch

    torch.set_num_threads(1)
    embedder = Embedder(manifest.model.settings)
    entries = []
    for part in chunks(iter_sources([source], FieldMap(**fields), skip_invalid, []), segment_rows):
        matrix = embedder.embed([d.embed_text for d in part])
        entries.append(seg.write(Path(root), part, matrix, seg.vector_writer(manifest.vectors, [], matrix),
                                 manifest.lexical))
    return entries


def from_sources(sources: list[Path], target: Path, fields: FieldMap, skip_invalid: bool, ray: RaySettings,
                 embed: EmbedSettings | None = None, storage: StoreSettings | None = None, progress: bool = False,
                 name: str = "", **settings: Any) -> list[Problem]:
    """``Index.from_sources`` with ``ray=``: the manifest from the settings given (as the local build makes
    it), then ``build``."""
    connect(ray)  # an unreachable cluster fails in a second, not after loading the model
    embedder = Embedder(embed or EmbedSettings())
    storage = storage or StoreSettings()
    parts = {"vectors": VectorSettings(), "lexical": LexicalSettings(), "search": SearchSettings()}
    parts.update({k: v for k, v in settings.items() if k in parts})
    manifest = Manifest.new(embedder.manifest_entry(), vectors=parts["vectors"], lexical=parts["lexical"],
                            search=asdict(parts["search"]), store=storage, sources=tuple(str(s) for s in sources),
                            name=name)
    skipped = build(sources, target, fields, skip_invalid, manifest, job_map(ray))
    export_query_encoder(embedder)
    return [Problem(*line.split(": ", 1)) if ": " in line else Problem(line, "") for line in skipped]


def build(sources: list[Path], target: Path, fields: FieldMap, skip_invalid: bool, manifest: Manifest,
          jobs: JobRunner) -> list[str]:
    """Build ``target`` from ``sources`` through ``jobs`` (a ``RayMap``); returns the skipped records."""
    names = [str(Path(s).resolve()) for s in sources]
    checked = list(jobs(read_ids, [(name, asdict(fields), skip_invalid) for name in names]))
    unique = UniqueIds()
    for name, (ids, _) in zip(names, checked):
        for doc_id in ids:
            unique.add(doc_id, name)
    unique.finish(", ".join(names))
    with new_index(target, manifest) as tmp:
        work = [(name, asdict(fields), skip_invalid, str(tmp), manifest, manifest.store.segment_rows) for name in names]
        entries = [entry for written in jobs(write_segments, work) for entry in written]
        gen.publish(tmp, entries, 1)
    return [problem for _, skipped in checked for problem in skipped]
