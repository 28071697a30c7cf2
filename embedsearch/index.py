"""``Index``: the facade over corpus, embedding, storage, search and analysis, written once for an index folder
or a cluster of shards. It reads one version (a generation, or a cluster's cut), so results never mix two;
``refresh()`` moves to the newest, and ``add``, ``remove`` and ``compact`` commit a new one and move to it."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from contextlib import suppress
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .ingest import local
from .ingest.checks import Checks
from .ingest.writes import Writes
from .ingest.manifest import load_manifest, new_manifest
from .corpus import Document, FieldMap, Problem, bundled_sources, check_unique
from .embedding.embed import check_fingerprint
from .embedding.settings import DEFAULT_MODEL, EmbedSettings, ModelEntry
from .jobs.on_ray import job_map
from .errors import IndexStoreError, UnknownIdError
from .retrieval import filters as flt
from .recommend.facade import Recommends
from .retrieval.evidence import explain
from .retrieval.find import Finds
from .retrieval.parts import Fanout, Parts
from .retrieval.answer import Answer, check_query
from .retrieval.settings import Mode, SearchSettings
from .store.batches import Batch
from .store.files import MANIFEST, check_target, default_home, real_path, size_on_disk
from .store.folders import ClusterFolder, IndexFolder, open_folder
from .store.manifest import Manifest
from .store.snapshot import Snapshot
from .store.settings import LexicalSettings, StoreSettings, VectorSettings
from .store.sources import recorded
from .version import __version__

if TYPE_CHECKING:
    from .dedup import DedupSettings, DuplicateReport
    from .jobs.settings import RaySettings
    from .topics import TopicModel, TopicSettings

BUNDLED_NAME = "neurips2026"
PartsOf = Callable[[Snapshot], Parts]  # where a version's searches are answered: a served cluster's shards


class Index(Writes, Checks, Finds, Recommends):
    """A searchable corpus on disk, one index or a cluster of shards. Use ``Index.build``, ``Index.from_sources``,
    ``Index.load``, ``Index.bundled`` or ``split``."""

    def __init__(self, folder: IndexFolder | ClusterFolder, generation: int | None = None, snapshot=None,
                 parts: PartsOf | None = None):
        self.path, self.folder = folder.root, folder
        self.snapshot = snapshot if snapshot is not None else folder.open(generation)
        self.parts = parts
        self.skipped: list[Problem] = []

    @classmethod
    def build(cls, documents: Iterable[Document], path: str | Path, model: str = DEFAULT_MODEL,
              embed: EmbedSettings | None = None, vectors: VectorSettings = VectorSettings(),
              lexical: LexicalSettings = LexicalSettings(), search: SearchSettings = SearchSettings(),
              progress: bool = False, sources: Sequence[str] = (), ray: RaySettings | None = None,
              storage: StoreSettings = StoreSettings(), total: int | None = None, name: str = "") -> Index:
        """Embed ``documents`` (through the cache; on a Ray cluster with ``ray``) segment by segment and write
        a new index at ``path``, replacing any index there. An iterator is read one segment at a time (give
        ``total``, the expected count, to choose the vector index); memory holds one segment, not the corpus."""
        path = check_target(path, sources)
        local.build(documents, path, model, embed, progress, ray, storage, total, vectors=vectors, lexical=lexical,
                    search=search, sources=sources, name=name)
        return cls.load(path)

    @classmethod
    def from_embeddings(cls, documents: Sequence[Document], embeddings: np.ndarray, path: str | Path,
                        model: ModelEntry, vectors: VectorSettings = VectorSettings(),
                        **options: Any) -> Index:
        """Write an index from vectors made elsewhere, as one segment (``model``: ``Embedder.manifest_entry()``,
        or another index's ``manifest.model``)."""
        documents = list(documents)
        return cls.from_batches([(documents, embeddings)], path, model, len(documents), vectors, **options)

    @classmethod
    def from_batches(cls, batches: Iterable[Batch], path: str | Path, model: ModelEntry, total: int,
                     vectors: VectorSettings = VectorSettings(),
                     lexical: LexicalSettings = LexicalSettings(), search: SearchSettings = SearchSettings(),
                     sources: Sequence[str] = (), ray: RaySettings | None = None,
                     storage: StoreSettings = StoreSettings(), name: str = "", share: Index | None = None) -> Index:
        """Write an index from ``(documents, vectors)`` batches, each a segment, so memory holds one batch. ``total``
        (the corpus size) picks the vector index kind (``share``: that index's kind and quantizer, for a shard
        cut from it); with ``ray``, IVF shards are filled as Ray tasks."""
        manifest = new_manifest(model, vectors, lexical, search, storage, sources, name)
        local.write_batches(batches, Path(path), manifest, total, ray, None if share is None else share.snapshot)
        return cls.load(path)

    @classmethod
    def from_sources(cls, sources: Sequence[str | Path], path: str | Path,
                     fields: FieldMap = FieldMap(), skip_invalid: bool = False, **build: Any) -> Index:
        """Read corpus files (seed text, JSONL, CSV, Parquet) and build; skipped records land in ``.skipped``
        (``build.local.from_sources``: a bad line fails before the model loads; with ``ray=``, workers read
        the files and write the segments)."""
        path = check_target(path, sources)
        skipped = local.from_sources(sources, path, fields, skip_invalid, **build)
        index = cls.load(path)
        index.skipped = skipped
        return index

    @classmethod
    def load(cls, path: str | Path, model: str | None = None, generation: int | None = None,
             parts: PartsOf | None = None) -> Index:
        """Open an index folder at its newest generation (or ``generation``); a symlink is followed once, so
        writes reach the real folder. With ``model``, fail unless the index was built with that model. With
        ``parts`` (a cluster's shards served on Ray Serve: ``serve.cluster``), searches are answered by them."""
        index = cls(open_folder(real_path(path), load_manifest), generation, parts=parts)
        if model is not None:
            from .embedding.embed import load_model, model_fingerprint
            from .embedding.precision import vector_fingerprint

            entry = index.manifest.model
            made = vector_fingerprint(model_fingerprint(load_model(model)), entry.settings.precision)
            check_fingerprint(entry, made, model, path)
        return index

    @classmethod
    def bundled(cls, path: str | Path | None = None, progress: bool = False) -> Index:
        """The bundled NeurIPS 2026 corpus, built on first use."""
        path = Path(path) if path else default_home() / BUNDLED_NAME
        if (path / MANIFEST).exists():
            with suppress(IndexStoreError):  # an older or damaged copy of package data is rebuilt (from the cache)
                if (index := cls.load(path)).manifest.package_version == __version__:
                    return index
        return cls.from_sources(bundled_sources(), path, progress=progress)

    def split(self, path: str | Path, shards: int) -> Index:
        """Write this index's live documents (with their vectors: nothing is embedded again) as a cluster of
        ``shards`` ordinary indexes routed by id hash, and open it: it answers as this index does."""
        ClusterFolder.split(self.snapshot, Path(path), shards)
        return Index.load(path)

    @property
    def shards(self) -> list[Index]:
        """A cluster's shards, each an ordinary index read at the generation this cut names (none for one index)."""
        return [Index(IndexFolder(p.root, p.manifest), snapshot=p) for p in self.snapshot.parts.values()]

    @property
    def generation(self) -> int:
        """The version read: a generation of an index, a cut of a cluster."""
        return self.snapshot.number

    def has_newer(self) -> bool:
        """Whether a newer version than the one this ``Index`` reads has been committed."""
        return self.folder.newest() != self.generation

    def refresh(self) -> Index:
        """Move to the newest version (a no-op when this is it)."""
        if self.has_newer():
            self.snapshot = self.folder.open()
        return self

    @property
    def manifest(self) -> Manifest:
        """What the index is: its model, settings and sources (``info()`` adds the version read, as JSON)."""
        return self.snapshot.manifest

    @property
    def sources(self) -> list[str]:
        """Every file this index's content came from, resolved: the build's and each ``add``'s."""
        return [*(self.manifest.source_paths or map(os.path.realpath, self.manifest.sources)), *recorded(self.path)]

    @property
    def documents(self):
        return self.snapshot.documents

    @property
    def embeddings(self):
        return self.snapshot.embeddings

    def __len__(self) -> int:
        return len(self.snapshot)

    def __repr__(self) -> str:
        return f"Index({str(self.path)!r}, documents={len(self)}, model={self.model_name!r})"

    @property
    def name(self) -> str:
        """What a reader calls this corpus: the name given at build (seed files: their header), else the folder."""
        return self.snapshot.manifest.name or self.path.name

    @property
    def model_name(self) -> str:
        return self.snapshot.manifest.model.name

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Query vectors made exactly as this index's document vectors were."""
        return self.snapshot.encoder.encode([check_query(t) for t in texts])

    @property
    def search_settings(self) -> SearchSettings:
        return SearchSettings(**self.snapshot.manifest.search)

    def search(self, query: str, k: int = 10, mode: Mode | None = None,
               filters: Sequence[str | flt.Filter] = ()) -> Answer:
        """The ``k`` abstracts that best match a free-text query (``mode``: hybrid, dense or lexical)."""
        return self.search_many([query], k, mode, filters)[0]

    def search_many(self, queries: Sequence[str], k: int = 10, mode: Mode | None = None,
                    filters: Sequence[str | flt.Filter] = ()) -> list[Answer]:
        """Answer many queries with one batched encode; ``filters`` restrict by metadata (``year>=2024``)."""
        return self.reader.search_many([check_query(q) for q in queries], k, mode, filters)

    @property
    def snapshot(self) -> Snapshot:
        """The version read; replacing it drops the reader made for the last one (nothing keeps it alive)."""
        return self._snapshot

    @snapshot.setter
    def snapshot(self, snapshot: Snapshot) -> None:
        self._snapshot, self._reader = snapshot, None

    @property
    def reader(self) -> Fanout:
        """The searches of the version read (``retrieval.parts``): this process reading every part, or the
        ``parts`` this index was opened with (a served cluster's shards). Made once per version."""
        if self._reader is None:
            self._reader = Fanout(self.snapshot, self.search_settings,
                                  None if self.parts is None else self.parts(self.snapshot))
        return self._reader

    def document(self, doc_id: str) -> Document:
        """The document ``doc_id``."""
        row = self.documents.row_of.get(doc_id)
        if row is None:
            raise UnknownIdError(f"no document with id {doc_id[:200]!r} in {self.path}")
        return self.documents.get([row])[0]

    def similar(self, doc_id: str, k: int = 10) -> Answer:
        """Papers related to a document of the index, itself excluded (``similar_to_text`` for new text), each
        with its ``evidence`` (the sentence closest to the paper)."""
        return explain(self.snapshot, self.reader.similar(doc_id, k), seeds=[self.document(doc_id).embed_text])

    def similar_to_text(self, text: str, k: int = 10) -> Answer:
        """Papers related to a new abstract, embedded exactly as the corpus was (long ones in windows)."""
        return explain(self.snapshot, self.reader.similar_to_text(check_query(text), k), seeds=[text])

    def info(self) -> dict[str, Any]:
        """Documents, model, segments, generation, size on disk and times."""
        return {"path": str(self.path), "name": self.name, **self.snapshot.summary(),
                "size_bytes": size_on_disk(self.path)}

    def topics(self, settings: TopicSettings | None = None, ray: RaySettings | None = None, level: int = 0,
               refit: bool = False, **overrides: Any) -> TopicModel:
        """Topics of this index (UMAP + HDBSCAN), saved per corpus version and settings and reused; after adds
        the last fit is carried over with stable labels (``topics.extend``) unless ``refit``."""
        from .topics import TopicSettings, fit

        return fit(self.snapshot, replace(settings or TopicSettings(), **overrides), job_map(ray), level, refit)

    def duplicates(self, settings: DedupSettings | None = None, against: Index | None = None,
                   ray: RaySettings | None = None, of: Sequence[str] | None = None,
                   **overrides: Any) -> DuplicateReport:
        """Near-duplicate groups inside this index (only those involving the ids ``of``: cost follows their
        number), or each abstract's matches in ``against`` (cross-set)."""
        from .dedup import DedupSettings, judge

        return judge(self.snapshot, replace(settings or DedupSettings(), **overrides), job_map(ray),
                     None if against is None else against.snapshot, of)

    def check_duplicates(self, documents: Sequence[Document], settings: DedupSettings | None = None,
                         **overrides: Any) -> DuplicateReport:
        """Each new abstract's matches in this index, judged as ``duplicates(against=)`` judges them (a group
        keeps the indexed record); nothing is added. For a submission system checking one abstract at a time."""
        from .dedup import DedupSettings, screen

        documents = list(documents)
        check_unique(documents)
        embeddings = self.encode([d.embed_text for d in documents])
        return screen(documents, embeddings, self.snapshot, replace(settings or DedupSettings(), **overrides), "add")[0]
