"""Building an index on a Ray cluster without the driver ever holding the texts.

Two rounds of Ray tasks, one task per corpus file (a source shard): the first reads and validates its
file on a worker and returns only the ids (so duplicates across files are found, and named, before any
embedding); the second reads the file again, embeds it and writes its documents as whole segments
straight into the new index folder, which must be on storage every node can reach. The driver then
commits generation 1 and swaps the folder in; a failed task leaves nothing behind.

Each worker process loads the model once (``embed.load_model`` keeps it) and embeds through the
embedding cache of its own node (``EMBEDSEARCH_CACHE_DIR`` there: a SQLite file per model that the
node's worker processes share under SQLite's own locking), so a rebuild on the same nodes embeds only
texts they have not seen. Segments hold at most ``StoreSettings.segment_rows`` documents, and every one
takes the vector index the whole corpus's size calls for, as in a local build. For IVF, a round between
the two embeds a sample of ``segment_rows`` documents drawn across the files (through the same caches, so
round two finds them there), the driver trains one quantizer on it, and every worker fills its segments
with that one: the segments of a corpus share a quantizer, as a local build's do.
"""

from __future__ import annotations

from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..corpus import FieldMap, Problem, UniqueIds, iter_sources
from ..corpus.kinds import FieldKinds, combine
from ..embedding.embed import Embedder
from ..embedding.settings import DEFAULT_MODEL, EmbedSettings
from ..jobs.on_ray import connect, job_map
from ..jobs.runner import JobRunner
from ..jobs.settings import RaySettings
from ..errors import InputError
from ..store import generation as gen
from ..store import segment as seg
from ..store import vectors as vec
from ..store.generation import SegmentEntry
from ..store.manifest import Manifest
from ..store.settings import StoreSettings
from ..store.vectors import ivf
from ..store.writer import chunks, new_index
from .embedding import export_query_encoder
from .manifest import new_manifest


def read_ids(source: str, fields: dict, skip_invalid: bool) -> tuple[list[str], list[str], dict[str, str]]:
    """On a worker: every id of one corpus file (validating it), the records skipped and its field kinds."""
    skipped: list[Problem] = []
    kinds = FieldKinds()
    ids = [doc.id for doc in iter_sources([source], FieldMap(**fields), skip_invalid, skipped, kinds)]
    return ids, [str(p) for p in skipped], kinds.kinds


def _one_thread() -> None:
    """A worker shares the machine with the others: one thread for the encoder, whichever it is."""
    import os
    import sys

    from ..embedding.onnx_encoder import THREADS_ENV

    os.environ[THREADS_ENV] = os.environ["OMP_NUM_THREADS"] = "1"
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)


def embed_sample(source: str, fields: dict, skip_invalid: bool, manifest: Manifest, rows: list[int]) -> np.ndarray:
    """On a worker: the vectors of the records at positions ``rows`` of one corpus file (a training sample)."""
    _one_thread()
    wanted = set(rows)
    docs = [d for i, d in enumerate(iter_sources([source], FieldMap(**fields), skip_invalid, [])) if i in wanted]
    return Embedder(manifest.model.settings).embed([d.embed_text for d in docs])


def write_segments(source: str, fields: dict, skip_invalid: bool, root: str, manifest: Manifest,
                   segment_rows: int, kind: str, trained: np.ndarray | None,
                   kinds: dict[str, str]) -> list[SegmentEntry]:
    """On a worker: embed one corpus file and write it as segments under ``root`` with vector index ``kind``
    (filled from the ``trained`` index, serialized, where one is shared); returns their entries."""
    _one_thread()
    embedder = Embedder(manifest.model.settings)
    settings = replace(manifest.vectors, index_type=kind)
    shared = None if trained is None else ivf.deserialize(trained)
    entries = []
    for part in chunks(iter_sources([source], FieldMap(**fields), skip_invalid, []), segment_rows):
        matrix = embedder.embed([d.embed_text for d in part])
        entries.append(seg.write(Path(root), part, matrix, lambda file, m=matrix: vec.save(file, m, settings,
                                                                                            trained=shared),
                                 manifest.lexical, fields=kinds, model=manifest.model.settings.model))
    return entries


