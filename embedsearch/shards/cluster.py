"""``Cluster``: an index split into shards by id hash, each an ordinary embedsearch index, searched as one.

A search is two rounds over the shards, as Elasticsearch's ``dfs_query_then_fetch``: each shard's share of
the BM25 statistics (added up, so every shard scores with the whole corpus's), then each shard's candidates,
merged (``merge``) into the ranking one index over all the documents gives; then the documents of the winners.
Shards here are opened in this process; ``serve.cluster`` runs each as a Ray Serve deployment instead."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import reduce
from pathlib import Path
from typing import Any

import numpy as np

from ..corpus import Document, check_unique
from ..corpus.kinds import FieldKinds, combine
from ..dedup import DedupSettings, DuplicateReport
from ..engine.jobs import JobRunner, local_map
from ..errors import InputError, ModelMismatchError, UnknownIdError
from ..index import Index
from ..retrieval.search import Hit, check_k
from ..store import writer
from ..store.guard import SHARD, mark, through_cluster
from ..store.lock import writer as lock
from ..topics import TopicModel, TopicSettings
from . import cut as cuts
from .merge import depth, hits_of, merge, request, without
from .shard import Shard


@dataclass(frozen=True)
class ShardedAnswer:
    """A merged answer: the hits, the cut it was read at, and the shards that did not answer (an answer
    with ``missing`` is partial: it lacks whatever those shards hold)."""

    hits: list[Hit]
    cut: int
    missing: list[str] = field(default_factory=list)

    @property
    def partial(self) -> bool:
        return bool(self.missing)


class Cluster:
    """Shards of one corpus at one cut. Use ``Cluster.split`` or ``Cluster.open``."""

    def __init__(self, root: Path, cut: cuts.Cut, shards: list[Shard]):
        self.root, self.cut, self.shards = root, cut, shards
        prints = {s.index.snapshot.manifest.model.fingerprint for s in shards}
        if len(prints) != 1:
            raise ModelMismatchError(f"{root}: its shards were built with different models; rebuild the cluster")

    @classmethod
    def open(cls, path: str | Path, cut: int | None = None) -> Cluster:
        """Cut number ``cut`` (the newest by default) of the cluster at ``path``, every shard at the generation
        it names."""
        root = Path(path)
        names = cuts.shard_names(root)
        cut = cuts.newest(root) if cut is None else cuts.read(root, cut)
        return cls(root, cut, [Shard(root / cuts.SHARDS / n, g) for n, g in zip(names, cut.generations)])

    @classmethod
    def split(cls, index: Index, path: str | Path, shards: int) -> Cluster:
        """Write the live documents of ``index`` (with their vectors: nothing is embedded again) as ``shards``
        ordinary indexes routed by id hash, with the index's settings and its trained IVF quantizer (so an
        approximate search over the shards ranks as over the index); one pass over the source per shard,
        holding one segment of documents at a time."""
        if shards < 1:
            raise InputError(f"a cluster needs at least one shard, got {shards}")
        root = Path(path)
        if root.exists():
            raise InputError(f"{root} already exists; choose a new folder for the cluster")
        manifest = index.snapshot.manifest
        owners = np.asarray([cuts.owner(i, shards) for i in index.documents.ids], dtype=np.int64)
        names = [f"shard-{s:03d}" for s in range(shards)]
        empty = [n for s, n in enumerate(names) if not (owners == s).any()]
        if empty:
            raise InputError(f"{len(owners)} documents leave {empty[0]} empty; use fewer shards than that")
        for s, name in enumerate(names):
            Index.from_batches(_batches(index, owners == s, manifest.store.segment_rows), root / cuts.SHARDS / name,
                               manifest.model.to_json(), int((owners == s).sum()), manifest.vectors, manifest.lexical,
                               index.search_settings, storage=manifest.store, name=manifest.name, share=index)
        for name in names:
            mark(root / cuts.SHARDS / name, root)
        cuts.create(root, names, [Index.load(root / cuts.SHARDS / n).generation for n in names])
        return cls.open(root)

    def __len__(self) -> int:
        return sum(len(s.index) for s in self.shards)

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.shards]

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return self.shards[0].index.encode(texts)

    def search(self, query: str, k: int = 10, mode: str | None = None, filters: Sequence[str] = ()) -> ShardedAnswer:
        """The ``k`` best hits over every shard, equal to one index's over the same documents."""
        settings = self.shards[0].settings
        query, mode = request(query, k, mode, settings)
        vector = self.encode([query])[0]
        corpus = None if mode == "dense" else reduce(lambda a, b: a + b, (s.stats(query) for s in self.shards))
        kinds = combine([s.index.snapshot.field_kinds for s in self.shards]) if filters else None
        offered = [s.candidates(vector, query, corpus, depth(k, mode, settings), mode, filters, kinds)
                   for s in self.shards]
        return ShardedAnswer(hits_of(merge(offered, k, mode, settings), [s.documents for s in self.shards],
                                     settings.bands()), self.cut.number)

    def similar(self, doc_id: str, k: int = 10) -> ShardedAnswer:
        """Papers related to a document of the cluster, itself excluded, as ``Index.similar`` over one index."""
        check_k(k)
        owner = cuts.owner(doc_id, len(self.shards))
        found = self.shards[owner].vector(doc_id)
        if found is None:
            raise UnknownIdError(f"no document with id {doc_id!r} in {self.root}; for an abstract's text use "
                                 "`similar_to_text`")
        return self._nearest(found[1], k, (owner, found[0]))

    def similar_to_text(self, text: str, k: int = 10) -> ShardedAnswer:
        """Papers related to a new abstract, embedded as the shards' documents were."""
        check_k(k)
        return self._nearest(self.encode([text])[0], k, None)

    def _nearest(self, vector: np.ndarray, k: int, skip: tuple[int, int] | None) -> ShardedAnswer:
        settings = self.shards[0].settings
        offered = [s.candidates(vector, "", None, k + 1, "dense") for s in self.shards]
        placed = merge(without(offered, skip), k, "dense", settings)
        return ShardedAnswer(hits_of(placed, [s.documents for s in self.shards], settings.bands(abstracts=True)),
                             self.cut.number)

    def document(self, doc_id: str) -> Document:
        """The document ``doc_id``, read from the shard its id routes to."""
        shard = self.shards[cuts.owner(doc_id, len(self.shards))]
        row = shard.index.documents.row_of.get(doc_id)
        if row is None:
            raise UnknownIdError(f"no document with id {doc_id!r} in {self.root}")
        return shard.documents([row])[0]

    def topics(self, settings: TopicSettings | None = None, map_jobs: JobRunner = local_map, refit: bool = False,
               **overrides: Any) -> TopicModel:
        """Topics over every shard: fitted on a sample drawn across the shards, the rest assigned shard by
        shard (``shards.topics``); saved per cut and settings, and carried over to later cuts (new papers
        join their nearest papers' topics) until too much changed or ``refit``."""
        from .topics import fit

        return fit(self.root, self.cut.number, [s.index.snapshot for s in self.shards], self.encode,
                   replace(settings or TopicSettings(), **overrides), map_jobs, refit)

    def duplicates(self, settings: DedupSettings | None = None, of: Sequence[str] | None = None,
                   map_jobs: JobRunner = local_map, **overrides: Any) -> DuplicateReport:
        """Near-duplicate groups over every shard (only those involving the ids ``of``), a pair split over two
        shards found as within one (``shards.duplicates``; the neighbour search as jobs through ``map_jobs``)."""
        from .duplicates import find

        return find([s.index.snapshot for s in self.shards], replace(settings or DedupSettings(), **overrides), of,
                    map_jobs)

    def check_duplicates(self, documents: Sequence[Document], settings: DedupSettings | None = None,
                         **overrides: Any) -> DuplicateReport:
        """Each new abstract's matches over every shard, as ``Index.check_duplicates`` judges them; nothing
        is added."""
        from ..dedup.pending import Pending
        from .duplicates import against

        documents = list(documents)
        check_unique(documents)
        new = Pending(documents, self.encode([d.embed_text for d in documents]))
        return against(new, [s.index.snapshot for s in self.shards], replace(settings or DedupSettings(), **overrides))

    def add(self, documents: Iterable[Document], wait: bool | float = True) -> Cluster:
        """Embed and add ``documents``, each to the shard its id routes to, then publish the next cut."""
        self._add(list(documents), None, "add", wait)
        return self

    def add_checked(self, documents: Iterable[Document], on_duplicate: str = "refuse",
                    settings: DedupSettings | None = None, wait: bool | float = True) -> DuplicateReport:
        """``add``, each new abstract first judged against every shard (as ``check_duplicates``) under the
        same lock as the write, so two adds of one abstract cannot both pass; embedded once. A duplicate
        refuses the whole add, is skipped, or is added anyway (``on_duplicate``, as ``Index.add_checked``)."""
        return self._add(list(documents), settings or DedupSettings(), on_duplicate, wait)

    def add_embedded(self, documents: Sequence[Document], embeddings: np.ndarray, wait: bool | float = True) -> Cluster:
        """``add`` of documents whose vectors were made with the cluster's model (``Index.add_embedded``)."""
        documents, embeddings = list(documents), np.asarray(embeddings, dtype=np.float32)
        if embeddings.ndim != 2 or len(embeddings) != len(documents):
            raise InputError(f"{len(documents)} documents need {len(documents)} vectors, got an array of shape "
                             f"{embeddings.shape}; nothing was added")
        self._add(documents, None, "add", wait, embeddings)
        return self

    def _add(self, documents: list[Document], settings: DedupSettings | None, on_duplicate: str,
             wait: bool | float, vectors: np.ndarray | None = None) -> DuplicateReport | None:
        from ..dedup import decide
        from ..dedup.pending import Pending
        from .duplicates import against

        check_unique(documents)
        with lock(self.root, "add", wait), through_cluster():
            current = self._writing()
            owners = np.asarray([cuts.owner(d.id, len(current.shards)) for d in documents], dtype=np.int64)
            for s, shard in enumerate(current.shards):
                writer.refuse_present(shard.index.refresh().snapshot, [d.id for d, o in zip(documents, owners) if o == s])
            kinds = combine([shard.index.refresh().snapshot.field_kinds for shard in current.shards])
            writer.admit(FieldKinds(kinds), documents, "nothing was added")  # one field contract for every shard
            if vectors is None:
                vectors = writer.embed_new(current.shards[0].index.snapshot, documents, False)
            report, keep = None, np.ones(len(documents), dtype=bool)
            if settings is not None:
                report = against(Pending(documents, vectors), [s.index.snapshot for s in current.shards], settings)
                keep = decide(report, [d.id for d in documents], on_duplicate)
            for s, shard in enumerate(current.shards):
                mine = np.flatnonzero(keep & (owners == s))
                if len(mine):
                    shard.index.add_embedded([documents[i] for i in mine], vectors[mine], wait=wait)
            if keep.any():
                self._publish(current)
            return report

    def remove(self, ids: Iterable[str], wait: bool | float = True) -> Cluster:
        """Mark ``ids`` deleted in their shards, then publish the next cut."""
        ids = list(dict.fromkeys(ids))
        with lock(self.root, "remove", wait), through_cluster():
            current = self._writing()
            owned = [[i for i in ids if cuts.owner(i, len(current.shards)) == s] for s in range(len(current.shards))]
            for shard, mine in zip(current.shards, owned):
                unknown = [i for i in mine if i not in shard.index.refresh().documents.row_of]
                if unknown:  # before any shard is written: a remove is all or nothing
                    raise UnknownIdError(f"no document with id {unknown[0]!r} in {self.root}; nothing was removed")
            for shard, mine in zip(current.shards, owned):
                if mine:
                    shard.index.remove(mine, wait=wait)
            return self._publish(current)

    def compact(self, wait: bool | float = True) -> Cluster:
        """Merge each shard's segments and drop its deleted rows (``Index.compact``), then publish the next cut."""
        with lock(self.root, "compact", wait), through_cluster():
            current = self._writing()
            for shard in current.shards:
                shard.index.refresh().compact(wait=wait)
            return self._publish(current)

    def _writing(self) -> Cluster:
        """The cluster as it is now, under a write's lock, each shard marked as one (``store.guard``): a
        cluster split before shards were marked is guarded from its first write on."""
        current = Cluster.open(self.root)
        for shard in current.shards:
            if not (shard.index.path / SHARD).is_file():
                mark(shard.index.path, self.root)
        return current

    def _publish(self, current: Cluster) -> Cluster:
        cuts.publish(self.root, [Index.load(s.index.path).generation for s in current.shards])
        opened = Cluster.open(self.root)
        self.__dict__.update(opened.__dict__)
        return self


def _batches(index: Index, mine: np.ndarray, size: int) -> Iterator[tuple[list[Document], np.ndarray]]:
    """The rows of ``index`` where ``mine`` is true, as ``(documents, vectors)`` batches of at most ``size``."""
    documents, rows = [], []
    for row, doc in enumerate(index.documents):
        if mine[row]:
            documents.append(doc)
            rows.append(row)
            if len(rows) == size:
                yield documents, np.asarray(index.embeddings[rows], dtype=np.float32)
                documents, rows = [], []
    if rows:
        yield documents, np.asarray(index.embeddings[rows], dtype=np.float32)
