"""Constraints on who reviews a submission together, from a CSV of reviewer attributes
(``reviewer,seniority,institution,...``): ``seniority:senior=1`` asks for at least one reviewer whose
seniority is ``senior`` on every submission, ``institution=1`` for at most one reviewer of any one institution.
Rules whose groups of pairs do not overlap (one rule, or rules on disjoint values) are solved exactly as one
min-cost flow; rules that cross break the flow's structure and go to OR-Tools' CP-SAT within a time limit,
with its optimality gap reported. Each rule is checked again on the result."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import InputError
from . import progress
from .csvfile import rows
from .flow import Groups
from .scores import ScoreTable

GRID = 1000  # CP-SAT needs whole-number weights: scores to this resolution


@dataclass(frozen=True)
class Rule:
    """At least (``value`` given) or at most (``value`` None: per distinct value) ``count`` reviewers of a
    submission with attribute ``field``."""

    field: str
    value: str | None
    count: int

    def __str__(self) -> str:
        return (f"--at-least {self.field}:{self.value}={self.count}" if self.value is not None
                else f"--at-most {self.field}={self.count}")


@dataclass(frozen=True)
class Constraints:
    """The rules every submission's reviewers must meet, the reviewers' attributes and CP-SAT's time limit."""

    rules: tuple[Rule, ...]
    info: dict[str, dict[str, str]]
    time_limit: float = 60.0


def parse(text: str, at_least: bool) -> Rule:
    """``seniority:senior=1`` (at least) or ``institution=1`` (at most) as a rule."""
    flag = "--at-least" if at_least else "--at-most"
    head, _, count = text.rpartition("=")
    field, _, value = head.partition(":")
    if not head or not count.strip().isdigit() or (at_least and not value) or (not at_least and value):
        shape = "FIELD:VALUE=N, as in seniority:senior=1" if at_least else "FIELD=N, as in institution=1"
        raise InputError(f"{flag} {text!r}: write {shape}")
    return Rule(field.strip(), value.strip() if at_least else None, int(count))


def read_info(path: Path, fields: set[str]) -> dict[str, dict[str, str]]:
    """Each reviewer's attributes; the fields the rules name must be columns."""
    info: dict[str, dict[str, str]] = {}
    for line, row in rows(path, ["reviewer", *sorted(fields)], "--reviewers-info",
                          "reviewer and the fields --at-least/--at-most name"):
        if not row["reviewer"]:
            raise InputError(f"{path}:{line}: empty reviewer id")
        if row["reviewer"] in info:
            raise InputError(f"{path}:{line}: reviewer {row['reviewer']!r} appears twice")
        info[row["reviewer"]] = {f: row[f].lower() for f in fields}
    return info


def values(table: ScoreTable, info: dict[str, dict[str, str]], field: str) -> list[str]:
    """Each reviewer's value of ``field`` ('' when unknown: never senior, never sharing an institution)."""
    return [info.get(r, {}).get(field, "") for r in table.reviewers]


def refuse_impossible(table: ScoreTable, s_idx: np.ndarray, r_idx: np.ndarray, per: int, rules: list[Rule],
                      info: dict[str, dict[str, str]]) -> None:
    """Name the submissions whose own candidates cannot meet a rule, before any solving."""
    for rule in rules:
        of = np.asarray(values(table, info, rule.field), dtype=object)[r_idx]
        if rule.value is not None:
            have = np.bincount(s_idx, weights=(of == rule.value.lower()), minlength=len(table.submissions))
            short = np.flatnonzero(have < rule.count)
            why = f"fewer than {rule.count} candidate reviewer(s) with {rule.field} {rule.value!r}"
        else:
            known = of != ""
            groups = {(s, v) for s, v, k in zip(s_idx.tolist(), of.tolist(), known.tolist()) if k}
            spare = np.bincount(s_idx[~known], minlength=len(table.submissions))
            distinct = np.bincount([s for s, _ in groups], minlength=len(table.submissions))
            short = np.flatnonzero(spare + np.minimum(distinct * rule.count, per) < per)
            why = f"too few different {rule.field} values among the candidates to fill --per-paper {per}"
        if len(short):
            named = ", ".join(table.submissions[i] for i in short[:5]) + (" ..." if len(short) > 5 else "")
            raise InputError(f"{rule} cannot hold for {len(short):,} submission(s) ({named}): {why}; relax the "
                             "rule or add candidate reviewers")


