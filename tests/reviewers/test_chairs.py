"""Senior area chairs for area chairs (``reviewers.chairs``, ``assign-sac``): a SAC is scored by the AC's
papers, never oversees an AC one of whose papers it conflicts with, and every refusal is in chairs' words."""

from __future__ import annotations

import csv
import itertools
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli

from embedsearch.errors import InputError
from embedsearch.reviewers import AssignSettings, ScoreTable, assign
from embedsearch.reviewers.chairs import build


def sac_scores(matrix: np.ndarray, conflicts=()) -> ScoreTable:
    s, r = np.meshgrid(np.arange(matrix.shape[0]), np.arange(matrix.shape[1]), indexing="ij")
    conflict = np.array([(i, j) in conflicts for i, j in zip(s.ravel(), r.ravel())])
    return ScoreTable(tuple(f"p{i}" for i in range(matrix.shape[0])), tuple(f"sac{j}" for j in range(matrix.shape[1])),
                      s.ravel(), r.ravel(), matrix.ravel().astype(np.float64), conflict)


PAPERS = {"acA": ["p0", "p1", "p2"], "acB": ["p3", "p4"], "acC": ["p5"]}


def test_a_sac_is_scored_by_the_mean_over_the_acs_papers_and_kept_from_an_ac_whose_paper_it_conflicts_with():
    matrix = np.array([[0.9, 0.1], [0.8, 0.2], [0.7, 0.3], [0.2, 0.6], [0.4, 0.6], [0.5, 0.5]])
    built = build(sac_scores(matrix), PAPERS)
    got = {(built.table.submissions[a], built.table.reviewers[b]): v
           for a, b, v in zip(built.table.submission, built.table.reviewer, built.table.score)}
    assert got[("acA", "sac0")] == pytest.approx(0.8) and got[("acB", "sac1")] == pytest.approx(0.6)
    assert not built.table.conflict.any() and built.unscored == 0
    free = assign(built.table, AssignSettings(per_paper=1, max_load=2))
    assert ("acA", "sac0", pytest.approx(0.8)) in free.pairs
    guarded = build(sac_scores(matrix, {(2, 0)}), PAPERS)  # sac0 conflicts with p2, one of acA's three papers
    assert guarded.paper_conflicts == 1
    chosen = assign(guarded.table, AssignSettings(per_paper=1, max_load=2)).pairs
    assert ("acA", "sac1") in {(a, s) for a, s, _ in chosen} and len(chosen) == 3
    direct = build(sac_scores(matrix), PAPERS, {("acB", "sac1")})
    assert direct.direct_conflicts == 1
    assert ("acB", "sac0") in {(a, s) for a, s, _ in assign(direct.table, AssignSettings(1, 2)).pairs}
    with pytest.raises(InputError, match="no SAC score in --scores \\(p9\\)"):
        build(sac_scores(matrix), {**PAPERS, "acD": ["p9"]})


def write(path: Path, header: list[str], rows) -> Path:
    with path.open("w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(header)
        out.writerows(rows)
    return path


def read_rows(path: Path) -> list[dict]:
    with path.open() as fh:
        return list(csv.DictReader(fh))


def test_the_two_steps_from_the_command_line_carry_every_conflict_to_the_sac(tmp_path):
    rng = np.random.default_rng(4)
    ac_matrix = rng.random((24, 6)).round(4)
    ac_scores = write(tmp_path / "ac_scores.csv", ["submission", "reviewer", "score"],
                      [(f"p{i}", f"ac{j}", ac_matrix[i, j]) for i, j in itertools.product(range(24), range(6))])
    acs = tmp_path / "acs.csv"
    run_cli("assign", "--scores", str(ac_scores), "--per-paper", "1", "--max-load", "4", "--out", str(acs), check=True)
    papers = {}
    for row in read_rows(acs):
        papers.setdefault(row["reviewer"], []).append(row["submission"])
    sac_matrix = rng.random((24, 3)).round(4)
    for paper in papers["ac0"] + papers["ac1"]:
        sac_matrix[int(paper[1:]), 0] += 1  # sac0 would oversee ac0 and ac1 but for one conflicted paper each
    conflicted = {(papers["ac0"][0], "sac0"), (papers["ac1"][-1], "sac0")}
    sac_file = write(tmp_path / "sac_scores.csv", ["submission", "reviewer", "score", "conflict"],
                     [(f"p{i}", f"sac{j}", sac_matrix[i, j], "yes" if (f"p{i}", f"sac{j}") in conflicted else "")
                      for i, j in itertools.product(range(24), range(3))])
    direct = write(tmp_path / "direct.csv", ["ac", "sac"], [("ac2", "sac1")])
    out = tmp_path / "sacs.csv"
    args = ["assign-sac", "--scores", str(sac_file), "--papers", str(acs), "--ac-conflicts", str(direct),
            "--max-load", "2", "--out", str(out)]
    done = run_cli(*args, check=True)
    rows = read_rows(out)
    assert list(rows[0]) == ["ac", "sac", "score"] and sorted(r["ac"] for r in rows) == [f"ac{j}" for j in range(6)]
    chosen = {(r["ac"], r["sac"]) for r in rows}
    assert not chosen & {("ac0", "sac0"), ("ac1", "sac0"), ("ac2", "sac1")}
    assert max(sum(s == f"sac{k}" for _, s in chosen) for k in range(3)) <= 2
    for r in rows:
        expected = np.mean([sac_matrix[int(p[1:]), int(r["sac"][3:])] for p in papers[r["ac"]]])
        assert float(r["score"]) == pytest.approx(expected, abs=1e-6)
    assert "excluded 2 AC-SAC pair(s) for a conflict with one of the AC's papers and 1 listed" in done.stderr

    out.unlink()
    every = write(tmp_path / "all.csv", ["ac", "sac"], [("ac3", "sac0"), ("ac3", "sac1"), ("ac3", "sac2")])
    refused = run_cli(*args[:-2], "--ac-conflicts", str(every), "--out", str(out))
    assert refused.returncode == 2 and "1 AC(s) have fewer than --per-ac 1 SACs left" in refused.stderr
    assert "ac3 (0)" in refused.stderr and not out.exists()
    write(acs, ["submission", "reviewer"], [("p1", "ac0"), ("p2", "")])
    broken = run_cli(*args)
    assert broken.returncode == 2 and f"{acs}:3: empty reviewer id" in broken.stderr and not out.exists()
