"""An assignment a program chair can run: every submission gets exactly R distinct reviewers, every reviewer
between M and L submissions, no conflicted pair, solved as a min-cost flow (``flow``): the best total, the
fairest, or a randomised one within per-pair probability caps (``randomized``). An impossible request is
refused with the cause in numbers, before or after the solver, and nothing is written."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from . import attributes, flow, progress as progress_line, randomized
from .scores import ScoreTable
from .settings import AssignSettings


@dataclass(frozen=True)
class Assignment:
    """The assigned pairs (``submission, reviewer, score``), each submission's alternates, and a summary."""

    pairs: tuple[tuple[str, str, float], ...]
    alternates: dict[str, tuple[tuple[str, float], ...]]
    summary: dict
    marginals: tuple[tuple[str, str, float], ...] = ()

    def to_json(self) -> dict:
        return {"summary": self.summary,
                "pairs": [{"submission": s, "reviewer": r, "score": round(v, 6)} for s, r, v in self.pairs],
                "alternates": {s: [{"reviewer": r, "score": round(v, 6)} for r, v in alt]
                               for s, alt in self.alternates.items()}}


def assign(table: ScoreTable, settings: AssignSettings, caps: np.ndarray | None = None,
           progress: bool = False, constraints: attributes.Constraints | None = None) -> Assignment:
    """The assignment ``settings`` ask for over the candidate pairs of ``table`` (conflicts removed);
    ``caps`` (one per pair of the table) are per-pair probability limits for the randomised objective;
    ``constraints``: rules on each submission's reviewers (seniority, institutions), solved by CP-SAT;
    ``progress``: a line on stderr for instances large enough to take seconds, and whenever rules may go to
    CP-SAT, which can run until its time limit."""
    ruled = constraints is not None and bool(constraints.rules)
    with progress_line.shown(progress and (len(table.score) >= progress_line.SHOWN_FROM or ruled)):
        return _assign(table, settings, caps, constraints)


def _assign(table: ScoreTable, settings: AssignSettings, caps: np.ndarray | None,
            constraints: attributes.Constraints | None) -> Assignment:
    ok = ~table.conflict
    s_idx, r_idx, score = table.submission[ok], table.reviewer[ok], table.score[ok]
    cap = (np.full(len(score), settings.max_probability) if caps is None
           else np.minimum(np.asarray(caps, np.float64)[ok], settings.max_probability))
    _refuse_impossible(table, s_idx, r_idx, settings)
    low_pairs: tuple[str, ...] = ()
    if settings.min_score is not None:
        keep, low_pairs = _above_min_score(table, s_idx, r_idx, score, cap, settings)
        s_idx, r_idx, score, cap = s_idx[keep], r_idx[keep], score[keep], cap[keep]
    if constraints is not None and constraints.rules:
        return _constrained(table, s_idx, r_idx, score, ok, settings, constraints)
    if settings.objective == "fair":
        floor = _best_floor(table, s_idx, r_idx, score, settings)
        keep = score >= floor
        s_idx, r_idx, score, cap = s_idx[keep], r_idx[keep], score[keep], cap[keep]
    chosen = _solve(table, s_idx, r_idx, score, settings)
    if chosen is None:
        raise InputError(_deficit(table, s_idx, r_idx, settings))
    extra: dict = {"below_min_score": list(low_pairs)} if settings.min_score is not None else {}
    marginals: tuple = ()
    if settings.objective == "randomized":
        optimum = float(score[chosen].sum())
        n, m = len(table.submissions), len(table.reviewers)
        solution = randomized.fractional(n, m, s_idx, r_idx, score, cap, settings)
        if solution is None:
            raise InputError(_deficit(table, s_idx, r_idx, settings, cap))
        chosen = randomized.draw(s_idx, r_idx, solution, settings.seed)
        extra.update(randomized.summary(score, solution, chosen, optimum, settings))
        support = np.flatnonzero(solution.units)
        support = support[np.lexsort((r_idx[support], s_idx[support]))]
        marginals = tuple((table.submissions[s], table.reviewers[r], p) for s, r, p in
                          zip(s_idx[support].tolist(), r_idx[support].tolist(), solution.probability[support].tolist()))
    result = _result(table, s_idx[chosen], r_idx[chosen], score[chosen], ok, settings)
    return Assignment(result.pairs, result.alternates, {**result.summary, **extra}, marginals)


