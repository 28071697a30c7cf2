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
    assert list(rows[0]) == ["submission", "reviewer", "score", "submission title", "reviewer name"]
    pairs = tuple((r["submission"], r["reviewer"], float(r["score"])) for r in rows)
    check(type("R", (), {"pairs": pairs})(), table(matrix), AssignSettings(2, 6, 3), {(0, 0), (1, 1)})
    assert report["summary"]["load_histogram"] and len(report["alternates"]["s3"]) == 2
    assert all(a["reviewer"] not in {r for s, r, _ in pairs if s == "s3"} for a in report["alternates"]["s3"])
    text = run_cli("assign", "--scores", str(scores), "--per-paper", "2", "--max-load", "6", "--min-load", "3",
                   "--conflicts", str(tmp_path / "coi.csv"), "--alternates", "2", "--out", str(out), "--force",
                   check=True).stdout  # the alternates without --json too
    named = [f"{a['reviewer']} ({a['score']:.3f})" for a in report["alternates"]["s3"]]
    assert f"  s3: {', '.join(named)}" in text.splitlines()


def test_titles_and_names_the_scores_carry_reach_the_assignment(tmp_path):
    """``affinity`` writes each submission's title and reviewer's name beside the ids; ``assign`` keeps them in
    its CSV and its alternates, so a chair reads who reviews what without looking ids up."""
    from embedsearch.disk.csvout import Writer

    scores = tmp_path / "scores.csv"
    with scores.open("w", newline="") as fh:
        Writer(fh).rows([("submission", "reviewer", "score", "conflict", "submission title", "reviewer name"),
                         *((f"s{i}", f"~Rev_Iewer{j}", round(0.1 * (i + 2 * j + 1), 2), "", f"Paper {i}", "Rev Iewer")
                           for i in range(3) for j in range(3))])
    out = tmp_path / "assignment.csv"
    text = run_cli("assign", "--scores", str(scores), "--per-paper", "1", "--max-load", "1", "--alternates", "1",
                   "--out", str(out), check=True).stdout
    with out.open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 3 and all(r["submission title"] == f"Paper {r['submission'][1:]}" for r in rows)
    assert all(r["reviewer name"] == "Rev Iewer" for r in rows)
    assert any(line.startswith("  s0 (Paper 0): ~Rev_Iewer") and "[Rev Iewer]" in line for line in text.splitlines())


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


RANDOMIZED = dict(per_paper=2, max_load=4, min_load=1, objective="randomized", max_probability=0.5)


@pytest.mark.parametrize("perturbation", [0.0, 0.2])
def test_randomized_draws_match_their_marginals_and_every_draw_meets_every_constraint(perturbation):
    matrix = np.random.default_rng(0).random((10, 7)).round(3)
    scores = table(matrix, {(0, 1), (3, 3)})
    settings = AssignSettings(**RANDOMIZED, perturbation=perturbation)
    first = assign(scores, settings)
    marginals = {(s, r): p for s, r, p in first.marginals}
    assert max(marginals.values()) <= 0.5 + 1e-12 and ("s0", "r1") not in marginals
    assert all(abs(sum(p for (s, _), p in marginals.items() if s == f"s{i}") - 2) < 1e-9 for i in range(10))
    draws, counts = 2000, {}
    for seed in range(draws):
        result = assign(scores, AssignSettings(**RANDOMIZED, perturbation=perturbation, seed=seed))
        check(result, scores, settings, {(0, 1), (3, 3)})
        for s, r, _ in result.pairs:
            counts[(s, r)] = counts.get((s, r), 0) + 1
    assert set(counts) <= set(marginals)
    z = [abs(counts.get(k, 0) / draws - p) / np.sqrt(p * (1 - p) / draws) for k, p in marginals.items() if p < 1]
    assert max(z) < 4.5, max(z)  # 45-odd pairs: a 4.5-sigma miss by chance has odds under 1 in 3,000
    s = first.summary
    assert s["largest_pair_probability"] == 0.5 and s["expected_of_optimum"] < 1
    assert s["deterministic_optimum"] == assign(scores, AssignSettings(2, 4, 1)).summary["total_affinity"]
    assert assign(scores, AssignSettings(**RANDOMIZED, seed=7)).pairs == assign(scores, AssignSettings(**RANDOMIZED,
                                                                                                       seed=7)).pairs


