"""What a facade reads and writes through: an index folder (one writer, numbered generations) or a cluster
folder (shards routed by id hash, numbered cuts). Both answer the same calls (the newest version, a
snapshot of one, append, delete, compact, problems), so ``Index`` is written once over either; a version is
a generation of an index and a cut of a cluster. ``screen`` (a checked add) runs on the newest snapshot,
for a cluster under its lock, so two adds of one abstract cannot both pass there."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np

from ..corpus import Document, check_unique
from ..corpus.kinds import FieldKinds
from ..jobs.runner import local_map
from ..errors import EmbedsearchError, InputError, UnknownIdError
from . import cluster
from . import generation as gen
from . import writer
from .check import expendable, problems
from .repair import Repair, repair
from .shard_marker import SHARD, mark, through_cluster
from .lock import writer as lock
from .manifest import Manifest
from .snapshot import Snapshot

Screen = Callable[[Snapshot, Sequence[Document], np.ndarray], np.ndarray]


class IndexFolder:
    """An index folder: each write commits its next generation."""

    kind = "index"

    def __init__(self, root: Path, manifest: Manifest):
        self.root, self.manifest = root, manifest

    def newest(self) -> int:
        return gen.newest(self.root)

    def open(self, number: int | None = None) -> Snapshot:
        return Snapshot(self.root, self.manifest, self.newest() if number is None else number)

    def append(self, documents: Sequence[Document], vectors: np.ndarray, wait: bool | float,
               screen: Screen | None = None) -> None:
        keep = np.ones(len(documents), dtype=bool) if screen is None else screen(self.open(), documents, vectors)
        if keep.any():
            writer.append(self.root, self.manifest, [d for d, k in zip(documents, keep) if k], vectors[keep], wait)

    def delete(self, ids: Sequence[str], wait: bool | float) -> None:
        writer.delete(self.root, self.manifest, ids, wait)

    def compact(self, wait: bool | float) -> None:
        writer.compact(self.root, self.manifest, wait)

    def problems(self, number: int, deep: bool) -> list[str]:
        return problems(self.root, self.manifest, number, deep)

    def expendable(self, number: int) -> list[str]:
        return expendable(self.root, number)

    def repair(self, wait: bool | float) -> Repair:
        return repair(self.root, self.manifest, wait)


class ClusterFolder:
    """A cluster folder: each write commits to the shards its ids route to, then publishes the next cut."""

    kind = "cluster"

    def __init__(self, root: Path, manifest: Manifest):
        self.root, self.manifest = root, manifest
        self.names = cluster.shard_names(root)

    @classmethod
    def split(cls, source: Snapshot, root: Path, shards: int) -> None:
        """Write the live documents of ``source`` (with their vectors: nothing is embedded again) as ``shards``
        ordinary indexes routed by id hash, with its settings and its trained IVF quantizer (so an approximate
        search over the shards ranks as over the index); one pass over the source per shard, holding one
        segment of documents at a time."""
        if shards < 1:
            raise InputError(f"a cluster needs at least one shard, got {shards}")
        if root.exists():
            raise InputError(f"{root} already exists; choose a new folder for the cluster")
        owners = np.asarray([cluster.owner(i, shards) for i in source.documents.ids], dtype=np.int64)
        names = [f"shard-{s:03d}" for s in range(shards)]
        empty = [n for s, n in enumerate(names) if not (owners == s).any()]
        if empty:
            raise InputError(f"{len(owners)} documents leave {empty[0]} empty; use fewer shards than that")
        manifest = source.manifest
        for s, name in enumerate(names):
            own = Manifest.new(manifest.model, vectors=manifest.vectors, lexical=manifest.lexical,
                               search=manifest.search, store=manifest.store, name=manifest.name)
            writer.create(root / cluster.SHARDS / name, own, int((owners == s).sum()),
                          writer.unique(_batches(source, owners == s, manifest.store.segment_rows)), local_map,
                          source)
            mark(root / cluster.SHARDS / name, root)
        cluster.create(root, names, [gen.newest(root / cluster.SHARDS / n) for n in names])

    def newest(self) -> int:
        return cluster.newest(self.root).number

    def open(self, number: int | None = None) -> Snapshot:
        return cluster.snapshot(self.root, number)

    def _writing(self) -> Snapshot:
        """The cluster as it is now, under a write's lock, each shard marked as one (``store.shard_marker``)."""
        current = self.open()
        for part in current.parts.values():
            if not (part.root / SHARD).is_file():
                mark(part.root, self.root)
        return current

    def _publish(self) -> None:
        cluster.publish(self.root, [gen.newest(self.root / cluster.SHARDS / n) for n in self.names])

    def append(self, documents: Sequence[Document], vectors: np.ndarray, wait: bool | float,
               screen: Screen | None = None) -> None:
        check_unique(documents)
        with lock(self.root, "add", wait), through_cluster():
            current = self._writing()
            owners = np.asarray([cluster.owner(d.id, len(self.names)) for d in documents], dtype=np.int64)
            for s, part in enumerate(current.parts.values()):
                writer.refuse_present(part, [d.id for d, o in zip(documents, owners) if o == s])
            writer.admit(FieldKinds(current.field_kinds), documents, "nothing was added")  # one contract for all
            keep = np.ones(len(documents), dtype=bool) if screen is None else screen(current, documents, vectors)
            for s, part in enumerate(current.parts.values()):
                mine = np.flatnonzero(keep & (owners == s))
                if len(mine):
                    writer.append(part.root, part.manifest, [documents[i] for i in mine], vectors[mine], wait)
            if keep.any():
                self._publish()

    def delete(self, ids: Sequence[str], wait: bool | float) -> None:
        with lock(self.root, "remove", wait), through_cluster():
            current = self._writing()
            owned = [[i for i in ids if cluster.owner(i, len(self.names)) == s] for s in range(len(self.names))]
            for (name, part), mine in zip(current.parts.items(), owned):
                unknown = [i for i in mine if i not in part.row_of]
                if unknown:  # before any shard is written: a remove is all or nothing
                    raise UnknownIdError(f"no document with id {unknown[0]!r} in {self.root}; nothing was removed")
                if mine and len(mine) >= len(part):
                    raise InputError(f"removing {len(mine)} ids would leave {name} of {self.root} empty; nothing "
                                     "was removed: split the corpus into fewer shards")
            for part, mine in zip(current.parts.values(), owned):
                if mine:
                    writer.delete(part.root, part.manifest, mine, wait)
            self._publish()

    def compact(self, wait: bool | float) -> None:
        """Each shard compacted; a new cut only where one of them changed."""
        with lock(self.root, "compact", wait), through_cluster():
            parts = self._writing().parts.values()
            if [writer.compact(p.root, p.manifest, wait) for p in parts] != [p.number for p in parts]:
                self._publish()

    def problems(self, number: int, deep: bool) -> list[str]:
        try:
            cut = cluster.read(self.root, number)
        except EmbedsearchError as exc:  # a damaged cut is one line of the report
            return [str(exc)]
        return [line for name, g in zip(self.names, cut.generations)
                for line in problems(self.root / cluster.SHARDS / name, self.manifest, g, deep)]

    def expendable(self, number: int) -> list[str]:
        try:
            cut = cluster.read(self.root, number)
        except EmbedsearchError:
            return []
        return [f"{name}: {line}" for name, g in zip(self.names, cut.generations)
                for line in expendable(self.root / cluster.SHARDS / name, g)]

    def repair(self, wait: bool | float) -> Repair:
        """Each shard repaired through the cluster, then a new cut where any of them committed."""
        with lock(self.root, "repair", wait), through_cluster():
            done = [repair(self.root / cluster.SHARDS / name, self.manifest, wait) for name in self.names]
            if any(r.generation for r in done):
                self._publish()
        return Repair(tuple(line for r in done for line in r.repaired), tuple(line for r in done for line in r.cannot),
                      self.newest() if any(r.generation for r in done) else None)


def open_folder(root: Path, manifest: Callable[[Path], Manifest]) -> IndexFolder | ClusterFolder:
    """The folder at ``root``, index or cluster, its manifest read by ``manifest`` (a cluster's: its first
    shard's, which every shard shares)."""
    if cluster.is_cluster(root):
        return ClusterFolder(root, manifest(root / cluster.SHARDS / cluster.shard_names(root)[0]))
    return IndexFolder(root, manifest(root))


def _batches(source: Snapshot, mine: np.ndarray, size: int) -> Iterator[tuple[list[Document], np.ndarray]]:
    """The rows of ``source`` where ``mine`` is true, as ``(documents, vectors)`` batches of at most ``size``."""
    documents, rows = [], []
    for row, doc in enumerate(source.documents):
        if mine[row]:
            documents.append(doc)
            rows.append(row)
            if len(rows) == size:
                yield documents, np.asarray(source.embeddings[rows], dtype=np.float32)
                documents, rows = [], []
    if rows:
        yield documents, np.asarray(source.embeddings[rows], dtype=np.float32)
