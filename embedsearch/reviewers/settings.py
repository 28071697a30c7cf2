"""Settings of reviewer matching: how a reviewer's publications make one affinity, who conflicts, and what
an assignment must respect. Each checks itself when made."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..errors import check, check_choice

Objective = Literal["total", "fair", "randomized"]
OBJECTIVES: tuple[Objective, ...] = ("total", "fair", "randomized")


@dataclass(frozen=True)
class AffinitySettings:
    """A submission's affinity to a reviewer is the weighted sum of its ``top`` highest cosines to the
    reviewer's publications, the i-th best weighted ``1 / i ** power`` (harmonic weights over the ten best:
    chosen on the gold standard's d_20_1..3, see benchmarks/HISTORY.md). ``keep`` reviewers per submission are
    written unless every pair is asked for; ``evidence`` publications are named per pair."""

    top: int = 10
    power: float = 1.0
    keep: int = 50
    evidence: int = 3

    def __post_init__(self) -> None:
        check(self, top=(1, None), keep=(1, None), evidence=(0, None), power=(0, 10))

    def scale(self) -> str:
        """What a score means, in words: the sum, its weights and its range (printed beside the scores)."""
        most = sum(1 / i ** self.power for i in range(1, self.top + 1))
        return (f"a score is the sum of a submission's {self.top} highest cosines to a reviewer's publications, the "
                f"i-th weighted 1/i{'' if self.power == 1 else f'^{self.power:g}'}: from 0 to {most:.2f} (every "
                "publication identical), not a cosine")


@dataclass(frozen=True)
class ConflictSettings:
    """A reviewer conflicts with a submission that names them as an author, or names someone who wrote one of
    the reviewer's publications from the last ``years`` years (all of them when publications carry no year).
    A reviewer's own name is the author on most of their publications (or a ``name`` given with them)."""

    years: int = 3

    def __post_init__(self) -> None:
        check(self, years=(0, None))


@dataclass(frozen=True)
class AssignSettings:
    """Every submission gets exactly ``per_paper`` distinct reviewers, every reviewer between ``min_load``
    and ``max_load`` submissions. ``total`` maximises the summed affinity; ``fair`` first makes the weakest
    assigned pair as strong as possible, then maximises the total among assignments that keep it;
    ``randomized`` maximises the expected affinity with no pair more likely than ``max_probability``
    (Jecmen et al. 2020), or the sum of ``x - perturbation * x**2`` over pairs' probabilities x weighted by
    their affinity (Xu et al. 2023's perturbed maximisation, which spreads probability over more pairs), then
    samples one assignment with exactly those marginals, reproducibly from ``seed``. ``min_score``: no pair
    below it unless a submission cannot be covered otherwise."""

    per_paper: int = 3
    max_load: int = 6
    min_load: int = 0
    objective: Objective = "total"
    alternates: int = 0
    max_probability: float = 0.5
    perturbation: float = 0.0
    seed: int = 0
    min_score: float | None = None

    def __post_init__(self) -> None:
        check(self, per_paper=(1, None), max_load=(1, None), min_load=(0, self.max_load), alternates=(0, None),
              max_probability=(0.001, 1), perturbation=(0, 0.5), seed=(0, None))
        check_choice("objective", self.objective, OBJECTIVES)