def test_randomized_maximises_expected_affinity_within_the_caps():
    """Against scipy's LP over the same caps: the flow's expected total is the LP optimum; the perturbed
    objective trades a little of it for more pairs that could be drawn."""
    from scipy.optimize import linprog

    matrix = np.random.default_rng(5).random((8, 6)).round(3)
    n, m = matrix.shape
    a_eq = np.zeros((n, n * m))
    a_ub = np.zeros((m, n * m))
    for i in range(n):
        a_eq[i, i * m:(i + 1) * m] = 1
    for j in range(m):
        a_ub[j, j::m] = 1
    lp = linprog(-matrix.ravel(), A_ub=np.vstack([a_ub, -a_ub]), b_ub=np.r_[np.full(m, 4), np.full(m, -1)],
                 A_eq=a_eq, b_eq=np.full(n, 2), bounds=(0, 0.5))
    plain = assign(table(matrix), AssignSettings(**RANDOMIZED)).summary
    spread = assign(table(matrix), AssignSettings(**RANDOMIZED, perturbation=0.3)).summary
    assert plain["expected_total"] == pytest.approx(-lp.fun, abs=1e-6)
    assert spread["expected_total"] < plain["expected_total"] and spread["support_pairs"] > plain["support_pairs"]


def test_randomized_names_what_the_caps_make_impossible():
    matrix = np.ones((3, 3))
    with pytest.raises(InputError, match=r"--max-probability 0.3.*\(s0, s1, s2\)"):
        assign(table(matrix), AssignSettings(per_paper=2, max_load=3, objective="randomized", max_probability=0.3))
    with pytest.raises(InputError, match=r"--max-probability 0.5.* 1 submission\(s\) \(s0\)"):
        assign(table(np.ones((3, 5)), {(0, 0), (0, 1)}), AssignSettings(per_paper=2, max_load=3,
                                                                         objective="randomized"))


def test_min_score_is_broken_only_for_submissions_that_need_it_and_they_are_named():
    matrix = np.array([[0.9, 0.8, 0.1], [0.9, 0.05, 0.02], [0.7, 0.6, 0.5]])
    result = assign(table(matrix), AssignSettings(per_paper=2, max_load=3, min_score=0.3))
    assert result.summary["below_min_score"] == ["s1"]
    assert all(v >= 0.3 for s, _, v in result.pairs if s != "s1")
    traded = np.array([[0.9, 0.31], [0.5, 0.2]])  # the best total (1.1) needs the 0.2 pair; 0.81 needs none
    result = assign(table(traded), AssignSettings(per_paper=1, max_load=1, min_score=0.3))
    assert result.summary["below_min_score"] == [] and {(s, r) for s, r, _ in result.pairs} == {("s0", "r1"),
                                                                                               ("s1", "r0")}


def test_the_command_runs_a_randomized_assignment_with_bids_and_writes_its_marginals(tmp_path):
    matrix = np.random.default_rng(2).random((12, 6)).round(4)
    matrix[0] = [0.9, 0.1, 0.1, 0.1, 0.1, 0.1]
    scores = write_scores(tmp_path / "scores.csv", matrix)
    (tmp_path / "bids.csv").write_text("submission,reviewer,bid\ns0,r1,Very High\ns0,r0,very_low\ns1,r9,High\n")
    out, marg = tmp_path / "a.csv", tmp_path / "m.csv"
    args = ["assign", "--scores", str(scores), "--per-paper", "2", "--max-load", "5", "--objective", "randomized",
            "--max-probability", "0.6", "--perturbation", "0.1", "--seed", "4", "--bids", str(tmp_path / "bids.csv"),
            "--out", str(out), "--marginals", str(marg)]
    bad = run_cli(*args)
    assert bad.returncode == 2 and "bids.csv:4: unknown reviewer 'r9'" in bad.stderr and not out.exists()
    (tmp_path / "bids.csv").write_text("submission,reviewer,bid\ns0,r1,Very High\ns0,r0,very_low\n")
    result = run_cli(*args, check=True)
    assert "score = 1*affinity + 1*bid" in result.stderr and "of the deterministic optimum" in result.stderr
    with marg.open() as fh:
        probability = {(r["submission"], r["reviewer"]): float(r["probability"]) for r in csv.DictReader(fh)}
    assert max(probability.values()) <= 0.6 and probability[("s0", "r1")] == 0.6 and ("s0", "r0") not in probability
    with out.open() as fh:
        rows = list(csv.DictReader(fh))
    assert all(probability[(r["submission"], r["reviewer"])] > 0 for r in rows) and len(rows) == 24
    first = out.read_text()
    run_cli(*args, "--force", check=True)
    assert out.read_text() == first, "the same seed draws the same assignment"


