"""The scores file between ``affinity`` and ``assign``: a CSV with the header ``submission,reviewer,score``
(openreview-expertise's format), optionally a ``conflict`` column (non-empty: the pair is conflicted) and, for
the chair who reads it, ``submission title`` and ``reviewer name`` columns. Read back as arrays of candidate
pairs, every line checked, with the titles and names it carries."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import numpy as np

from ..errors import InputError
from ..disk.csvout import Writer
from .affinity import Affinity
from .csvfile import rows

HEADER = ("submission", "reviewer", "score")


@dataclass(frozen=True, eq=False)
class ScoreTable:
    """Candidate pairs by position: ``submission[i]`` and ``reviewer[i]`` index ``submissions`` and
    ``reviewers``; ``conflict[i]`` marks a pair never to assign."""

    submissions: tuple[str, ...]
    reviewers: tuple[str, ...]
    submission: np.ndarray
    reviewer: np.ndarray
    score: np.ndarray
    conflict: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    titles: dict[str, str] = field(default_factory=dict)  # submission id -> title, where the file gives one
    names: dict[str, str] = field(default_factory=dict)  # reviewer id -> name, where the file gives one

    def with_conflicts(self, pairs: Iterable[tuple[int, int]]) -> ScoreTable:
        """The same table with ``(submission, reviewer)`` position pairs marked conflicted."""
        wanted = set(pairs)
        marked = self.conflict | np.fromiter(((s, r) in wanted for s, r in zip(self.submission.tolist(),
                                                                               self.reviewer.tolist())),
                                             dtype=bool, count=len(self.submission))
        return ScoreTable(self.submissions, self.reviewers, self.submission, self.reviewer, self.score, marked,
                          self.titles, self.names)


def write(fh: TextIO, pairs: Iterable[Affinity], titles: dict[str, str] | None = None,
          names: dict[str, str] | None = None) -> int:
    """Write pairs as CSV to an open text file (the ``conflict`` reason as a fourth column, then each
    submission's title and reviewer's name where known); returns how many."""
    count = 0
    titles, names = titles or {}, names or {}
    out = Writer(fh)
    out.row([*HEADER, "conflict", "submission title", "reviewer name"])
    for pair in pairs:
        out.row([pair.submission, pair.reviewer, round(pair.score, 6), pair.conflict or "",
                 titles.get(pair.submission, ""), names.get(pair.reviewer, "")])
        count += 1
    return count


def reviewer_name(reviewer: str) -> str:
    """A reviewer's name where the id spells it (an OpenReview profile id: ``~Ada_Lovelace1`` is Ada Lovelace)."""
    if reviewer.startswith("~") and len(reviewer) > 1:
        return reviewer[1:].rstrip("0123456789").replace("_", " ").strip()
    return ""


def read(path: Path) -> ScoreTable:
    """A scores CSV as a table; a missing column, an empty id, a score that is not a finite number or a pair
    given twice is an error naming the line."""
    subs: dict[str, int] = {}
    revs: dict[str, int] = {}
    s_idx, r_idx, values, conflicts, seen = [], [], [], [], set()
    titles: dict[str, str] = {}
    names: dict[str, str] = {}
    for line, row in rows(path, HEADER, "--scores", f"{','.join(HEADER)} (as `embedsearch affinity` writes it)",
                          ("conflict", "submission title", "reviewer name")):
        s, r, text = (row[c] for c in HEADER)
        if row["submission title"]:
            titles.setdefault(s, row["submission title"])
        if row["reviewer name"]:
            names.setdefault(r, row["reviewer name"])
        if not s or not r:
            raise InputError(f"{path}:{line}: empty {'submission' if not s else 'reviewer'} id")
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            raise InputError(f"{path}:{line}: score {text!r} is not a finite number")
        key = (subs.setdefault(s, len(subs)), revs.setdefault(r, len(revs)))
        if key in seen:
            raise InputError(f"{path}:{line}: the pair {s!r}, {r!r} appears twice")
        seen.add(key)
        s_idx.append(key[0])
        r_idx.append(key[1])
        values.append(value)
        conflicts.append(bool(row["conflict"]))
    if not values:
        raise InputError(f"{path}: no scores; write them with `embedsearch affinity`")
    return ScoreTable(tuple(subs), tuple(revs), np.asarray(s_idx, np.int64), np.asarray(r_idx, np.int64),
                      np.asarray(values, np.float64), np.asarray(conflicts, bool), titles, names)
