"""Senior area chairs for area chairs (``assign-sac``), the second step large conferences run once submissions
have their area chairs (``assign --per-paper 1`` with the ACs as reviewers). A SAC's affinity to an AC is the
mean of the SAC's affinity to the AC's papers; a SAC who conflicts with any of an AC's papers, or with the AC
(``--ac-conflicts``), never oversees that AC, so every conflict on a paper reaches the SAC above it. The SAC x
AC table then goes through the same ``assign`` as reviewers do (loads, objectives, one min-cost flow)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import InputError
from .csvfile import rows
from .scores import ScoreTable


@dataclass(frozen=True)
class ChairTable:
    """The AC x SAC candidate pairs (ACs in the table's ``submissions``, SACs in its ``reviewers``) and why
    pairs were excluded: ``paper_conflicts`` through one of the AC's papers, ``direct_conflicts`` listed
    between the two; ``unscored`` (AC paper, SAC) pairs the scores file lacks, counted at its lowest score."""

    table: ScoreTable
    paper_conflicts: int
    direct_conflicts: int
    unscored: int


def read_papers(path: Path) -> dict[str, list[str]]:
    """Each area chair's submissions from an assignment CSV (``submission,reviewer[,score]``, as ``assign``
    writes it with the ACs as reviewers)."""
    papers: dict[str, list[str]] = {}
    seen: set[tuple[str, str]] = set()
    for line, (submission, ac) in _rows(path, ("submission", "reviewer"), "--papers"):
        if (submission, ac) in seen:
            raise InputError(f"{path}:{line}: the pair {submission!r}, {ac!r} appears twice")
        seen.add((submission, ac))
        papers.setdefault(ac, []).append(submission)
    if not papers:
        raise InputError(f"{path}: no assignments; write the ACs' with `embedsearch assign --per-paper 1`")
    return papers


def read_direct(path: Path) -> set[tuple[str, str]]:
    """``ac,sac`` pairs that conflict directly (an institution, a co-author)."""
    return {(ac, sac) for _, (ac, sac) in _rows(path, ("ac", "sac"), "--ac-conflicts")}


def build(scores: ScoreTable, papers: dict[str, list[str]], direct: set[tuple[str, str]] = frozenset()
          ) -> ChairTable:
    """Every (AC, SAC) pair scored by the mean of the SAC's scores on the AC's papers, conflicted when the SAC
    conflicts with one of those papers or with the AC."""
    position = {s: i for i, s in enumerate(scores.submissions)}
    missing = sorted({s for subs in papers.values() for s in subs if s not in position})
    if missing:
        raise InputError(f"--papers names {len(missing):,} submission(s) with no SAC score in --scores "
                         f"({', '.join(missing[:5])}{' ...' if len(missing) > 5 else ''}); score them against the "
                         "SACs with `embedsearch affinity --all`")
    sacs = scores.reviewers
    unknown = sorted({sac for _, sac in direct} - set(sacs)) + sorted({ac for ac, _ in direct} - set(papers))
    if unknown:
        raise InputError(f"--ac-conflicts names {unknown[0]!r}, neither a SAC in --scores nor an AC in --papers; "
                         "check the id")
    n, m = len(scores.submissions), len(sacs)
    matrix = np.full((n, m), scores.score.min())
    matrix[scores.submission, scores.reviewer] = scores.score
    known = np.zeros((n, m), bool)
    known[scores.submission, scores.reviewer] = True
    conflicted = np.zeros((n, m), bool)
    conflicted[scores.submission[scores.conflict], scores.reviewer[scores.conflict]] = True
    acs = tuple(sorted(papers))
    rows = [np.array([position[s] for s in papers[ac]]) for ac in acs]
    mean = np.stack([matrix[r].mean(axis=0) for r in rows])
    through_paper = np.stack([conflicted[r].any(axis=0) for r in rows])
    ac_position, sac_position = {ac: i for i, ac in enumerate(acs)}, {sac: j for j, sac in enumerate(sacs)}
    listed = np.zeros_like(through_paper)
    for ac, sac in direct:
        listed[ac_position[ac], sac_position[sac]] = True
    table = ScoreTable(acs, sacs, np.repeat(np.arange(len(acs)), m), np.tile(np.arange(m), len(acs)),
                       mean.ravel(), (through_paper | listed).ravel())
    return ChairTable(table, int(through_paper.sum()), int((listed & ~through_paper).sum()),
                      int(sum((~known[r]).sum() for r in rows)))



def _rows(path: Path, columns: tuple[str, str], flag: str) -> Iterator[tuple[int, tuple[str, str]]]:
    """The two named columns of each line, neither empty."""
    for line, row in rows(path, columns, flag):
        a, b = row[columns[0]], row[columns[1]]
        if not a or not b:
            raise InputError(f"{path}:{line}: empty {columns[0] if not a else columns[1]} id")
        yield line, (a, b)
