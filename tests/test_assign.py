"""The assignment (``reviewers.assign``) with the real solver: every constraint checked on the written output,
the optimum checked against exhaustive search and scipy, and every impossible request named with numbers."""

from __future__ import annotations

import csv
import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli

from embedsearch.errors import InputError
from embedsearch.reviewers import AssignSettings, ScoreTable, assign


def table(matrix, conflicts=()) -> ScoreTable:
    matrix = np.asarray(matrix, dtype=np.float64)
    s, r = np.meshgrid(np.arange(matrix.shape[0]), np.arange(matrix.shape[1]), indexing="ij")
    conflict = np.zeros(matrix.size, bool)
    for i, j in conflicts:
        conflict[i * matrix.shape[1] + j] = True
    return ScoreTable(tuple(f"s{i}" for i in range(matrix.shape[0])), tuple(f"r{j}" for j in range(matrix.shape[1])),
                      s.ravel(), r.ravel(), matrix.ravel(), conflict)


def brute_force(matrix, per, low, high, conflicts=()):
    """Every assignment of ``per`` distinct reviewers to each submission within loads: (best total, best floor)."""
    n, m = matrix.shape
    options = [[c for c in itertools.combinations(range(m), per) if not any((i, j) in conflicts for j in c)]
               for i in range(n)]
    best_total, best_floor = -np.inf, -np.inf
    for choice in itertools.product(*options):
        loads = np.bincount([j for c in choice for j in c], minlength=m)
        if (loads < low).any() or (loads > high).any():
            continue
        values = [matrix[i, j] for i, c in enumerate(choice) for j in c]
        best_total, best_floor = max(best_total, sum(values)), max(best_floor, min(values))
    return best_total, best_floor


def check(result, scores: ScoreTable, settings: AssignSettings, conflicts=()):
    per_sub: dict[str, list[str]] = {}
    for s, r, _ in result.pairs:
        per_sub.setdefault(s, []).append(r)
    assert sorted(per_sub) == sorted(scores.submissions)
    assert all(len(v) == len(set(v)) == settings.per_paper for v in per_sub.values())
    loads = {r: 0 for r in scores.reviewers}
    for s, r, _ in result.pairs:
        loads[r] += 1
        assert (int(s[1:]), int(r[1:])) not in conflicts
    assert all(settings.min_load <= v <= settings.max_load for v in loads.values())


@pytest.mark.parametrize("seed", range(6))
def test_total_and_fair_are_optimal_on_small_instances(seed):
    rng = np.random.default_rng(seed)
    matrix = rng.random((5, 4)).round(3)
    conflicts = {(int(rng.integers(5)), int(rng.integers(4)))}
    for objective in ("total", "fair"):
        settings = AssignSettings(per_paper=2, max_load=3, min_load=2, objective=objective)
        result = assign(table(matrix, conflicts), settings)
        check(result, table(matrix), settings, conflicts)
        total, floor = brute_force(matrix, 2, 2, 3, conflicts)
        got = [v for _, _, v in result.pairs]
        if objective == "total":
            assert sum(got) == pytest.approx(total, abs=1e-5)
        else:
            assert min(got) == pytest.approx(floor) and sum(got) <= total + 1e-9


def test_one_reviewer_each_matches_scipy_on_duplicated_columns():
    from scipy.optimize import linear_sum_assignment

    matrix = np.random.default_rng(3).random((30, 8))
    result = assign(table(matrix), AssignSettings(per_paper=1, max_load=4))
    rows, cols = linear_sum_assignment(np.repeat(matrix, 4, axis=1), maximize=True)
    assert sum(v for _, _, v in result.pairs) == pytest.approx(np.repeat(matrix, 4, axis=1)[rows, cols].sum(),
                                                              abs=1e-4)


def test_minimum_loads_are_honoured_even_when_they_cost_affinity():
    matrix = np.array([[0.9, 0.1], [0.8, 0.2], [0.7, 0.3]])
    unforced = assign(table(matrix), AssignSettings(per_paper=1, max_load=3))
    assert {r for _, r, _ in unforced.pairs} == {"r0"}
    forced = assign(table(matrix), AssignSettings(per_paper=1, max_load=3, min_load=1))
    assert sorted(r for _, r, _ in forced.pairs) == ["r0", "r0", "r1"]


