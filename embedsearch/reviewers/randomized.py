"""The randomised assignment (Jecmen, Zhang, Liu, Shah, Conitzer, Fang, NeurIPS 2020): the best fractional
assignment in which no pair's probability exceeds its cap, as one min-cost flow in units of ``1 / scale``,
then one assignment sampled with exactly those marginals (``rounding``). With a perturbation the flow
maximises the sum of ``score * (x - b x^2)`` instead (Xu et al. 2023, as NeurIPS 2024 ran it), which spreads
probability over more pairs at a small cost in expected affinity."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import ceil

import numpy as np

from . import flow, rounding
from .settings import AssignSettings

STEPS = 10  # a perturbed objective needs at least this many units per cap to bend


@dataclass(frozen=True)
class Fractional:
    """Each candidate pair's probability as ``units / scale``."""

    units: np.ndarray
    scale: int

    @property
    def probability(self) -> np.ndarray:
        return self.units / self.scale


def scale_for(settings: AssignSettings) -> int:
    """The unit a probability is counted in: exact for ``max_probability`` (as a fraction up to 1/1000),
    fine enough for a perturbation to bend."""
    base = Fraction(settings.max_probability).limit_denominator(1000).denominator
    steps = STEPS if settings.perturbation else 1
    return base * ceil(steps / max(1, round(settings.max_probability * base)))


def fractional(n: int, m: int, s_idx: np.ndarray, r_idx: np.ndarray, score: np.ndarray, caps: np.ndarray,
               settings: AssignSettings) -> Fractional | None:
    """The best fractional assignment with pair ``i`` at most ``caps[i]`` likely, or None if none exists."""
    scale = scale_for(settings)
    capacity = np.floor(np.asarray(caps) * scale + 1e-9).astype(np.int64)
    arcs = (flow.Arcs.concave(score, capacity, scale, settings.perturbation) if settings.perturbation
            else flow.Arcs.linear(score, capacity))
    units = flow.solve(n, m, s_idx, r_idx, arcs, settings.per_paper * scale, settings.min_load * scale,
                       settings.max_load * scale)
    return None if units is None else Fractional(units, scale)


def draw(s_idx: np.ndarray, r_idx: np.ndarray, solution: Fractional, seed: int) -> np.ndarray:
    """One assignment (a boolean per pair) whose pairs are chosen with the solution's probabilities."""
    return rounding.sample(s_idx, r_idx, solution.units, solution.scale, seed)


def summary(score: np.ndarray, solution: Fractional, chosen: np.ndarray, optimum: float,
            settings: AssignSettings) -> dict:
    """What a chair reports: expected and sampled totals against the deterministic optimum, the largest
    pair probability, how many pairs could have been drawn."""
    expected = float((solution.probability * score).sum())
    sampled = float(score[chosen].sum())
    return {"max_probability": settings.max_probability, "perturbation": settings.perturbation, "seed": settings.seed,
            "deterministic_optimum": round(optimum, 6), "expected_total": round(expected, 6),
            "expected_of_optimum": round(expected / optimum, 6) if optimum else None,
            "sampled_of_optimum": round(sampled / optimum, 6) if optimum else None,
            "largest_pair_probability": round(float(solution.probability.max()), 6),
            "support_pairs": int((solution.units > 0).sum()), "probability_unit": f"1/{solution.scale}"}


def units(settings: AssignSettings, cap: np.ndarray) -> tuple[int, np.ndarray]:
    """The unit flow is counted in and each pair's capacity in it, for the objective asked for."""
    if settings.objective != "randomized":
        return 1, np.ones(len(cap), np.int64)
    scale = scale_for(settings)
    return scale, np.floor(cap * scale + 1e-9).astype(np.int64)
