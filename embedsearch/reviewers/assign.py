"""An assignment a program chair can run: every submission gets exactly R distinct reviewers, every reviewer
between M and L submissions, no conflicted pair, solved as a min-cost flow (``flow``): the best total, the
fairest, or a randomised one within per-pair probability caps (``randomized``). An impossible request is
refused with the cause in numbers, before or after the solver, and nothing is written."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from . import attributes, flow, progress as progress_line, randomized, refusals
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
    refusals.refuse_impossible(table, s_idx, r_idx, settings)
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
        raise InputError(refusals.deficit(table, s_idx, r_idx, settings))
    extra: dict = {"below_min_score": list(low_pairs)} if settings.min_score is not None else {}
    marginals: tuple = ()
    if settings.objective == "randomized":
        optimum = float(score[chosen].sum())
        n, m = len(table.submissions), len(table.reviewers)
        solution = randomized.fractional(n, m, s_idx, r_idx, score, cap, settings)
        if solution is None:
            raise InputError(refusals.deficit(table, s_idx, r_idx, settings, cap))
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
    plain = _solve(table, s_idx, r_idx, score, settings)
    if plain is None:
        raise InputError(refusals.deficit(table, s_idx, r_idx, settings))
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
                                          settings.max_load, rules, constraints.info, constraints.time_limit,
                                          _first_rule_flow(table, s_idx, r_idx, score, settings, rules,
                                                           constraints.info, plain))
    result = _result(table, s_idx[chosen], r_idx[chosen], score[chosen], ok, settings)
    broken = attributes.violations([(s, r) for s, r, _ in result.pairs], rules, constraints.info)
    if broken:
        raise InputError(f"the solver's assignment breaks {broken[0]}; nothing was written (please report this)")
    return Assignment(result.pairs, result.alternates, {**result.summary, **solved})


def _first_rule_flow(table: ScoreTable, s_idx: np.ndarray, r_idx: np.ndarray, score: np.ndarray,
                     settings: AssignSettings, rules: list[attributes.Rule], info: dict[str, dict[str, str]],
                     fallback: np.ndarray) -> np.ndarray:
    """Where CP-SAT starts: the best assignment meeting the loads and the first rule (one exact flow), else the
    best meeting the loads alone."""
    groups = attributes.groups(table, s_idx, r_idx, settings.per_paper, rules[:1], info)
    units = flow.solve(len(table.submissions), len(table.reviewers), s_idx, r_idx, flow.Arcs.linear(score),
                       settings.per_paper, settings.min_load, settings.max_load, groups)
    return fallback if units is None else units > 0


def _above_min_score(table: ScoreTable, s_idx: np.ndarray, r_idx: np.ndarray, score: np.ndarray, cap: np.ndarray,
                     settings: AssignSettings) -> tuple[np.ndarray, tuple[str, ...]]:
    """Which pairs may be used under ``min_score``: those at or above it, and the pairs below it of just the
    submissions that cannot be covered without them (found by a flow that counts below-score units as its
    only cost), which are named."""
    good = score >= settings.min_score
    scale, capacity = randomized.units(settings, cap)
    units = flow.solve(len(table.submissions), len(table.reviewers), s_idx, r_idx,
                       flow.Arcs(np.arange(len(score)), capacity, (~good).astype(np.int64)),
                       settings.per_paper * scale, settings.min_load * scale, settings.max_load * scale)
    if units is None:
        raise InputError(refusals.deficit(table, s_idx, r_idx, settings, cap if settings.objective == "randomized" else None))
    needy = np.unique(s_idx[(units > 0) & ~good])
    keep = good | np.isin(s_idx, needy)
    return keep, tuple(table.submissions[i] for i in needy)


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
        raise InputError(refusals.deficit(table, s_idx, r_idx, settings))
    while low < high:
        middle = (low + high + 1) // 2
        keep = score >= levels[middle]
        if _solve(table, s_idx[keep], r_idx[keep], score[keep], settings) is not None:
            low = middle
        else:
            high = middle - 1
    return float(levels[low])


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
