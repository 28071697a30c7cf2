"""The one min-cost flow every assignment objective solves (OR-Tools, the solver OpenReview's matcher uses):
source -> submission (``per`` units) -> reviewer (through the candidate pairs' arcs) -> sink (``low`` units
at a bonus that outweighs any affinity, then up to ``high``). Flow is counted in units of ``1 / scale`` of a
review, so one solve gives a deterministic assignment (scale 1) or a fractional one (each pair's flow over
scale is its probability)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import progress

SCALE = 1_000_000  # affinities become whole costs at this resolution


@dataclass(frozen=True)
class Arcs:
    """Parallel arcs per candidate pair: ``pair[k]`` is the pair arc k belongs to, with its capacity in units
    and its cost per unit (whole numbers; lower is better)."""

    pair: np.ndarray
    capacity: np.ndarray
    cost: np.ndarray

    @classmethod
    def linear(cls, score: np.ndarray, capacity: np.ndarray | int = 1) -> Arcs:
        """One arc per pair: each unit is worth the pair's score."""
        n = len(score)
        return cls(np.arange(n), np.broadcast_to(np.asarray(capacity, np.int64), (n,)).copy(),
                   -np.round(np.asarray(score, np.float64) * SCALE).astype(np.int64))

    @classmethod
    def concave(cls, score: np.ndarray, capacity: np.ndarray, scale: int, perturbation: float,
                pieces: int = 6) -> Arcs:
        """Up to ``pieces`` arcs per pair whose unit costs follow ``score * f(x)``, f(x) = x - b x^2 (b =
        ``perturbation``), x the pair's probability: cheaper first, so the flow fills them in order and the
        sum of f is maximised on that piecewise-linear approximation. A negative score stays linear."""
        capacity = np.asarray(capacity, np.int64)
        parts, caps, costs = [], [], []
        for k in range(pieces):
            start = capacity * k // pieces
            stop = capacity * (k + 1) // pieces
            has = stop > start
            lo, hi = start[has] / scale, stop[has] / scale
            s = score[has]
            gain = np.where(s > 0, s * ((hi - lo) - perturbation * (hi ** 2 - lo ** 2)), s * (hi - lo))
            parts.append(np.flatnonzero(has))
            caps.append((stop - start)[has])
            costs.append(-np.round(gain / (stop - start)[has] * scale * SCALE).astype(np.int64))
        return cls(np.concatenate(parts), np.concatenate(caps), np.concatenate(costs))


@dataclass(frozen=True)
class Groups:
    """Nodes between a submission and some of its candidate pairs, each passing between ``low[g]`` and
    ``high[g]`` units: pair ``i`` goes through group ``of_pair[i]`` (-1: straight from its submission), and
    group ``g`` hangs under submission ``submission[g]``. A rule on reviewers' attributes is a flow this way
    whenever no pair belongs to two groups."""

    of_pair: np.ndarray
    submission: np.ndarray
    low: np.ndarray
    high: np.ndarray


def solve(n: int, m: int, s_idx: np.ndarray, r_idx: np.ndarray, arcs: Arcs, per: int, low: int,
          high: int, groups: Groups | None = None) -> np.ndarray | None:
    """Units of flow on each candidate pair in the optimal flow (``per`` per submission, reviewers between
    ``low`` and ``high``, ``groups`` within their bounds, all in units), or None when no flow meets every
    constraint."""
    from ortools.graph.python import min_cost_flow

    progress.step(f"min-cost flow over {len(arcs.pair):,} arcs")
    source, sink = n + m, n + m + 1
    bonus = int((np.abs(arcs.cost) * arcs.capacity).sum()) + 1  # a minimum filled outweighs any affinity
    flow = min_cost_flow.SimpleMinCostFlow()
    tails = s_idx[arcs.pair]
    if groups is not None:
        through = groups.of_pair[arcs.pair]
        tails = np.where(through >= 0, n + m + 2 + through, tails)
        _group_arcs(flow, n + m + 2, groups, bonus)
    pair_arcs = flow.add_arcs_with_capacity_and_unit_cost(tails, n + r_idx[arcs.pair], arcs.capacity, arcs.cost)
    flow.add_arcs_with_capacity_and_unit_cost(np.full(n, source), np.arange(n), np.full(n, per), np.zeros(n, np.int64))
    reviewers = n + np.arange(m)
    if low:
        flow.add_arcs_with_capacity_and_unit_cost(reviewers, np.full(m, sink), np.full(m, low), np.full(m, -bonus))
    if high > low:
        flow.add_arcs_with_capacity_and_unit_cost(reviewers, np.full(m, sink), np.full(m, high - low),
                                                 np.zeros(m, np.int64))
    flow.set_nodes_supplies(np.array([source, sink]), np.array([n * per, -n * per]))
    if flow.solve() != flow.OPTIMAL:
        return None
    units = np.bincount(arcs.pair, weights=flow.flows(pair_arcs), minlength=len(s_idx)).astype(np.int64)
    loads = np.bincount(r_idx, weights=units, minlength=m)
    if groups is not None:
        inside = groups.of_pair >= 0
        passed = np.bincount(groups.of_pair[inside], weights=units[inside], minlength=len(groups.low))
        if (passed < groups.low).any():
            return None
    return units if (loads >= low).all() else None


def _group_arcs(flow, first: int, groups: Groups, bonus: int) -> None:
    """Submission -> group arcs: the group's minimum at a bonus that outweighs any affinity, then the rest."""
    nodes = first + np.arange(len(groups.low))
    must = groups.low > 0
    if must.any():
        flow.add_arcs_with_capacity_and_unit_cost(groups.submission[must], nodes[must], groups.low[must],
                                                 np.full(int(must.sum()), -bonus, np.int64))
    more = groups.high > groups.low
    flow.add_arcs_with_capacity_and_unit_cost(groups.submission[more], nodes[more], (groups.high - groups.low)[more],
                                             np.zeros(int(more.sum()), np.int64))
