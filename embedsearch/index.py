"""``Index``: the facade over corpus, embedding, storage and search. Build it with a classmethod. It reads
one generation at a time (its snapshot), so results never mix two versions; ``refresh()`` moves to the
newest; ``add``, ``remove`` and ``compact`` commit a new one under the writer lock and move to it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from . import filters as flt
from . import lexical as lex
from . import store
from . import vectors as vec
from . import writer
from .corpus import Document, FieldMap, Problem, bundled_sources, iter_sources
from .distributed import job_map
from .embed import DEFAULT_MODEL, EmbedSettings, check_fingerprint
from .errors import InputError
from .manifest_check import check_manifest
from .search import Hit, Ranked, SearchSettings, check_query, rank, to_hits
from .store import generation as gen
from .store.snapshot import Snapshot
from .writer import StoreSettings, check_unique, embed_documents, export_query_encoder

if TYPE_CHECKING:
    from .dedup import DedupSettings, DuplicateReport
    from .distributed import RaySettings
    from .topics import TopicModel, TopicSettings

BUNDLED_NAME = "neurips2026"


class Index:
    """A searchable corpus on disk. Use ``Index.build``, ``Index.from_sources``, ``Index.load`` or ``Index.bundled``."""

    def __init__(self, path: Path, root: dict[str, Any], generation: int | None = None):
        self.path = Path(path)
        self.root = root
        self.snapshot = Snapshot(self.path, root, gen.newest(self.path) if generation is None else generation)
        self.skipped: list[Problem] = []

    @classmethod
    def build(cls, documents: Iterable[Document], path: str | Path, model: str = DEFAULT_MODEL,
              embed: EmbedSettings | None = None, vectors: vec.VectorSettings = vec.VectorSettings(),
              lexical: lex.LexicalSettings = lex.LexicalSettings(), search: SearchSettings = SearchSettings(),
              progress: bool = False, sources: Sequence[str] = (), ray: "RaySettings | None" = None,
              storage: StoreSettings = StoreSettings(), total: int | None = None) -> "Index":
        """Embed ``documents`` (through the cache; on a Ray cluster with ``ray``) segment by segment and write
        a new index at ``path``, replacing any index there. An iterator is read one segment at a time (give
        ``total``, the expected count, to choose the vector index); memory holds one segment, not the corpus."""
        from .embed import Embedder

        path = store.check_target(path, sources)
        if total is None:
            documents = list(documents)
            check_unique(documents)
            total = len(documents)
        embedder = Embedder(embed or EmbedSettings(model=model))
        batches = ((part, embed_documents(embedder, part, progress, "embedding", ray))
                   for part in writer.chunks(documents, storage.segment_rows))
        index = cls.from_batches(batches, path, embedder.manifest_entry(), total, vectors, lexical, search, sources,
                                 ray, storage)
        export_query_encoder(embedder)
        return index

    @classmethod
    def from_embeddings(cls, documents: Sequence[Document], embeddings: np.ndarray, path: str | Path,
                        model: dict[str, Any], vectors: vec.VectorSettings = vec.VectorSettings(),
                        **options: Any) -> "Index":
        """Write an index from vectors made elsewhere, as one segment; ``model`` is the manifest entry of the
        model that made them (``Embedder.manifest_entry()``), the options are ``from_batches``'s."""
        documents = list(documents)
        if embeddings.shape[0] != len(documents):
            raise InputError(f"{embeddings.shape[0]} vectors for {len(documents)} documents")
        return cls.from_batches([(documents, embeddings)], path, model, len(documents), vectors, **options)

    @classmethod
    def from_batches(cls, batches: Iterable[writer.Batch], path: str | Path, model: dict[str, Any], total: int,
                     vectors: vec.VectorSettings = vec.VectorSettings(),
                     lexical: lex.LexicalSettings = lex.LexicalSettings(), search: SearchSettings = SearchSettings(),
                     sources: Sequence[str] = (), ray: "RaySettings | None" = None,
                     storage: StoreSettings = StoreSettings()) -> "Index":
        """Write an index from ``(documents, vectors)`` batches made one at a time: each becomes a segment and
        is released before the next is read, so memory holds one batch, not the corpus. ``total`` (the corpus
        size) picks the vector index kind; with ``ray``, IVF shards are filled as Ray tasks."""
        manifest = store.new_manifest(model=model, sources=[str(s) for s in sources], lexical=asdict(lexical),
                                      search=asdict(search), store=asdict(storage))
        writer.create(Path(path), manifest, total, writer.unique(batches), vectors, job_map(ray))
        return cls.load(path)

    @classmethod
    def from_sources(cls, sources: Sequence[str | Path], path: str | Path,
                     fields: FieldMap = FieldMap(), skip_invalid: bool = False, **build: Any) -> "Index":
        """Read corpus files (seed text, JSONL, CSV, Parquet) and build; skipped records land in ``.skipped``.
        A first pass validates every record (a bad line fails before the model loads) and counts them; the
        second streams them into segments, so memory holds one segment of documents, not the corpus. With
        ``ray=``, workers read the files and write the segments (``distributed_build``)."""
        path = store.check_target(path, sources)
        skipped: list[Problem] = []
        if build.get("ray") is not None:
            from .distributed_build import from_sources

            skipped = from_sources([Path(s) for s in sources], path, fields, skip_invalid, **build)
            index = cls.load(path)
        else:
            total = sum(1 for _ in iter_sources(sources, fields, skip_invalid, []))
            index = cls.build(iter_sources(sources, fields, skip_invalid, skipped), path,
                              sources=[str(s) for s in sources], total=total, **build)
        index.skipped = skipped
        return index

    @classmethod
    def load(cls, path: str | Path, model: str | None = None, generation: int | None = None) -> "Index":
        """Open an index folder at its newest generation (or ``generation``); a symlink is followed once, so
        writes reach the real folder. With ``model``, fail unless the index was built with that model."""
        path = store.real_path(path)
        index = cls(path, check_manifest(path / store.MANIFEST, store.read_manifest(path)), generation)
        if model is not None:
            from .embed import load_model, model_fingerprint

            check_fingerprint(index.manifest["model"], model_fingerprint(load_model(model)), model, path)
        return index

    @classmethod
    def bundled(cls, path: str | Path | None = None, progress: bool = False) -> "Index":
        """The bundled NeurIPS 2026 corpus, built on first use."""
        path = Path(path) if path else store.default_home() / BUNDLED_NAME
        if (path / store.MANIFEST).exists():
            try:
                index = cls.load(path)
                if index.manifest.get("package_version") == store.package_version():
                    return index
            except store.IndexStoreError:
                pass  # an older or damaged copy of package data: rebuild it (embeddings come from the cache)
        return cls.from_sources(bundled_sources(), path, progress=progress)

    @property
    def generation(self) -> int:
        return self.snapshot.number

    def has_newer(self) -> bool:
        """Whether a newer generation than the one this ``Index`` reads has been committed."""
        return gen.numbers(self.path)[-1:] != [self.generation]

    def refresh(self) -> "Index":
        """Move to the newest generation (a no-op when this is it)."""
        if self.has_newer():
            self.__dict__.update(Index(self.path, self.root).__dict__ | {"skipped": self.skipped})
        return self

    @property
    def manifest(self) -> dict[str, Any]:
        return self.snapshot.manifest

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
    def model_name(self) -> str:
        return self.manifest["model"]["name"]

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Query vectors made exactly as this index's document vectors were."""
        return self.snapshot.encoder.encode([check_query(t) for t in texts])

    @property
    def search_settings(self) -> SearchSettings:
        return SearchSettings(**self.manifest.get("search", {}))

    def search(self, query: str, k: int = 10, mode: str | None = None,
               filters: Sequence[str | flt.Filter] = ()) -> list[Hit]:
        """The ``k`` abstracts that best match a free-text query (``mode``: hybrid, dense or lexical)."""
        return self.search_many([query], k, mode, filters)[0]

    def search_many(self, queries: Sequence[str], k: int = 10, mode: str | None = None,
                    filters: Sequence[str | flt.Filter] = ()) -> list[list[Hit]]:
        """Answer many queries with one batched encode; ``filters`` restrict by metadata (``year>=2024``)."""
        _check_k(k)
        settings = self.search_settings
        if mode is not None:
            settings = SearchSettings(**{**asdict(settings), "mode": mode})
        queries = [check_query(q) for q in queries]
        allowed = self.snapshot.allowed_rows([f if isinstance(f, flt.Filter) else flt.Filter.parse(f)
                                              for f in filters])
        return [self._hits(ranked) for ranked in rank(self.snapshot, queries, k, settings, allowed)]

    def similar(self, doc_id: str, k: int = 10) -> list[Hit]:
        """Papers related to a document of the index, itself excluded (``similar_to_text`` for new text)."""
        _check_k(k)
        row = self.documents.row_of.get(doc_id)
        if row is None:
            raise InputError(f"no document with id {doc_id!r} in {self.path}; for an abstract's text use "
                             "`similar_to_text` (CLI: `similar --text`), or check the id with `embedsearch search`")
        query = np.asarray(self.embeddings[[row]], dtype=np.float32)
        return self._dense_hits(self.snapshot.dense(query, k, exclude=[row])[0])

    def similar_to_text(self, text: str, k: int = 10) -> list[Hit]:
        """Papers related to a new abstract, embedded exactly as the corpus was (long ones in windows)."""
        _check_k(k)
        return self._dense_hits(self.snapshot.dense(self.encode([text]), k)[0])

    def _dense_hits(self, ranked: list[tuple[int, float]]) -> list[Hit]:
        return self._hits([Ranked(r, s, s, None) for r, s in ranked])

    def _hits(self, ranked: list[Ranked]) -> list[Hit]:
        return to_hits(ranked, self.documents.get([r.row for r in ranked]))

    def check(self, deep: bool = False) -> list[str]:
        """What is wrong with this generation on disk, one line each (empty when healthy); ``deep`` re-hashes
        every file against the checksums recorded when it was written."""
        from .store.check import problems

        return problems(self.path, self.root, self.generation, deep)

    def info(self) -> dict[str, Any]:
        """Documents, model, segments, generation, size on disk and times."""
        return {"path": str(self.path), **self.snapshot.summary(), "size_bytes": store.size_on_disk(self.path)}

    def topics(self, settings: "TopicSettings | None" = None, ray: "RaySettings | None" = None, level: int = 0,
               refit: bool = False, **overrides: Any) -> "TopicModel":
        """Topics of this index (UMAP + HDBSCAN), saved per corpus version and settings and reused; after adds
        the last fit is carried over with stable labels (``topics.extend``) unless ``refit``. With ``ray``,
        documents outside the fitted sample are assigned on the cluster. A missing ``level`` fails before
        anything is saved."""
        from .topics import TopicSettings, fit

        return fit(self.snapshot, replace(settings or TopicSettings(), **overrides), job_map(ray), level, refit)

    def duplicates(self, settings: "DedupSettings | None" = None, against: "Index | None" = None,
                   ray: "RaySettings | None" = None, of: Sequence[str] | None = None,
                   **overrides: Any) -> "DuplicateReport":
        """Near-duplicate groups inside this index, only those involving the documents ``of`` (just added ones:
        cost follows their number), or each abstract's matches in ``against`` (cross-set)."""
        from .dedup import DedupSettings, judge

        return judge(self.snapshot, replace(settings or DedupSettings(), **overrides), job_map(ray),
                     None if against is None else against.snapshot, of)

    def check_duplicates(self, documents: Sequence[Document], settings: "DedupSettings | None" = None,
                         **overrides: Any) -> "DuplicateReport":
        """Each new abstract's matches in this index, judged as ``duplicates(against=)`` judges them (a group
        keeps the indexed record); nothing is added. For a submission system checking one abstract at a time."""
        from .dedup import DedupSettings, find_duplicates_against
        from .dedup.pending import Pending

        documents = list(documents)
        check_unique(documents)
        pending = Pending(documents, self.encode([d.embed_text for d in documents]))
        return find_duplicates_against(pending, self.snapshot, replace(settings or DedupSettings(), **overrides))

    def add(self, documents: Iterable[Document], progress: bool = False, wait: bool | float = True,
            encoder: Any = None) -> "Index":
        """Append documents as a new segment, embedding only them (``writer.embed_new``, through ``encoder``
        when given and made by this index's model); ids live in the index are an error."""
        documents = list(documents)
        check_unique(documents)
        writer.refuse_present(self.refresh().snapshot, [d.id for d in documents])
        writer.refuse_contradicting(self.snapshot.numeric_fields(), documents)
        return self.add_embedded(documents, writer.embed_new(self.snapshot, documents, progress, encoder), wait)

    def add_embedded(self, documents: Sequence[Document], embeddings: np.ndarray, wait: bool | float = True) -> "Index":
        """Append documents whose vectors were made with this index's model (``add`` without embedding)."""
        documents = list(documents)
        check_unique(documents)
        if embeddings.shape != (len(documents), self.manifest["model"]["dimension"]):
            raise InputError(f"{embeddings.shape} vectors for {len(documents)} documents of dimension "
                             f"{self.manifest['model']['dimension']}")
        writer.append(self.path, self.root, documents, embeddings, wait)
        return self.refresh()

    def remove(self, ids: Iterable[str], wait: bool | float = True) -> "Index":
        """Mark documents deleted by id (nothing is rewritten or re-embedded); unknown ids are an error."""
        writer.delete(self.path, self.root, list(dict.fromkeys(ids)), wait)
        return self.refresh()

    def compact(self, wait: bool | float = True) -> "Index":
        """Merge every segment into one and drop deleted rows (merges also happen by themselves)."""
        writer.compact(self.path, self.root, wait)
        return self.refresh()


def _check_k(k: int) -> None:
    if not isinstance(k, int) or k < 1:
        raise InputError(f"k must be a positive whole number, got {k!r}")