def _constrained(table: ScoreTable, s_idx: np.ndarray, r_idx: np.ndarray, score: np.ndarray, ok: np.ndarray,
                 settings: AssignSettings, constraints: attributes.Constraints) -> Assignment:
    """The best total meeting the attribute rules too, checked again on the result."""
    if settings.objective != "total":
        raise InputError(f"--at-least/--at-most work with --objective total only, not {settings.objective}")
    if _solve(table, s_idx, r_idx, score, settings) is None:
        raise InputError(_deficit(table, s_idx, r_idx, settings))
    rules = list(constraints.rules)
    attributes.refuse_impossible(table, s_idx, r_idx, settings.per_paper, rules, constraints.info)
    groups = attributes.groups(table, s_idx, r_idx, settings.per_paper, rules, constraints.info)
    if groups is not None:
        units = flow.solve(len(table.submissions), len(table.reviewers), s_idx, r_idx, flow.Arcs.linear(score),
                           settings.per_paper, settings.min_load, settings.max_load, groups)
        if units is None:
            raise InputError(f"no assignment meets the loads and {', '.join(map(str, rules))} together (an exact "
                             "min-cost flow); relax a rule, raise --max-load or lower --min-load")
        chosen, solved = units > 0, {"solver": "min-cost flow", "optimal": True, "optimality_gap": 0.0,
                                     "rules": [str(r) for r in rules]}
    else:
        chosen, solved = attributes.solve(table, s_idx, r_idx, score, settings.per_paper, settings.min_load,
                                          settings.max_load, rules, constraints.info, constraints.time_limit)
    result = _result(table, s_idx[chosen], r_idx[chosen], score[chosen], ok, settings)
    broken = attributes.violations([(s, r) for s, r, _ in result.pairs], rules, constraints.info)
    if broken:
        raise InputError(f"the solver's assignment breaks {broken[0]}; nothing was written (please report this)")
    return Assignment(result.pairs, result.alternates, {**result.summary, **solved})


def _above_min_score(table: ScoreTable, s_idx: np.ndarray, r_idx: np.ndarray, score: np.ndarray, cap: np.ndarray,
                     settings: AssignSettings) -> tuple[np.ndarray, tuple[str, ...]]:
    """Which pairs may be used under ``min_score``: those at or above it, and the pairs below it of just the
    submissions that cannot be covered without them (found by a flow that counts below-score units as its
    only cost), which are named."""
    good = score >= settings.min_score
    scale, capacity = _units(settings, cap)
    units = flow.solve(len(table.submissions), len(table.reviewers), s_idx, r_idx,
                       flow.Arcs(np.arange(len(score)), capacity, (~good).astype(np.int64)),
                       settings.per_paper * scale, settings.min_load * scale, settings.max_load * scale)
    if units is None:
        raise InputError(_deficit(table, s_idx, r_idx, settings, cap if settings.objective == "randomized" else None))
    needy = np.unique(s_idx[(units > 0) & ~good])
    keep = good | np.isin(s_idx, needy)
    return keep, tuple(table.submissions[i] for i in needy)


def _units(settings: AssignSettings, cap: np.ndarray) -> tuple[int, np.ndarray]:
    """The unit flow is counted in and each pair's capacity in it, for the objective asked for."""
    if settings.objective != "randomized":
        return 1, np.ones(len(cap), np.int64)
    scale = randomized.scale_for(settings)
    return scale, np.floor(cap * scale + 1e-9).astype(np.int64)


def _refuse_impossible(table: ScoreTable, s_idx: np.ndarray, r_idx: np.ndarray, settings: AssignSettings) -> None:
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
                         f"conflicts and missing scores: {_some(short, table.submissions, options)}; add reviewers "
                         "or scores for them, or lower --per-paper")
    reach = np.bincount(r_idx, minlength=m)
    weak = np.flatnonzero(reach < low)
    if len(weak):
        raise InputError(f"minimum loads cannot all be met: {len(weak):,} reviewer(s) can take fewer than "
                         f"--min-load {low} submissions (scored, not conflicted): "
                         f"{_some(weak, table.reviewers, reach)}; lower --min-load")


def _some(positions: np.ndarray, names: tuple[str, ...], counts: np.ndarray, shown: int = 5) -> str:
    """The first few of ``positions`` by name, each with its count: "s0 (1), s4 (2) ..."."""
    listed = ", ".join(f"{names[i]} ({counts[i]})" for i in positions[:shown])
    return listed + (" ..." if len(positions) > shown else "")


