"""Settings of reviewer matching: how a reviewer's publications make one affinity, who conflicts, and what
an assignment must respect. Each checks itself when made."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..errors import check, check_choice

Objective = Literal["total", "fair"]
OBJECTIVES: tuple[Objective, ...] = ("total", "fair")


@dataclass(frozen=True)
class AffinitySettings:
    """A submission's affinity to a reviewer is the weighted sum of its ``top`` highest cosines to the
    reviewer's publications, the i-th best weighted ``1 / i ** power`` (harmonic weights over the ten best:
    chosen on the gold standard's d_20_1..3, see benchmarks/README.md). ``keep`` reviewers per submission are
    written unless every pair is asked for; ``evidence`` publications are named per pair."""

    top: int = 10
    power: float = 1.0
    keep: int = 50
    evidence: int = 3

    def __post_init__(self) -> None:
        check(self, top=(1, None), keep=(1, None), evidence=(0, None), power=(0, 10))


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
    assigned pair as strong as possible, then maximises the total among assignments that keep it."""

    per_paper: int = 3
    max_load: int = 6
    min_load: int = 0
    objective: Objective = "total"
    alternates: int = 0

    def __post_init__(self) -> None:
        check(self, per_paper=(1, None), max_load=(1, None), min_load=(0, self.max_load), alternates=(0, None))
        check_choice("objective", self.objective, OBJECTIVES)