def test_attribute_rules_hold_on_the_written_assignment_and_an_impossible_rule_is_named(tmp_path):
    from embedsearch.reviewers.attributes import Rule, read_info, violations

    matrix = np.random.default_rng(3).random((10, 8)).round(4)
    matrix[:, :4] += 1  # the four best reviewers share one institution; the two seniors are the weakest
    matrix[:, 6:] -= 1
    scores = write_scores(tmp_path / "scores.csv", matrix)
    info = tmp_path / "info.csv"
    info.write_text("reviewer,seniority,institution\n" + "".join(
        f"r{j},{'senior' if j >= 6 else 'junior'},{'mit' if j < 4 else f'u{j}'}\n" for j in range(8)))
    out = tmp_path / "a.csv"
    args = ["assign", "--scores", str(scores), "--per-paper", "2", "--max-load", "6", "--out", str(out)]
    plain = run_cli(*args, check=True)
    with out.open() as fh:
        before = [(r["submission"], r["reviewer"]) for r in csv.DictReader(fh)]
    rules = [Rule("seniority", "senior", 1), Rule("institution", None, 1)]
    people = read_info(info, {"seniority", "institution"})
    assert all(violations(before, [rule], people) for rule in rules), "without the rules the best total breaks both"
    result = run_cli(*args, "--reviewers-info", str(info), "--at-least", "seniority:senior=1", "--at-most",
                     "institution=1", "--force", check=True)
    with out.open() as fh:
        after = [(r["submission"], r["reviewer"]) for r in csv.DictReader(fh)]
    assert violations(after, rules, people) == [] and len(after) == 20 and plain.returncode == 0
    assert "hold on every submission (min-cost flow, optimal)" in result.stderr  # the two rules never share a pair
    run_cli(*args, "--reviewers-info", str(info), "--at-most", "institution=1", "--force", check=True)
    with out.open() as fh:
        assert violations([(r["submission"], r["reviewer"]) for r in csv.DictReader(fh)], rules[1:], people) == []
    (tmp_path / "coi.csv").write_text("submission,reviewer\ns2,r6\ns2,r7\n")
    out.unlink()
    refused = run_cli(*args, "--reviewers-info", str(info), "--at-least", "seniority:senior=1", "--conflicts",
                      str(tmp_path / "coi.csv"))
    assert refused.returncode == 2 and "--at-least seniority:senior=1 cannot hold for 1 submission(s) (s2)" in \
        refused.stderr and not out.exists()


def write_candidates(path: Path, n: int, m: int, per_sub: int, seed: int = 0) -> Path:
    """``n`` submissions with ``per_sub`` random candidates each among ``m`` reviewers (the scale at which
    a solve takes seconds)."""
    rng = np.random.default_rng(seed)
    with path.open("w") as fh:
        fh.write("submission,reviewer,score\n")
        for i in range(n):
            for j, v in zip(rng.choice(m, per_sub, replace=False), rng.random(per_sub)):
                fh.write(f"s{i},r{j},{v:.4f}\n")
    return path


def test_a_large_assignment_shows_its_steps_and_a_small_one_stays_quiet(tmp_path):
    big = write_candidates(tmp_path / "big.csv", 2000, 600, 50)
    done = run_cli("assign", "--scores", str(big), "--max-load", "10", "--out", str(tmp_path / "a.csv"), check=True)
    assert "assign, step 1: min-cost flow over 100,000 arcs" in done.stderr
    small = write_candidates(tmp_path / "small.csv", 20, 10, 5)
    quiet = run_cli("assign", "--scores", str(small), "--max-load", "10", "--out", str(tmp_path / "b.csv"), check=True)
    assert "assign, step" not in quiet.stderr