def groups(table: ScoreTable, s_idx: np.ndarray, r_idx: np.ndarray, per: int, rules: list[Rule],
           info: dict[str, dict[str, str]]) -> Groups | None:
    """The rules as groups of each submission's candidate pairs with bounds, solvable exactly as one flow,
    or None when some pair falls in two groups (two rules that cross need CP-SAT)."""
    of_pair = np.full(len(s_idx), -1)
    subs, lows, highs = [], [], []
    for rule in rules:
        of = np.asarray(values(table, info, rule.field), dtype=object)[r_idx]
        if rule.value is not None:
            keys, bound = np.where(of == rule.value.lower(), s_idx, -1), (rule.count, per)
        else:
            named = np.flatnonzero(of != "")
            _, codes = np.unique(of[named].astype(str), return_inverse=True)
            keys = np.full(len(s_idx), -1)
            keys[named] = s_idx[named] * (codes.max() + 1 if len(codes) else 1) + codes
            sizes = np.bincount(keys[named])
            keys[named[sizes[keys[named]] <= rule.count]] = -1  # a group no larger than its bound binds nothing
            bound = (0, rule.count)
        member = keys >= 0
        if (of_pair[member] >= 0).any():
            return None
        found, where = np.unique(keys[member], return_inverse=True)
        of_pair[member] = len(subs) + where
        first = np.zeros(len(found), np.int64)
        first[where] = np.flatnonzero(member)
        subs.extend(s_idx[first].tolist())
        lows.extend([bound[0]] * len(found))
        highs.extend([bound[1]] * len(found))
    return Groups(of_pair, np.asarray(subs, np.int64), np.asarray(lows, np.int64), np.asarray(highs, np.int64))


def solve(table: ScoreTable, s_idx: np.ndarray, r_idx: np.ndarray, score: np.ndarray, per: int, low: int,
          high: int, rules: list[Rule], info: dict[str, dict[str, str]], time_limit: float,
          hint: np.ndarray | None = None) -> tuple[np.ndarray, dict]:
    """The best assignment meeting loads and every rule (CP-SAT), and what the solver proved about it;
    ``hint``: an assignment that meets some of them, where the search starts."""
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    x = [model.new_bool_var("") for _ in range(len(score))]
    by_sub: dict[int, list[int]] = {}
    by_rev: dict[int, list[int]] = {}
    for p, (s, r) in enumerate(zip(s_idx.tolist(), r_idx.tolist())):
        by_sub.setdefault(s, []).append(p)
        by_rev.setdefault(r, []).append(p)
    for pairs in by_sub.values():
        model.add(sum(x[p] for p in pairs) == per)
    for pairs in by_rev.values():
        model.add_linear_constraint(sum(x[p] for p in pairs), low, high)
    for rule in rules:
        of = values(table, info, rule.field)
        for pairs in by_sub.values():
            if rule.value is not None:
                model.add(sum(x[p] for p in pairs if of[r_idx[p]] == rule.value.lower()) >= rule.count)
                continue
            groups: dict[str, list[int]] = {}
            for p in pairs:
                if of[r_idx[p]]:
                    groups.setdefault(of[r_idx[p]], []).append(p)
            for same in groups.values():
                if len(same) > rule.count:
                    model.add(sum(x[p] for p in same) <= rule.count)
    model.maximize(sum(int(round(v * GRID)) * x[p] for p, v in enumerate(score.tolist())))
    for var, value in zip(x, [] if hint is None else hint.tolist()):
        model.add_hint(var, int(value))
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = time_limit
    solver.parameters.num_workers = 2
    solver.parameters.catch_sigint_signal = False  # Ctrl-C is Python's: the run ends writing nothing
    progress.step(f"CP-SAT over {len(score):,} pairs and {len(rules)} rule(s), at most {time_limit:g} s")
    note = progress.noter()

    class Found(cp_model.CpSolverSolutionCallback):
        def on_solution_callback(self) -> None:
            note(f"best {self.objective_value / GRID:,.2f}, bound {self.best_objective_bound / GRID:,.2f}")

    status = progress.wait(lambda: solver.solve(model, Found()), solver.stop_search)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        proved = "is infeasible" if status == cp_model.INFEASIBLE else f"found none within --time-limit {time_limit:g} s"
        raise InputError(f"no assignment meets the loads and {', '.join(map(str, rules))} together (CP-SAT {proved}); "
                         "relax a rule, raise --max-load or lower --min-load")
    chosen = np.array([solver.boolean_value(v) for v in x], dtype=bool)
    bound, found = solver.best_objective_bound, solver.objective_value
    return chosen, {"solver": "CP-SAT", "optimal": status == cp_model.OPTIMAL,
                    "optimality_gap": round(max(0.0, bound - found) / max(abs(bound), 1e-9), 6),
                    "rules": [str(r) for r in rules]}


def violations(pairs: list[tuple[str, str]], rules: list[Rule], info: dict[str, dict[str, str]]) -> list[str]:
    """Each rule broken by an assignment's ``(submission, reviewer)`` pairs, as 'submission: rule'."""
    per_sub: dict[str, list[str]] = {}
    for s, r in pairs:
        per_sub.setdefault(s, []).append(r)
    broken = []
    for rule in rules:
        for s, revs in per_sub.items():
            of = [info.get(r, {}).get(rule.field, "") for r in revs]
            if rule.value is not None:
                ok = sum(v == rule.value.lower() for v in of) >= rule.count
            else:
                ok = all(of.count(v) <= rule.count for v in set(of) if v)
            if not ok:
                broken.append(f"{s}: {rule}")
    return broken
