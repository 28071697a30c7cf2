"""``POST /recommend``: papers like the liked ids (and a library sent as text) and unlike the unliked ones,
answered by the served reader, so an index and a cluster on Ray Serve alike; ``format`` turns any answer of
``/search``, ``/similar`` and ``/recommend`` into BibTeX, RIS or CSL-JSON for a reference manager."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from fastapi import APIRouter

from ..corpus.library import read_library
from ..recommend import Seeds, recommend
from ..recommend.library import match
from .api import hits_json
from .exports import EXPORTS, SUFFIX, exported
from .responses import RecommendOut, errors
from .schemas import RecommendBody

LIBRARY_SUFFIX = {**SUFFIX, "zotero-csv": ".csv"}


def router(service: Any) -> APIRouter:
    api = APIRouter(tags=["search"])

    @api.post("/recommend", response_model=RecommendOut, response_model_exclude_unset=True,
              responses={**errors(404), **EXPORTS})
    def recommend_papers(body: RecommendBody):
        """Papers like the ``like`` ids and the ``library``'s entries (matched by DOI, arXiv id or title, the
        rest embedded) and unlike the ``unlike`` ids, with the seeds each is closest to."""
        served = service.current()
        found = None
        if body.library is not None:
            with tempfile.TemporaryDirectory(prefix="embedsearch-library-") as folder:
                file = Path(folder) / f"library{LIBRARY_SUFFIX[body.library.kind]}"
                file.write_text(body.library.text, encoding="utf-8")
                found = match(served.reader, read_library(file))
        unlike = [i for i in body.unlike if i not in body.like]
        result = recommend(served.reader, Seeds.of(body.like, unlike, found), body.k, body.filters,
                           library=found)
        if body.format != "json":
            return exported(body.format, result.answer)
        return {"generation": served.index.generation, "method": result.method, "like": list(result.seeds.like),
                "unlike": list(result.seeds.unlike), **({"library": found.to_json()} if found else {}),
                **hits_json(result.answer, body.display)}

    return api