def test_ctrl_c_during_a_long_solve_ends_it_at_once_and_writes_nothing(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    scores = write_candidates(tmp_path / "scores.csv", 2000, 300, 50)
    info = tmp_path / "info.csv"
    info.write_text("reviewer,seniority,institution\n" + "".join(
        f"r{j},{'senior' if j % 5 == 0 else 'junior'},u{j % 40}\n" for j in range(300)))
    out, log = tmp_path / "a.csv", (tmp_path / "stderr.txt").open("w+")
    proc = subprocess.Popen([sys.executable, "-m", "embedsearch", "assign", "--scores", str(scores), "--max-load", "25",
                             "--reviewers-info", str(info), "--at-least", "seniority:senior=1", "--at-most",
                             "institution=1", "--time-limit", "600", "--out", str(out)], stderr=log, text=True)
    deadline = time.monotonic() + 240
    while "CP-SAT over" not in (tmp_path / "stderr.txt").read_text() and proc.poll() is None:
        assert time.monotonic() < deadline, "the CP-SAT step never started"
        time.sleep(0.2)
    time.sleep(2)
    assert proc.poll() is None, (tmp_path / "stderr.txt").read_text()
    os.kill(proc.pid, signal.SIGINT)
    asked = time.monotonic()
    code = proc.wait(timeout=60)
    waited = time.monotonic() - asked
    text = (tmp_path / "stderr.txt").read_text()
    assert code == 130 and "interrupted; nothing was changed on disk" in text and not out.exists()
    assert waited < 10, f"Ctrl-C took {waited:.1f} s to end a 600-second solve"


@pytest.mark.parametrize("rules", [["at_least"], ["at_most"], ["at_least", "junior"]])
def test_rules_that_do_not_cross_are_one_exact_flow_with_cp_sat_s_optimum(rules):
    from embedsearch.reviewers import attributes

    rng = np.random.default_rng(8)
    matrix = rng.random((14, 9)).round(3)
    matrix[:, :5] += 0.5  # the strongest reviewers are junior and share two institutions
    scores = table(matrix, {(0, 6), (3, 7)})
    info = {f"r{j}": {"seniority": "senior" if j >= 6 else "junior", "institution": f"u{j % 2}" if j < 5 else f"v{j}"}
            for j in range(9)}
    made = {"at_least": attributes.Rule("seniority", "senior", 1), "at_most": attributes.Rule("institution", None, 1),
            "junior": attributes.Rule("seniority", "junior", 1)}
    chosen = [made[r] for r in rules]
    settings = AssignSettings(per_paper=3, max_load=7)
    ok = ~scores.conflict
    assert attributes.groups(scores, scores.submission[ok], scores.reviewer[ok], 3, chosen, info) is not None
    result = assign(scores, settings, constraints=attributes.Constraints(tuple(chosen), info))
    assert result.summary["solver"] == "min-cost flow"
    check(result, scores, settings, {(0, 6), (3, 7)})
    assert attributes.violations([(s, r) for s, r, _ in result.pairs], chosen, info) == []
    exact, _ = attributes.solve(scores, scores.submission[ok], scores.reviewer[ok], scores.score[ok], 3, 0, 7, chosen,
                                info, 60.0)
    best = float(scores.score[ok][exact].sum())
    assert result.summary["total_affinity"] == pytest.approx(best, abs=0.01)  # CP-SAT works on a 1/1000 grid
    plain = assign(scores, settings).summary["total_affinity"]
    assert plain > result.summary["total_affinity"], "the rule binds on this instance"


def test_rules_that_cross_go_to_cp_sat_which_finds_the_best_assignment_that_meets_them():
    from embedsearch.reviewers import attributes

    matrix = np.random.default_rng(12).random((4, 6)).round(3)
    matrix[:, :3] += 0.5  # the best three share an institution, and one of them is the only senior there
    info = {f"r{j}": {"seniority": "senior" if j in (0, 4) else "junior", "institution": "u" if j < 3 else f"v{j}"}
            for j in range(6)}
    rules = (attributes.Rule("seniority", "senior", 1), attributes.Rule("institution", None, 1))
    scores = table(matrix)
    assert attributes.groups(scores, scores.submission, scores.reviewer, 2, list(rules), info) is None
    plain = assign(scores, AssignSettings(per_paper=2, max_load=2)).pairs
    assert attributes.violations([(s, r) for s, r, _ in plain], list(rules), info), "the rules bind here"
    result = assign(scores, AssignSettings(per_paper=2, max_load=2), constraints=attributes.Constraints(rules, info))
    assert result.summary["solver"] == "CP-SAT" and result.summary["optimal"]
    assert attributes.violations([(s, r) for s, r, _ in result.pairs], list(rules), info) == []
    best = -np.inf
    pairs = list(itertools.combinations(range(6), 2))
    for choice in itertools.product(pairs, repeat=4):
        loads = np.bincount([j for c in choice for j in c], minlength=6)
        chosen = [(f"s{i}", f"r{j}") for i, c in enumerate(choice) for j in c]
        if loads.max() <= 2 and not attributes.violations(chosen, list(rules), info):
            best = max(best, sum(matrix[i, j] for i, c in enumerate(choice) for j in c))
    assert result.summary["total_affinity"] == pytest.approx(best, abs=1e-6)
