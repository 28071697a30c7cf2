"""``Index``: the facade over corpus, embedding, storage and search. Build it with a classmethod."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from . import filters as flt
from . import lexical as lex
from . import store
from . import vectors as vec
from .corpus import Document, FieldMap, Problem, bundled_sources, read_sources
from .distributed import job_map
from .docstore import DocumentStore
from .embed import DEFAULT_MODEL, EmbedSettings, check_fingerprint
from .errors import CorruptIndexError, InputError, ModelMismatchError
from .search import Hit, Ranked, SearchSettings, check_query, dense_rows, rank, to_hits
from .writer import check_unique, embed_documents, export_query_encoder, refill, write_version

if TYPE_CHECKING:
    from .dedup import DedupSettings, DuplicateReport
    from .distributed import RaySettings
    from .topics import TopicModel, TopicSettings

BUNDLED_NAME = "neurips2026"


class Index:
    """A searchable corpus on disk. Use ``Index.build``, ``Index.from_sources``, ``Index.load`` or ``Index.bundled``."""

    def __init__(self, path: Path, manifest: dict[str, Any]):
        self.path = Path(path)
        self.manifest = manifest
        self.documents = DocumentStore(self.path)
        self.skipped: list[Problem] = []
        if len(self.documents) != manifest["documents"]:
            raise CorruptIndexError(f"{self.path}: manifest says {manifest['documents']} documents, "
                                        f"found {len(self.documents)}; rebuild the index")

    # construction -------------------------------------------------------------------------------
    @classmethod
    def build(cls, documents: Sequence[Document], path: str | Path, model: str = DEFAULT_MODEL,
              embed: EmbedSettings | None = None, vectors: vec.VectorSettings = vec.VectorSettings(),
              lexical: lex.LexicalSettings = lex.LexicalSettings(), search: SearchSettings = SearchSettings(),
              progress: bool = False, sources: Sequence[str] = (), ray: "RaySettings | None" = None) -> "Index":
        """Embed ``documents`` (through the cache; on a Ray cluster with ``ray``) and write a new index at
        ``path``, replacing any there."""
        from .embed import Embedder

        path = store.check_target(path, sources)
        documents = list(documents)
        check_unique(documents)
        embed = embed or EmbedSettings(model=model)
        embedder = Embedder(embed)
        matrix = embed_documents(embedder, documents, progress, "embedding", ray)
        index = cls.from_embeddings(documents, matrix, path, embedder.manifest_entry(), vectors, lexical, search,
                                    sources, ray)
        export_query_encoder(embedder)
        return index

    @classmethod
    def from_embeddings(cls, documents: Sequence[Document], embeddings: np.ndarray, path: str | Path,
                        model: dict[str, Any], vectors: vec.VectorSettings = vec.VectorSettings(),
                        lexical: lex.LexicalSettings = lex.LexicalSettings(),
                        search: SearchSettings = SearchSettings(), sources: Sequence[str] = (),
                        ray: "RaySettings | None" = None) -> "Index":
        """Write an index from vectors computed elsewhere (a distributed job, another cache).

        ``model`` is the manifest entry of the model that made them (``Embedder.manifest_entry()``);
        with ``ray``, the shards of a large (IVF) index are filled as Ray tasks.
        """
        documents = list(documents)
        check_unique(documents)
        if embeddings.shape[0] != len(documents):
            raise InputError(f"{embeddings.shape[0]} vectors for {len(documents)} documents")
        kind = vectors.choose(len(documents))
        manifest = store.new_manifest(
            documents=len(documents), model=model, sources=[str(s) for s in sources],
            index={"type": kind, "ondisk": kind == "ivfpq", "settings": asdict(vectors)}, lexical=asdict(lexical),
            search=asdict(search))
        options = {"map_shards": job_map(ray)} if kind == "ivfpq" else {}
        write_version(Path(path), documents, embeddings, lambda file: vec.save(file, embeddings, vectors, **options),
                      manifest)
        return cls.load(path)

    @classmethod
    def from_sources(cls, sources: Sequence[str | Path], path: str | Path,
                     fields: FieldMap = FieldMap(), skip_invalid: bool = False, **build: Any) -> "Index":
        """Read corpus files (seed text, JSONL, CSV, Parquet) and build; skipped records land in ``.skipped``."""
        path = store.check_target(path, sources)
        result = read_sources(sources, fields, skip_invalid)
        index = cls.build(result.documents, path, sources=[str(s) for s in sources], **build)
        index.skipped = result.skipped
        return index

    @classmethod
    def load(cls, path: str | Path, model: str | None = None) -> "Index":
        """Open an index folder (a symlink is followed once: writes reach the real folder); with ``model``,
        fail unless the index was built with that model."""
        path = store.real_path(path)
        manifest = store.read_manifest(path)
        index = cls(path, manifest)
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

    # queries ------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.documents)

    def __repr__(self) -> str:
        return f"Index({str(self.path)!r}, documents={len(self)}, model={self.model_name!r})"

    @property
    def model_name(self) -> str:
        return self.manifest["model"]["name"]

    @cached_property
    def faiss_index(self):
        return store.load_vectors(self.path, len(self))

    @cached_property
    def embeddings(self) -> np.ndarray:
        return store.load_embeddings(self.path, len(self), self.manifest["model"]["dimension"])

    @cached_property
    def encoder(self):
        from .query_encoder import query_encoder

        entry = self.manifest["model"]
        settings = EmbedSettings(**entry["settings"])
        return query_encoder(entry["name"], entry["fingerprint"], settings.max_windows, settings.tail_weight)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Query vectors made exactly as this index's document vectors were."""
        return self.encoder.encode([check_query(t) for t in texts])

    @property
    def search_settings(self) -> SearchSettings:
        return SearchSettings(**self.manifest.get("search", {}))

    @cached_property
    def lexical(self) -> lex.LexicalIndex:
        return lex.LexicalIndex(self.path)

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
        allowed = flt.allowed_rows(self.path, [f if isinstance(f, flt.Filter) else flt.Filter.parse(f)
                                               for f in filters])
        return [self._hits(ranked) for ranked in rank(self, queries, k, settings, allowed)]

    def similar(self, target: str, k: int = 10) -> list[Hit]:
        """Papers related to a document of the index (by id, itself excluded) or to a new abstract's text."""
        _check_k(k)
        row = self.documents.row_of.get(target)
        if row is None and len(target.split()) < 3:
            raise InputError(f"no document with id {target!r} in {self.path}; pass an abstract's text to "
                             "compare new text, or check the id with `embedsearch search`")
        if row is None:
            return self.similar_to_text(target, k)
        query = np.asarray(self.embeddings[row:row + 1])
        return self._dense_hits(dense_rows(self.faiss_index, self.embeddings, query, k, exclude=[row])[0])

    def similar_to_text(self, text: str, k: int = 10) -> list[Hit]:
        """Papers related to a new abstract, embedded exactly as the corpus was (long ones in windows)."""
        _check_k(k)
        return self._dense_hits(dense_rows(self.faiss_index, self.embeddings, self.encode([text]), k)[0])

    def _dense_hits(self, ranked: list[tuple[int, float]]) -> list[Hit]:
        return self._hits([Ranked(r, s, s, None) for r, s in ranked])

    def _hits(self, ranked: list[Ranked]) -> list[Hit]:
        return to_hits(ranked, self.documents.get([r.row for r in ranked]))

    def check(self, deep: bool = False) -> list[str]:
        """What is wrong with this index on disk, one line each (empty when healthy); ``deep`` re-hashes
        every file against the checksums in the manifest."""
        from .check import problems

        return problems(self.path, self.manifest, deep)

    def info(self) -> dict[str, Any]:
        m = self.manifest
        return {"path": str(self.path), "documents": len(self), "model": m["model"]["name"],
                "dimension": m["model"]["dimension"], "fingerprint": m["model"]["fingerprint"],
                "index_type": m["index"]["type"], "size_bytes": store.size_on_disk(self.path),
                "built_at": m["built_at"], "updated_at": m["updated_at"], "format_version": m["format_version"],
                "package_version": m["package_version"]}

    def topics(self, settings: "TopicSettings | None" = None, ray: "RaySettings | None" = None, level: int = 0,
               **overrides: Any) -> "TopicModel":
        """Topics of this index (UMAP + HDBSCAN), fitted once per index version and settings, then reused;
        with ``ray``, documents outside the fitted sample are assigned on the cluster. A missing ``level``
        fails before anything is saved."""
        from .topics import TopicSettings, fit

        return fit(self, replace(settings or TopicSettings(), **overrides), job_map(ray), level)

    def duplicates(self, settings: "DedupSettings | None" = None, against: "Index | None" = None,
                   ray: "RaySettings | None" = None, **overrides: Any) -> "DuplicateReport":
        """Near-duplicate groups inside this index, or each abstract's matches in ``against`` (cross-set)."""
        from .dedup import DedupSettings, find_duplicates, find_duplicates_against

        settings = replace(settings or DedupSettings(), **overrides)
        if len(self) == 0:
            raise InputError(f"{self.path} is empty; add documents before looking for duplicates")
        if against is None:
            return find_duplicates(self, settings, job_map(ray))
        if against.manifest["model"]["fingerprint"] != self.manifest["model"]["fingerprint"]:
            raise ModelMismatchError(
                f"{against.path} was built with model {against.model_name!r} and {self.path} with "
                f"{self.model_name!r}; rebuild one of them with the other's --model")
        return find_duplicates_against(self, against, settings)

    # changes ------------------------------------------------------------------------------------
    def add(self, documents: Iterable[Document], progress: bool = False) -> "Index":
        """Append documents, embedding only the new ones; ids already present are an error."""
        from .embed import Embedder

        documents = list(documents)
        check_unique(documents)
        clash = next((d.id for d in documents if d.id in self.documents.row_of), None)
        if clash is not None:
            raise InputError(f"id {clash!r} is already in {self.path}; remove it first or give it another id")
        embedder = Embedder(EmbedSettings(**self.manifest["model"]["settings"]))
        check_fingerprint(self.manifest["model"], embedder.fingerprint, embedder.settings.model, self.path)
        matrix = embed_documents(embedder, documents, progress, "embedding new")
        everything = np.concatenate([np.asarray(self.embeddings), matrix])
        if self.manifest["index"].get("ondisk"):
            self._write([*self.documents, *documents], everything, refill(self.path, self.manifest, everything))
        else:
            index = vec.read(self.path / store.VECTORS)
            vec.add(index, matrix)
            self._write([*self.documents, *documents], everything, lambda file: vec.write(index, file))
        return self._reload()

    def remove(self, ids: Iterable[str]) -> "Index":
        """Drop documents by id without re-embedding anything; unknown ids are an error."""
        ids = list(dict.fromkeys(ids))
        missing = [i for i in ids if i not in self.documents.row_of]
        if missing:
            raise InputError(f"no document with id {missing[0]!r} in {self.path}; nothing was removed")
        drop = {self.documents.row_of[i] for i in ids}
        keep = np.asarray([r for r in range(len(self)) if r not in drop], dtype=np.int64)
        if len(keep) == 0:
            raise InputError(f"removing {len(ids)} ids would leave {self.path} empty; delete the folder instead")
        matrix = np.asarray(self.embeddings[keep])
        kept = [d for r, d in enumerate(self.documents) if r not in drop]
        self._write(kept, matrix, refill(self.path, self.manifest, matrix))
        return self._reload()

    def _write(self, documents: list[Document], matrix: np.ndarray, write_vectors) -> None:
        manifest = {**self.manifest, "documents": len(documents), "updated_at": store.new_manifest()["updated_at"]}
        write_version(self.path, documents, matrix, write_vectors, manifest)

    def _reload(self) -> "Index":
        fresh = Index.load(self.path)
        self.__dict__.clear()
        self.__dict__.update(fresh.__dict__)
        return self


def _check_k(k: int) -> None:
    if not isinstance(k, int) or k < 1:
        raise InputError(f"k must be a positive whole number, got {k!r}")
