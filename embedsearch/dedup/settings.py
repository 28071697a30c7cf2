"""When a candidate pair is a duplicate, and how candidates are searched for."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import check


@dataclass(frozen=True)
class DedupSettings:
    """When a candidate pair is a duplicate. ``threshold``, ``min_cosine`` and ``min_overlap`` are the
    setting with the highest F1 on a planted-edit dev set over SciFact abstracts among those with
    precision >= 0.99 that flag none of its background-sharing pairs; they were checked on a separate
    test set, on labelled bibliographic duplicates and on the bundled corpus (benchmarks/HISTORY.md).

    - ``threshold``: cosine at which two abstracts are duplicates on meaning alone (heavy rewording).
    - ``min_cosine``: cosine a pair needs before lexical overlap can make it a duplicate.
    - ``min_overlap``: share of the shorter abstract's word 5-grams that must appear in the other.
    - ``near_identical``: overlap from which a duplicate is called near-identical rather than reworded.
    - ``neighbours``: nearest neighbours per abstract examined as candidates (never all pairs).
    - ``floor``: lowest cosine kept as a candidate, so a report can be re-cut down to it.
    - ``rows_per_job``: abstracts per candidate-search job (whole IVF lists for an IVF index).
    """

    threshold: float = 0.93
    min_cosine: float = 0.70
    min_overlap: float = 0.60
    near_identical: float = 0.80
    neighbours: int = 10
    floor: float = 0.60
    shingle: int = 5
    rows_per_job: int = 50_000

    def __post_init__(self) -> None:
        check(self, threshold=(0, 1), min_cosine=(0, 1), min_overlap=(0, 1), near_identical=(0, 1), floor=(0, 1),
              rows_per_job=(1, None), neighbours=(1, None), shingle=(1, None))

    def verdict(self, cosine: float, overlap: float, exact: bool) -> str | None:
        if exact:
            return "exact"
        if cosine >= self.min_cosine and overlap >= self.near_identical:
            return "near-identical"
        if cosine >= self.threshold or (cosine >= self.min_cosine and overlap >= self.min_overlap):
            return "reworded"
        return None