def _solve(table: ScoreTable, s_idx: np.ndarray, r_idx: np.ndarray, score: np.ndarray,
           settings: AssignSettings) -> np.ndarray | None:
    """Which candidate pairs the optimal deterministic flow uses, or None when no assignment meets every
    constraint."""
    units = flow.solve(len(table.submissions), len(table.reviewers), s_idx, r_idx, flow.Arcs.linear(score),
                       settings.per_paper, settings.min_load, settings.max_load)
    return None if units is None else units > 0


def _best_floor(table: ScoreTable, s_idx: np.ndarray, r_idx: np.ndarray, score: np.ndarray,
                settings: AssignSettings) -> float:
    """The highest affinity every assigned pair can reach (a binary search over the scores, each step a flow
    over the pairs at or above it): the weakest pair of the ``fair`` assignment."""
    levels = np.unique(score)
    low, high = 0, len(levels) - 1
    if _solve(table, s_idx, r_idx, score, settings) is None:
        raise InputError(_deficit(table, s_idx, r_idx, settings))
    while low < high:
        middle = (low + high + 1) // 2
        keep = score >= levels[middle]
        if _solve(table, s_idx[keep], r_idx[keep], score[keep], settings) is not None:
            low = middle
        else:
            high = middle - 1
    return float(levels[low])


def _deficit(table: ScoreTable, s_idx: np.ndarray, r_idx: np.ndarray, settings: AssignSettings,
             cap: np.ndarray | None = None) -> str:
    """Why the flow found no assignment: how many reviews fit at most, and the submissions left short
    (``cap``: the pairs' probability limits, for the randomised objective)."""
    from ortools.graph.python import min_cost_flow

    n, m = len(table.submissions), len(table.reviewers)
    scale, capacity = _units(settings, cap) if cap is not None else (1, np.ones(len(s_idx), np.int64))
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


def _result(table: ScoreTable, s_idx: np.ndarray, r_idx: np.ndarray, score: np.ndarray, ok: np.ndarray,
            settings: AssignSettings) -> Assignment:
    order = np.lexsort((-score, s_idx))
    pairs = tuple((table.submissions[s], table.reviewers[r], float(v))
                  for s, r, v in zip(s_idx[order], r_idx[order], score[order]))
    n = len(table.submissions)
    means = np.bincount(s_idx, weights=score, minlength=n) / settings.per_paper
    lows = np.full(n, np.inf)
    np.minimum.at(lows, s_idx, score)
    assigned = set(zip(s_idx.tolist(), r_idx.tolist()))
    best = _best_reviewer(table, ok)
    loads = np.bincount(r_idx, minlength=len(table.reviewers))
    alternates = _alternates(table, ok, assigned, settings.alternates)
    summary = {"submissions": n, "reviewers": len(table.reviewers), "objective": settings.objective,
               "per_paper": settings.per_paper, "min_load": settings.min_load, "max_load": settings.max_load,
               "total_affinity": round(float(score.sum()), 6), "mean_affinity": round(float(means.mean()), 6),
               "lowest_submission_mean": round(float(means.min()), 6), "lowest_pair": round(float(score.min()), 6),
               "got_their_best_reviewer": sum((s, b) in assigned for s, b in enumerate(best)),
               "load_histogram": {str(k): v for k, v in sorted(Counter(loads.tolist()).items())}}
    return Assignment(pairs, alternates, summary)


def _best_reviewer(table: ScoreTable, ok: np.ndarray) -> np.ndarray:
    """Each submission's highest-scoring reviewer among the candidates (the first listed on a tie), or -1."""
    s, r, v = table.submission[ok], table.reviewer[ok], table.score[ok]
    order = np.lexsort((-v, s))
    first = np.ones(len(order), bool)
    first[1:] = s[order][1:] != s[order][:-1]
    best = np.full(len(table.submissions), -1)
    best[s[order][first]] = r[order][first]
    return best


def _alternates(table: ScoreTable, ok: np.ndarray, assigned: set, k: int) -> dict[str, tuple[tuple[str, float], ...]]:
    if k == 0:
        return {}
    out: dict[str, list[tuple[float, int]]] = {s: [] for s in table.submissions}
    order = np.lexsort((-table.score, table.submission))
    for i in order[ok[order]]:
        s, r = int(table.submission[i]), int(table.reviewer[i])
        name = table.submissions[s]
        if (s, r) not in assigned and len(out[name]) < k:
            out[name].append((float(table.score[i]), r))
    return {s: tuple((table.reviewers[r], v) for v, r in alt) for s, alt in out.items()}
