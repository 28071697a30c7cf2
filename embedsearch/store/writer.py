"""Writing an index (the bytes: its vectors come made, from ``build``): a build publishes a fresh folder holding generation 1; ``add`` writes one new
segment and ``remove`` new deletion files, then commits the next generation under the writer lock;
merges follow the tiered policy. Nothing already committed is ever rewritten in place."""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from ..corpus import Document, check_unique
from ..corpus.kinds import FieldKinds
from ..jobs.runner import JobRunner
from ..errors import CorruptIndexError, EmbedsearchError, IdConflictError, InputError, UnknownIdError
from . import deletes
from . import generation as gen
from . import segment as seg
from . import vectors as vec
from .batches import Batch, admit, chunks, unique  # noqa: F401  (the writer's inputs, where callers find them)
from .check import problems
from .merges import compaction, merge, plan
from .generation import SegmentEntry
from .files import LOCK, SEGMENTS, VECTORS, atomic_folder
from .lock import writer
from .manifest import Manifest
from .manifest import write as write_manifest
from .snapshot import Snapshot

log = logging.getLogger(__name__)


@contextmanager
def new_index(path: Path, manifest: Manifest) -> Iterator[Path]:
    """A folder for a new index, published whole in place of ``path`` when the block (which writes its
    segments and first generation) succeeds; an index there is replaced only then. Both build paths use it."""
    with atomic_folder(path) as tmp:
        write_manifest(tmp, manifest)
        (tmp / LOCK).touch()
        yield tmp


def create(path: Path, manifest: Manifest, total: int, batches: Iterable[Batch], map_shards: JobRunner,
           share: Snapshot | None = None) -> None:
    """Write a new index from ``(documents, vectors)`` batches, one segment each. The vector index kind
    follows the whole corpus's size; IVF segments share one quantizer trained on the first batch, filled
    through ``map_shards``. With ``share`` (the index a shard is cut from), its kind and trained quantizer
    are taken instead, so the shards' approximate answers are those of the index they came from."""
    kind = manifest.vectors.choose(total)
    trained: list[Any] = []
    sources = [s for s in share.segments if vec.backend(s.index_type).trains] if share is not None else []
    if sources:
        largest = max(sources, key=lambda s: s.rows)
        kind = largest.index_type
        trained = [vec.backend(kind).prepare(replace(manifest.vectors, index_type=kind),
                                             [(largest.folder / VECTORS, largest.rows)])[1]]
    backend = vec.backend(kind)
    settings = replace(manifest.vectors, index_type=kind)

    def write_vectors(matrix: np.ndarray) -> Callable[[Path], str]:
        trained[:] = trained or [backend.train(matrix, settings)]
        return lambda file: vec.save(file, matrix, settings, trained=trained[0], map_shards=map_shards)

    contract = FieldKinds()
    with new_index(path, manifest) as tmp:
        entries = []
        for docs, matrix in batches:
            admit(contract, docs, "nothing was written")
            entries.append(seg.write(tmp, docs, matrix, write_vectors(matrix), manifest.lexical,
                                     fields=contract.kinds, model=manifest.model.settings.model))
        gen.publish(tmp, entries, 1)


@contextmanager
def write_errors_name(root: Path) -> Iterator[None]:
    """A failed write (disk full, file too large) is reported against the index, not a temporary file."""
    try:
        yield
    except OSError as exc:
        raise InputError(f"cannot write index {root}: {exc.strerror or exc}; nothing was changed") from exc


def append(root: Path, manifest: Manifest, documents: Sequence[Document], matrix: np.ndarray,
           wait: bool | float = True) -> int:
    """Write ``documents`` (unique ids, a vector of the manifest's dimension each) as a new segment, then commit
    it under the writer lock unless an id is already live in the newest generation (then nothing is
    committed). Returns the generation committed."""
    check_unique(documents)
    if matrix.shape != (len(documents), dim := manifest.model.dimension):
        raise InputError(f"{matrix.shape} vectors for {len(documents)} documents of dimension {dim}")
    with write_errors_name(root):
        return _append(root, manifest, documents, matrix, wait)


def _append(root: Path, manifest: Manifest, documents: Sequence[Document], matrix: np.ndarray,
            wait: bool | float) -> int:
    before = Snapshot(root, manifest, gen.newest(root))
    refuse_damaged(before)
    contract = FieldKinds(before.field_kinds)
    admit(contract, documents, "nothing was added")
    entry = seg.write(root, documents, matrix, seg.vector_writer(manifest.vectors, before.segments, matrix),
                      manifest.lexical, fields=contract.kinds,
                      model=manifest.model.settings.model)
    try:
        with writer(root, "add", wait):
            current = Snapshot(root, manifest, gen.newest(root))
            refuse_damaged(current)
            refuse_present(current, [d.id for d in documents])
            admit(FieldKinds(current.field_kinds), documents, "nothing was added")
            number = gen.publish(root, [*current.generation.segments, entry], current.generation.corpus_version + 1)
            _maintain(root, manifest)
    except BaseException:
        if not _named(root, entry.name):
            shutil.rmtree(root / SEGMENTS / entry.name, ignore_errors=True)
        raise
    return number


