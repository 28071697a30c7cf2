"""``POST /recommend``: papers like the liked ids (and a library sent as text) and unlike the unliked ones,
answered by the facade (``Index.recommend``), so an index and a cluster on Ray Serve alike; ``format`` turns any answer of
``/search``, ``/similar`` and ``/recommend`` into BibTeX, RIS or CSL-JSON for a reference manager."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from ..corpus.library import LibraryText
from .api import hits_json
from .exports import EXPORTS, exported
from .responses import RecommendOut, errors
from .schemas import RecommendBody


def router(service: Any) -> APIRouter:
    api = APIRouter(tags=["search"])

    @api.post("/recommend", response_model=RecommendOut, response_model_exclude_unset=True,
              responses={**errors(404), **EXPORTS})
    def recommend_papers(body: RecommendBody):
        """Papers like the ``like`` ids and the ``library``'s entries (matched by DOI, arXiv id or title, the
        rest embedded) and unlike the ``unlike`` ids, with the seeds each is closest to."""
        served = service.current()
        library = None if body.library is None else LibraryText(body.library.kind, body.library.text)
        unlike = [i for i in body.unlike if i not in body.like]
        result = served.index.recommend(body.like, unlike, library, body.k, body.filters)
        found = result.library
        if body.format != "json":
            return exported(body.format, result.answer)
        return {"generation": served.index.generation, "method": result.method, "like": list(result.seeds.like),
                "unlike": list(result.seeds.unlike), **({"library": found.to_json()} if found else {}),
                **hits_json(result.answer, body.display)}

    return api
