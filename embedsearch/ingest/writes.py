"""The writes of the facade (``Index`` inherits them): adds, checked adds, removals and compaction, each
committing a new version and moving the facade to it. An add records the files it read (``store.sources``),
so no output ever overwrites them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..corpus import Document
from ..errors import InputError
from ..store.shard_marker import refuse_shard
from ..store.sources import recording
from .embedding import embed_new

if TYPE_CHECKING:
    from ..dedup import DedupSettings, DuplicateReport, OnDuplicate
    from ..store.folders import ClusterFolder, IndexFolder
    from ..store.snapshot import Snapshot


class Writes:
    """What changes an index; the class using it provides ``path``, ``folder``, ``snapshot`` and ``refresh``."""

    path: Path
    folder: IndexFolder | ClusterFolder
    snapshot: Snapshot

    def refresh(self):  # provided by the facade
        raise NotImplementedError

    def add(self, documents: Iterable[Document], progress: bool = False, wait: bool | float = True,
            encoder: Any = None, sources: Sequence[str | Path] = ()) -> Any:
        """Append documents as a new segment (in a cluster: each to the shard its id routes to), embedding only
        them (``embed_new``, through ``encoder`` when given and made by this index's model); ids live in
        the index are an error. ``sources``, the files they were read from, join ``sources``."""
        documents = list(documents)
        refuse_shard(self.path)  # before the embedding, which the lock would only refuse after
        vectors = embed_new(self.refresh().snapshot, documents, progress, encoder)
        with recording(self.path, sources):  # before the commit, so that its generation lists the record
            self.add_embedded(documents, vectors, wait)
        return self

    def add_checked(self, documents: Iterable[Document], on_duplicate: OnDuplicate = "refuse",
                    settings: DedupSettings | None = None, progress: bool = False, wait: bool | float = True,
                    encoder: Any = None, sources: Sequence[str | Path] = ()) -> DuplicateReport:
        """``add``, each new abstract first judged against the index (as ``check_duplicates``): a duplicate
        refuses the whole add (``DuplicateError``, nothing written), is skipped, or is added anyway
        (``on_duplicate``: refuse, skip, add). The report says which abstract duplicates which."""
        from ..dedup import DedupSettings, append_checked

        documents = list(documents)
        refuse_shard(self.path)
        embeddings = embed_new(self.refresh().snapshot, documents, progress, encoder)
        with recording(self.path, sources):
            report = append_checked(self.folder, documents, embeddings, settings or DedupSettings(), on_duplicate,
                                    wait)
        self.refresh()
        return report

    def add_embedded(self, documents: Sequence[Document], embeddings: np.ndarray, wait: bool | float = True) -> Any:
        """Append documents whose vectors were made with this index's model (``add`` without embedding)."""
        documents, embeddings = list(documents), np.asarray(embeddings, dtype=np.float32)
        if embeddings.ndim != 2 or len(embeddings) != len(documents):
            raise InputError(f"{len(documents)} documents need {len(documents)} vectors, got an array of shape "
                             f"{embeddings.shape}; nothing was added")
        self.folder.append(documents, embeddings, wait)
        return self.refresh()

    def remove(self, ids: Iterable[str], wait: bool | float = True) -> Any:
        """Mark documents deleted by id (nothing is rewritten or re-embedded); unknown ids are an error."""
        self.folder.delete(list(dict.fromkeys(ids)), wait)
        return self.refresh()

    def compact(self, wait: bool | float = True) -> Any:
        """Merge every segment (of each shard) into one and drop deleted rows (merges also happen by themselves)."""
        self.folder.compact(wait)
        return self.refresh()