def train_shared(names: list[str], counts: list[int], fields: FieldMap, skip_invalid: bool, manifest: Manifest,
                 kind: str, jobs: JobRunner) -> np.ndarray | None:
    """The quantizer every segment shares (serialized), trained on ``segment_rows`` records drawn across the
    files; None for a kind that trains nothing."""
    backend = vec.backend(kind)
    if not backend.trains:
        return None
    total = sum(counts)
    picked = np.sort(np.random.default_rng(0).choice(total, min(total, manifest.store.segment_rows), replace=False))
    starts = np.concatenate([[0], np.cumsum(counts)])
    work = [(name, asdict(fields), skip_invalid, manifest, (rows - start).tolist())
            for name, start, stop in zip(names, starts[:-1], starts[1:])
            if len(rows := picked[(picked >= start) & (picked < stop)])]
    sample = np.concatenate(list(jobs(embed_sample, work)))
    return ivf.serialize(backend.train(sample, replace(manifest.vectors, index_type=kind)))


def from_sources(sources: list[Path], target: Path, fields: FieldMap, skip_invalid: bool, ray: RaySettings,
                 embed: EmbedSettings | None = None, storage: StoreSettings | None = None, progress: bool = False,
                 name: str = "", model: str = DEFAULT_MODEL, **settings: Any) -> list[Problem]:
    """``Index.from_sources`` with ``ray=``: the manifest from the settings given (as the local build makes
    it), then ``build``."""
    connect(ray)  # an unreachable cluster fails in a second, not after loading the model
    embedder = Embedder(embed or EmbedSettings(model=model))
    manifest = new_manifest(embedder.manifest_entry(), storage=storage or StoreSettings(), sources=sources,
                            name=name, **settings)
    skipped = build(sources, target, fields, skip_invalid, manifest, job_map(ray))
    export_query_encoder(embedder)
    return [Problem(*line.split(": ", 1)) if ": " in line else Problem(line, "") for line in skipped]


def build(sources: list[Path], target: Path, fields: FieldMap, skip_invalid: bool, manifest: Manifest,
          jobs: JobRunner) -> list[str]:
    """Build ``target`` from ``sources`` through ``jobs`` (a ``RayMap``); returns the skipped records."""
    names = [str(Path(s).resolve()) for s in sources]
    checked = list(jobs(read_ids, [(name, asdict(fields), skip_invalid) for name in names]))
    unique = UniqueIds()
    for name, (ids, _, _) in zip(names, checked):
        for doc_id in ids:
            unique.add(doc_id, name)
    unique.finish(", ".join(names))
    kinds = agreed_kinds(names, [file_kinds for _, _, file_kinds in checked])
    counts = [len(ids) for ids, _, _ in checked]
    kind = manifest.vectors.choose(sum(counts))
    trained = train_shared(names, counts, fields, skip_invalid, manifest, kind, jobs)
    with new_index(target, manifest) as tmp:
        work = [(name, asdict(fields), skip_invalid, str(tmp), manifest, manifest.store.segment_rows, kind, trained,
                 kinds) for name in names]
        entries = [entry for written in jobs(write_segments, work) for entry in written]
        gen.publish(tmp, entries, 1)
    return [problem for _, skipped, _ in checked for problem in skipped]


def agreed_kinds(names: list[str], found: list[dict[str, str]]) -> dict[str, str]:
    """One field contract from each file's (read by its own worker), or an error naming the two files that
    disagree: as a local build would have refused the first record of the second file."""
    out: dict[str, str] = {}
    first: dict[str, str] = {}
    for name, kinds in zip(names, found):
        for field, kind in kinds.items():
            seen = out.setdefault(field, kind)
            first.setdefault(field, name)
            if seen != kind and {seen, kind} != {"number", "text"}:
                raise InputError(f"{name}: field {field!r} holds {kind} where {first[field]} holds {seen}; make the "
                                 "files agree (or build without --engine ray to find and skip the records)")
            out[field] = combine([{field: seen}, {field: kind}])[field]
    return out
