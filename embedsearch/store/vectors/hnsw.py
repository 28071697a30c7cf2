"""HNSW: a navigable graph, fast approximate search for corpora too large to compare exhaustively."""

from __future__ import annotations

from typing import Any

from .flat import Flat, faiss_module


class HNSW(Flat):
    kind = "hnsw"

    @classmethod
    def empty(cls, dimension: int, settings) -> Any:
        faiss = faiss_module()
        index = faiss.IndexHNSWFlat(dimension, settings.hnsw_m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = settings.hnsw_ef_construction
        index.hnsw.efSearch = settings.hnsw_ef_search
        return index

    @classmethod
    def parameters(cls, index: Any, selector: Any, k: int) -> Any:
        return faiss_module().SearchParametersHNSW(sel=selector, efSearch=max(index.hnsw.efSearch, k))
