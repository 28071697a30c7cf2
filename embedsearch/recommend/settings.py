"""How recommendations from seed papers are made: one frozen dataclass, validated on construction."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..errors import check, check_choice

Method = Literal["svm", "centroid"]
METHODS: tuple[str, ...] = ("svm", "centroid")


@dataclass(frozen=True)
class RecommendSettings:
    """``method``: ``svm``, a linear classifier fitted per request with the liked papers as positives and the
    unliked ones and a sample of the corpus as negatives (arxiv-sanity's method, over embeddings), its unit
    weight vector plus ``centroid_weight`` times the likes' unit mean, less ``unlike_weight`` times the
    unlikes' unit mean: the query for the vector index; or ``centroid``, the likes' mean less the same unlike
    term. ``c``: the SVM's regularisation; ``background``: corpus papers sampled as negatives (a sample, so a
    request costs the same at any corpus size); ``unlike_cost``: how much more an unliked paper counts than a
    background one; ``closest``: seeds named per hit as its evidence. The defaults were chosen on the tuning
    halves of the protocols in benchmarks/HISTORY.md ("Recommendations")."""

    method: Method = "svm"
    c: float = 0.1
    centroid_weight: float = 1.0
    background: int = 2_000
    unlike_cost: float = 5.0
    unlike_weight: float = 0.5
    closest: int = 2
    seed: int = 0

    def __post_init__(self) -> None:
        check_choice("recommend method", self.method, METHODS)
        check(self, c=(1e-6, None), centroid_weight=(0, None), background=(1, None), unlike_cost=(0, None),
              unlike_weight=(0, None), closest=(1, None))
