"""The submissions to match: the documents and vectors of an index or a cluster (the chair's duplicate-check
index: nothing is embedded again), or of corpus files (OpenReview's ``submissions.json``, JSONL of notes,
anything ``build`` reads) embedded through the cache."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..corpus import Document, UniqueIds, parse_record
from ..corpus.readers import Problem
from ..embedding.embed import Embedder
from ..embedding.precision import DEFAULT_PRECISION
from ..embedding.settings import EmbedSettings
from ..errors import InputError
from ..index import Index
from .notes import records


@dataclass(frozen=True, eq=False)
class Submissions:
    """Submissions in order, their unit vectors, and the fingerprint of the model that made them."""

    documents: tuple[Document, ...]
    vectors: np.ndarray
    model: str
    fingerprint: str
    precision: str = DEFAULT_PRECISION

    @property
    def ids(self) -> list[str]:
        return [d.id for d in self.documents]

    @classmethod
    def of(cls, index: Index) -> Submissions:
        """Every live document of an index (or of every shard of a cluster), with its stored vector."""
        model = index.snapshot.manifest.model
        return cls(tuple(index.documents), np.asarray(index.embeddings, dtype=np.float32), model.name,
                   model.fingerprint, model.settings.precision)

    @classmethod
    def read(cls, paths: list[Path], model: str, skip_invalid: bool = False, progress: bool = False,
             precision: str = DEFAULT_PRECISION) -> Submissions:
        """An index or cluster folder (``model`` then comes from it), or corpus files embedded with ``model``."""
        if len(paths) == 1 and paths[0].is_dir():
            return cls.of(Index.load(paths[0]))
        ids, documents = UniqueIds(), []
        for path in paths:
            if not path.is_file():
                raise InputError(f"--submissions {path}: no such file")
            for where, row in records(path):
                try:
                    if isinstance(row, Problem):
                        raise InputError(f"{row}")
                    doc = parse_record(row, where, default_id=f"{path.stem}:{where.rsplit(':', 1)[-1]}")
                    ids.add(doc.id, where)
                except InputError as exc:
                    if not skip_invalid:
                        raise InputError(f"{exc}; fix it or pass --skip-invalid") from None
                    continue
                documents.append(doc)
        ids.finish(", ".join(str(p) for p in paths))
        embedder = Embedder(EmbedSettings(model=model, precision=precision))
        vectors = embedder.embed([d.embed_text for d in documents])
        return cls(tuple(documents), vectors, model, embedder.fingerprint, embedder.settings.precision)