def delete(root: Path, manifest: Manifest, ids: Sequence[str], wait: bool | float = True) -> int:
    """Mark ``ids`` deleted in the newest generation (every id must be live) and commit."""
    with write_errors_name(root), writer(root, "remove", wait):
        current = Snapshot(root, manifest, gen.newest(root))
        refuse_damaged(current)
        found = locate_ids(current, ids)
        missing = [i for i, where in zip(ids, found) if where is None]
        if missing:
            raise UnknownIdError(f"no document with id {missing[0]!r} in {root}; nothing was removed")
        if len(ids) >= len(current):
            raise InputError(f"removing {len(ids)} ids would leave {root} empty; delete the folder instead")
        number = gen.numbers(root)[-1] + 1
        entries = list(current.generation.segments)
        for position in sorted({s for s, _ in found}):
            rows = [r for s, r in found if s == position]
            live = current.live[position]
            old = np.flatnonzero(~live) if live is not None else np.zeros(0, np.int64)
            entries[position] = deletes.write_deletes(root, entries[position], np.concatenate([old, rows]), number)
        committed = gen.publish(root, entries, current.generation.corpus_version + 1)
        _maintain(root, manifest)
    return committed


def compact(root: Path, manifest: Manifest, wait: bool | float = True) -> int:
    """Merge neighbouring segments into as few as ``StoreSettings.max_segment_rows`` allows (one, below it),
    without deleted rows, and commit; returns the generation."""
    with write_errors_name(root), writer(root, "compact", wait):
        current = Snapshot(root, manifest, gen.newest(root))
        refuse_damaged(current)
        return _merge_runs(root, current, compaction(current, manifest.store.max_segment_rows))


def locate_ids(snapshot: Snapshot, ids: Sequence[str]) -> list[tuple[int, int] | None]:
    """Where each id is live: ``(segment position, segment row)``, or None. Deleted copies do not count."""
    where: list[tuple[int, int] | None] = [None] * len(ids)
    for position, (segment, live) in enumerate(zip(snapshot.segments, snapshot.live)):
        for i, row in enumerate(segment.documents.find(list(ids)).tolist()):
            if row >= 0 and (live is None or live[row]) and where[i] is None:
                where[i] = (position, row)
    return where


def refuse_damaged(snapshot: Snapshot) -> None:
    """Writers build on the newest generation only if its files are whole (sizes against the records)."""
    found = problems(snapshot.root, snapshot.manifest, snapshot.number)
    if found:
        raise CorruptIndexError(f"{found[0]}; nothing was written (run `embedsearch check --index {snapshot.root}`)")


def refuse_present(snapshot: Snapshot, ids: Sequence[str]) -> None:
    clash = next((i for i, where in zip(ids, locate_ids(snapshot, ids)) if where is not None), None)
    if clash is not None:
        raise IdConflictError(f"id {clash!r} is already in {snapshot.root}; remove it first or give it another id")


def _maintain(root: Path, manifest: Manifest) -> None:
    """After a commit: the merges the tiered policy asks for, then removal of what no reader needs. The
    commit stands whatever happens here; a failure is a warning (``compact`` retries the merge)."""
    settings = manifest.store
    try:
        current = Snapshot(root, manifest, gen.newest(root))
        _merge_runs(root, current, plan(current, settings.merge))
        gen.collect(root, settings.grace_seconds)
    except Exception as exc:  # noqa: BLE001  (the commit is saved: nothing after it may turn it into a failure)
        reason = str(exc).splitlines()[0] if isinstance(exc, (OSError, EmbedsearchError)) else \
            f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        log.warning(f"warning: committed, but the automatic merge of {root} was deferred ({reason}); the next "
                    "commit tries again, and `embedsearch compact` runs it now")


def _merge_runs(root: Path, current: Snapshot, groups: list[list[int]]) -> int:
    """Merge each run of neighbouring positions and commit it on its own, then remove what it replaced
    (past the grace period): a crash loses one merge, and the disk holds one run twice at most. Each run
    is merged from the generation the previous one committed, so nothing it reads has been removed."""
    number, shift = current.number, 0
    for positions in groups:
        moved = [p - shift for p in positions]
        merged = merge(current, moved)
        entries: list[SegmentEntry] = list(current.generation.segments)
        entries[moved[0]:moved[0] + len(moved)] = [merged] if merged is not None else []
        shift += len(positions) - (merged is not None)
        number = gen.publish(root, entries, current.generation.corpus_version)
        gen.collect(root, current.manifest.store.grace_seconds)
        current = Snapshot(root, current.manifest, number)
    return number


def _named(root: Path, name: str) -> bool:
    found = gen.numbers(root)
    return bool(found) and any(e.name == name for e in gen.read(root, found[-1]).segments)