@pytest.mark.parametrize("matrix, conflicts, settings, phrases", [
    (np.ones((10, 3)), (), AssignSettings(per_paper=2, max_load=5), ("capacity below demand", "3 reviewers x",
                                                                      "15 reviews", "20", "at least 7")),
    (np.ones((4, 3)), {(0, 0), (0, 1)}, AssignSettings(per_paper=2, max_load=4),
     ("1 submission(s) have fewer than --per-paper 2", "s0 (1)")),
    (np.ones((2, 4)), (), AssignSettings(per_paper=1, max_load=2, min_load=1), ("minimum loads cannot all be met",
                                                                                 "4 reviewers x --min-load 1")),
    (np.ones((3, 3)), {(0, 2), (1, 2), (2, 2)}, AssignSettings(per_paper=1, max_load=2, min_load=1),
     ("minimum loads cannot all be met", "r2 (0)")),
    (np.ones((3, 4)), {(i, j) for i in range(3) for j in (2, 3)}, AssignSettings(per_paper=1, max_load=1),
     ("no assignment fits", "at most 2 of the 3 reviews", "--max-load 1")),
])
def test_an_impossible_request_names_its_cause(matrix, conflicts, settings, phrases):
    with pytest.raises(InputError) as caught:
        assign(table(matrix, conflicts), settings)
    for phrase in phrases:
        assert phrase in str(caught.value), str(caught.value)


def write_scores(path: Path, matrix, conflicts=()) -> Path:
    with path.open("w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(["submission", "reviewer", "score", "conflict"])
        for i, j in itertools.product(range(matrix.shape[0]), range(matrix.shape[1])):
            out.writerow([f"s{i}", f"r{j}", matrix[i, j], "yes" if (i, j) in conflicts else ""])
    return path


def test_the_command_writes_an_assignment_that_meets_every_constraint(tmp_path):
    matrix = np.random.default_rng(1).random((12, 5)).round(4)
    scores = write_scores(tmp_path / "scores.csv", matrix, {(0, 0)})
    (tmp_path / "coi.csv").write_text("submission,reviewer\ns1,r1\n")
    out = tmp_path / "assignment.csv"
    result = run_cli("assign", "--scores", str(scores), "--per-paper", "2", "--max-load", "6", "--min-load", "3",
                     "--conflicts", str(tmp_path / "coi.csv"), "--alternates", "2", "--out", str(out), "--json",
                     check=True)
    report = json.loads(result.stdout)
    with out.open() as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0]) == ["submission", "reviewer", "score"]
    pairs = tuple((r["submission"], r["reviewer"], float(r["score"])) for r in rows)
    check(type("R", (), {"pairs": pairs})(), table(matrix), AssignSettings(2, 6, 3), {(0, 0), (1, 1)})
    assert report["summary"]["load_histogram"] and len(report["alternates"]["s3"]) == 2
    assert all(a["reviewer"] not in {r for s, r, _ in pairs if s == "s3"} for a in report["alternates"]["s3"])


@pytest.mark.parametrize("content, phrases", [
    ("submission,reviewer\ns0,r0\n", ("scores.csv:1", "'score'")),
    ("submission,reviewer,score\ns0,r0,high\n", ("scores.csv:2", "'high' is not a finite number")),
    ("submission,reviewer,score\ns0,r0,0.5\ns0,r0,0.6\n", ("scores.csv:3", "appears twice")),
])
def test_a_bad_scores_file_is_named_by_line_and_nothing_is_written(tmp_path, content, phrases):
    (tmp_path / "scores.csv").write_text(content)
    result = run_cli("assign", "--scores", str(tmp_path / "scores.csv"), "--max-load", "2", "--out",
                     str(tmp_path / "a.csv"))
    assert result.returncode == 2 and all(p in result.stderr for p in phrases), result.stderr
    assert not (tmp_path / "a.csv").exists()


def test_unknown_ids_in_a_conflicts_file_and_an_infeasible_request_write_nothing(tmp_path):
    scores = write_scores(tmp_path / "scores.csv", np.ones((4, 2)))
    (tmp_path / "coi.csv").write_text("submission,reviewer\ns0,r9\n")
    result = run_cli("assign", "--scores", str(scores), "--max-load", "4", "--conflicts", str(tmp_path / "coi.csv"),
                     "--out", str(tmp_path / "a.csv"))
    assert result.returncode == 2 and "coi.csv:2: unknown reviewer 'r9'" in result.stderr
    result = run_cli("assign", "--scores", str(scores), "--per-paper", "2", "--max-load", "3", "--out",
                     str(tmp_path / "a.csv"))
    assert result.returncode == 2 and "capacity below demand" in result.stderr and not (tmp_path / "a.csv").exists()
    before = scores.read_bytes()
    result = run_cli("assign", "--scores", str(scores), "--max-load", "4", "--out", str(scores), "--force")
    assert result.returncode == 2 and "one of this command's inputs" in result.stderr and scores.read_bytes() == before
