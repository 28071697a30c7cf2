"""``GET /watches``: the saved searches kept with the served index, read-only (``embedsearch watch`` adds and
runs them), so the page can list them."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from ..watch import listed
from .api import Service, only
from .responses import errors


def router(service: Service) -> APIRouter:
    api = APIRouter(tags=["watches"])

    @api.get("/watches", dependencies=[only()], responses=errors())
    def watches() -> dict[str, Any]:
        """The watches kept with this index: name, query or liked papers, and when each last ran."""
        return {"watches": [w.to_json() for w in listed(service.current().index.path)]}

    return api
