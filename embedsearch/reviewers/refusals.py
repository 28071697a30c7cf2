"""Why an assignment cannot be made, in numbers a chair can act on: capacity below demand, minimum loads out of
reach, submissions left with too few candidates, or (after a flow found none) how many reviews fit at most
and which submissions run short. Each is one message; the caller raises it before anything is written."""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from . import randomized
from .scores import ScoreTable
from .settings import AssignSettings


def refuse_impossible(table: ScoreTable, s_idx: np.ndarray, r_idx: np.ndarray, settings: AssignSettings) -> None:
    n, m, per, low, high = len(table.submissions), len(table.reviewers), settings.per_paper, settings.min_load, \
        settings.max_load
    if m * high < n * per:
        raise InputError(f"capacity below demand: {m:,} reviewers x --max-load {high} = {m * high:,} reviews, but "
                         f"{n:,} submissions x --per-paper {per} need {n * per:,}; raise --max-load to at least "
                         f"{-(-n * per // m)} or add reviewers")
    if m * low > n * per:
        raise InputError(f"minimum loads cannot all be met: {m:,} reviewers x --min-load {low} = {m * low:,} reviews, "
                         f"but only {n * per:,} are needed; lower --min-load to at most {n * per // m}")
    options = np.bincount(s_idx, minlength=n)
    short = np.flatnonzero(options < per)
    if len(short):
        raise InputError(f"{len(short):,} submission(s) have fewer than --per-paper {per} reviewers left after "
                         f"conflicts and missing scores: {some(short, table.submissions, options)}; add reviewers "
                         "or scores for them, or lower --per-paper")
    reach = np.bincount(r_idx, minlength=m)
    weak = np.flatnonzero(reach < low)
    if len(weak):
        raise InputError(f"minimum loads cannot all be met: {len(weak):,} reviewer(s) can take fewer than "
                         f"--min-load {low} submissions (scored, not conflicted): "
                         f"{some(weak, table.reviewers, reach)}; lower --min-load")


def some(positions: np.ndarray, names: tuple[str, ...], counts: np.ndarray, shown: int = 5) -> str:
    """The first few of ``positions`` by name, each with its count: "s0 (1), s4 (2) ..."."""
    listed = ", ".join(f"{names[i]} ({counts[i]})" for i in positions[:shown])
    return listed + (" ..." if len(positions) > shown else "")


def deficit(table: ScoreTable, s_idx: np.ndarray, r_idx: np.ndarray, settings: AssignSettings,
             cap: np.ndarray | None = None) -> str:
    """Why the flow found no assignment: how many reviews fit at most, and the submissions left short
    (``cap``: the pairs' probability limits, for the randomised objective)."""
    from ortools.graph.python import min_cost_flow

    n, m = len(table.submissions), len(table.reviewers)
    scale, capacity = randomized.units(settings, cap) if cap is not None else (1, np.ones(len(s_idx), np.int64))
    per = settings.per_paper * scale
    graph = min_cost_flow.SimpleMinCostFlow()
    arcs = graph.add_arcs_with_capacity_and_unit_cost(s_idx, n + r_idx, capacity, np.zeros(len(s_idx), np.int64))
    graph.add_arcs_with_capacity_and_unit_cost(np.full(n, n + m), np.arange(n), np.full(n, per), np.zeros(n, np.int64))
    graph.add_arcs_with_capacity_and_unit_cost(n + np.arange(m), np.full(m, n + m + 1),
                                              np.full(m, settings.max_load * scale), np.zeros(m, np.int64))
    graph.set_nodes_supplies(np.array([n + m, n + m + 1]), np.array([n * per, -n * per]))
    graph.solve_max_flow_with_min_cost()
    placed = int(graph.flows(arcs).sum())
    if placed < n * per:
        got = np.bincount(s_idx, weights=graph.flows(arcs), minlength=n)
        short = np.flatnonzero(got < per)
        named = ", ".join(table.submissions[i] for i in short[:5])
        within = (f" with no pair more likely than --max-probability {settings.max_probability}"
                  if cap is not None else "")
        hint = ("raise --max-probability, --max-load or add candidate reviewers" if cap is not None
                else "raise --max-load or add candidate reviewers")
        return (f"no assignment fits: at most {placed // scale if scale == 1 else round(placed / scale, 2):,} of the {n * settings.per_paper:,} reviews can "
                f"be placed within --max-load {settings.max_load}{within}, because the reviewers left to "
                f"{len(short):,} submission(s) ({named}{' ...' if len(short) > 5 else ''}) run out of load or "
                f"probability; {hint}")
    return (f"minimum loads cannot all be met together with --per-paper {settings.per_paper} and the conflicts (--min-load "
            f"{settings.min_load}); lower --min-load")
