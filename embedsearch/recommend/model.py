"""Recommendations from seed papers: papers a reader likes (ids in the index, or a library's entries, matched
or embedded) and papers they do not, turned into one direction (``direction``: one unit vector whose inner
product with a paper's vector ranks the corpus; a linear model's weight vector is itself a query for the vector
index) searched in the vector index of an index or a cluster alike (``Fanout.nearest_to``). Seeds are never
returned; each hit names the seeds it is closest to."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..errors import InputError, UnknownIdError
from ..retrieval.answer import Answer, band
from ..retrieval.evidence import explain
from ..retrieval.filters import Filter
from ..retrieval.parts import Fanout
from .library import LibraryMatch
from .settings import RecommendSettings


def unit(vector: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(vector))
    return (vector / norm if norm > 0 else vector).astype(np.float32)


def direction(likes: np.ndarray, unlikes: np.ndarray, background: np.ndarray,
              settings: RecommendSettings = RecommendSettings()) -> np.ndarray:
    """One liked paper and nothing else is that paper's own vector (``similar``); otherwise the settings'
    method over the likes, the unlikes and the ``background`` sample of the corpus."""
    likes = np.atleast_2d(likes).astype(np.float32)
    unlikes = np.asarray(unlikes, np.float32).reshape(-1, likes.shape[1])
    centre = unit(likes.mean(0))
    away = settings.unlike_weight * unit(unlikes.mean(0)) if len(unlikes) else 0.0
    if len(likes) == 1 and not len(unlikes) or settings.method == "centroid":
        return unit(centre - away)
    from sklearn.svm import LinearSVC

    negatives = np.concatenate([unlikes, np.asarray(background, np.float32).reshape(-1, likes.shape[1])])
    x = np.concatenate([likes, negatives])
    y = np.r_[np.ones(len(likes)), np.zeros(len(negatives))]
    weight = np.r_[np.full(len(likes), len(negatives) / max(len(likes), 1)),  # balanced classes
                   np.full(len(unlikes), settings.unlike_cost), np.ones(len(negatives) - len(unlikes))]
    model = LinearSVC(C=settings.c, tol=1e-6, max_iter=10_000, dual="auto")
    model.fit(x, y, sample_weight=weight / weight.mean())
    return unit(unit(model.coef_[0]) + settings.centroid_weight * centre - away)


@dataclass(frozen=True)
class Seeds:
    """Liked papers (index ids, and texts from a library that matched none), unliked ids."""

    like: tuple[str, ...] = ()
    unlike: tuple[str, ...] = ()
    texts: tuple[tuple[str, str], ...] = ()  # (name, text) embedded as liked seeds, never added

    @classmethod
    def of(cls, like: Sequence[str] = (), unlike: Sequence[str] = (), library: LibraryMatch | None = None) -> Seeds:
        liked = list(dict.fromkeys([*like, *(m.id for m in library.matched)] if library else like))
        return cls(tuple(liked), tuple(dict.fromkeys(unlike)), library.embedded if library else ())


@dataclass(frozen=True)
class Recommendations:
    """The hits (each with ``evidence``: the seeds it is closest to), the seeds used and the method."""

    answer: Answer
    seeds: Seeds
    method: str
    library: LibraryMatch | None = None

    def to_json(self) -> dict[str, Any]:
        return {"method": self.method, "like": list(self.seeds.like), "unlike": list(self.seeds.unlike),
                "embedded": [name for name, _ in self.seeds.texts],
                **({"library": self.library.to_json()} if self.library else {}),
                "hits": [h.to_json() for h in self.answer]}


def recommend(reader: Fanout, seeds: Seeds, k: int = 10, filters: Sequence[str | Filter] = (),
              settings: RecommendSettings = RecommendSettings(), library: LibraryMatch | None = None) -> Recommendations:
    snapshot = reader.snapshot
    row_of = snapshot.documents.row_of
    unknown = [i for i in (*seeds.like, *seeds.unlike) if i not in row_of]
    if unknown:
        raise UnknownIdError(f"no document with id {unknown[0][:200]!r} in {snapshot.root}"
                             f"{f' (and {len(unknown) - 1} more)' if len(unknown) > 1 else ''}; --like and --unlike "
                             "take ids of the index")
    if library is not None and not library.matched and not library.embedded:
        raise InputError(f"the library: no entry matches a paper of {snapshot.root} or carries a title or abstract "
                         f"({library.summary()})")
    if not seeds.like and not seeds.texts:
        raise InputError("recommendations need at least one liked paper: --like ID or a --library that matches "
                         "or carries text")
    both = set(seeds.like) & set(seeds.unlike)
    if both:
        raise InputError(f"{sorted(both)[0]!r} is both liked and unliked; name it once")
    vectors = _rows(snapshot, [row_of[i] for i in seeds.like])
    if seeds.texts:
        vectors = np.concatenate([vectors, snapshot.encoder.encode([t for _, t in seeds.texts])])
    names = [*seeds.like, *(n for n, _ in seeds.texts)]
    unliked = _rows(snapshot, [row_of[i] for i in seeds.unlike])
    rng = np.random.default_rng(settings.seed)
    taken = {row_of[i] for i in (*seeds.like, *seeds.unlike)}
    sample = rng.choice(len(snapshot), min(settings.background + len(taken), len(snapshot)), replace=False)
    background = _rows(snapshot, sorted(r for r in sample.tolist() if r not in taken)[:settings.background])
    query = direction(vectors, unliked, background, settings)
    answer = reader.nearest_to(query, k, (*seeds.like, *seeds.unlike), filters)
    bands = reader.settings.bands(abstracts=True)
    hits = []
    for hit in answer.hits:
        cosines = vectors @ _rows(snapshot, [row_of[hit.id]])[0]
        order = np.argsort(-cosines)[:settings.closest]
        closest = [{"seed": names[i], "cosine": round(float(cosines[i]), 6)} for i in order]
        best = float(cosines[order[0]])
        hits.append(replace(hit, cosine=best, match=band(best, bands), evidence={"closest_seeds": closest}))
    method = "similar" if len(names) == 1 and not seeds.unlike else settings.method
    texts = [d.embed_text for d in snapshot.documents.get([row_of[i] for i in seeds.like])] if seeds.like else []
    answer = explain(snapshot, Answer(tuple(hits), answer.version, answer.missing),
                     seeds=[*texts, *(t for _, t in seeds.texts)])
    return Recommendations(answer, seeds, method, library)


def _rows(snapshot, rows: list[int]) -> np.ndarray:
    if not rows:
        return np.zeros((0, snapshot.manifest.model.dimension), np.float32)
    order = np.argsort(rows)
    out = np.empty((len(rows), snapshot.manifest.model.dimension), np.float32)
    out[order] = np.asarray(snapshot.embeddings[np.asarray(rows)[order]], dtype=np.float32)
    return out
