"""How results are ranked: the modes and fusions (one set of literal types) and their settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from ..errors import InputError, check, check_choice

Mode = Literal["hybrid", "dense", "lexical"]

Fusion = Literal["max", "minmax", "rrf"]

Band = Literal["close", "related", "distant"]

BestMatch = Literal["close", "related", "none"]

Sort = Literal["relevance", "newest", "oldest"]

MODES: tuple[Mode, ...] = get_args(Mode)

SORTS: tuple[Sort, ...] = get_args(Sort)

FUSIONS: tuple[Fusion, ...] = get_args(Fusion)


@dataclass(frozen=True)
class SearchSettings:
    """How results are ranked. ``candidates`` is the depth taken from each retriever before fusion. A hit's
    cosine places it in a band a reader can compare across queries and modes: ``close`` from ``close_cosine``,
    ``related`` from ``related_cosine``, else ``distant``; no close or related hit is "no close match". An
    abstract's neighbours (``similar``) use the ``similar_`` pair. All were measured for all-MiniLM-L6-v2
    (benchmarks/score_bands_bench.py); another model may want others."""

    mode: Mode = "hybrid"
    fusion: Fusion = "max"
    dense_weight: float = 0.6
    candidates: int = 100
    rrf_k: int = 60
    related_cosine: float = 0.3
    close_cosine: float = 0.5
    similar_related_cosine: float = 0.35
    similar_close_cosine: float = 0.65

    def __post_init__(self) -> None:
        check_choice("mode", self.mode, MODES)
        check_choice("fusion", self.fusion, FUSIONS)
        check(self, dense_weight=(0, 1), candidates=(1, None), rrf_k=(1, None))
        for low, high in (("related_cosine", "close_cosine"), ("similar_related_cosine", "similar_close_cosine")):
            if not -1 <= getattr(self, low) <= getattr(self, high) <= 1:
                raise InputError(f"need -1 <= {low} ({getattr(self, low)}) <= {high} ({getattr(self, high)}) <= 1")

    def bands(self, abstracts: bool = False) -> tuple[float, float]:
        """The related and close thresholds for a query (or, with ``abstracts``, for an abstract's neighbours:
        whole abstracts share more words and style, so their cosines run higher)."""
        if abstracts:
            return self.similar_related_cosine, self.similar_close_cosine
        return self.related_cosine, self.close_cosine
