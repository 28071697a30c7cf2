"""Conflicts of interest: from authors when both sides carry them (``ConflictSettings`` states the rule), and
from a ``submission,reviewer`` CSV a chair keeps. A conflicted pair is marked in the scores and never assigned."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..corpus import Document
from ..errors import InputError
from .csvfile import rows
from .profiles import Reviewers
from .settings import ConflictSettings


def name_key(name: str) -> str:
    """An author's name compared without case, accents, punctuation or spacing: "José  Pérez-Li" is "jose perez li"."""
    plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    return " ".join(re.sub(r"[^a-z0-9]+", " ", plain.casefold()).split())


def authors_of(doc: Document) -> list[str]:
    """The author names a record carries (``authors`` as a list, or one text separated by commas or "and")."""
    value: Any = doc.metadata.get("authors")
    if isinstance(value, str):
        value = re.split(r",|;|\band\b", value)
    names = value if isinstance(value, list) else []
    return [key for key in (name_key(str(n)) for n in names) if key]


def _year(doc: Document) -> int | None:
    value = doc.metadata.get("year")
    try:
        return int(value) if value not in (None, "") and not isinstance(value, bool) else None
    except (TypeError, ValueError):
        return None


def from_authors(submissions: Sequence[Document], reviewers: Reviewers,
                 settings: ConflictSettings = ConflictSettings()) -> dict[tuple[int, int], str]:
    """Pairs ``(submission row, reviewer position)`` that conflict, with the reason, by the rule of
    ``ConflictSettings``: the submission names the reviewer, or a co-author of the reviewer's recent papers."""
    by_author: dict[str, list[int]] = {}
    for row, doc in enumerate(submissions):
        for key in authors_of(doc):
            by_author.setdefault(key, []).append(row)
    out: dict[tuple[int, int], str] = {}
    for position, rid in enumerate(reviewers.ids):
        papers = reviewers.of(position)
        own = _own_name(papers, rid)
        for row in by_author.get(own, []) if own else []:
            out[(row, position)] = f"the submission names the reviewer ({own})"
        years = [y for y in (_year(p) for p in papers) if y is not None]
        since = max(years) - settings.years if years else None
        for paper in papers:
            if since is not None and (_year(paper) or since) < since:
                continue
            for key in set(authors_of(paper)) - {own}:
                for row in by_author.get(key, []):
                    out.setdefault((row, position), f"co-author of the reviewer on {paper.id!r} ({key})")
    return out


def _own_name(papers: Sequence[Document], reviewer: str) -> str | None:
    """The reviewer's name: given with their publications (``name``), else read from an OpenReview profile id
    (``~Cy_Diaz1``), else the one author on most of their publications (none when two tie)."""
    given = next((name_key(str(p.metadata["name"])) for p in papers if p.metadata.get("name")), None)
    profile = re.fullmatch(r"~([^\W\d_][\w.-]*?)\d*", reviewer)
    if given or profile:
        return given or name_key(profile.group(1).replace("_", " "))
    counts = Counter(key for p in papers for key in set(authors_of(p))).most_common(2)
    if not counts or counts[0][1] * 2 < len(papers) or (len(counts) > 1 and counts[1][1] == counts[0][1]):
        return None
    return counts[0][0]


def read_pairs(path: Path, submissions: Sequence[str], reviewers: Sequence[str]) -> dict[tuple[int, int], str]:
    """A chair's conflicts file (header ``submission,reviewer``): each pair by position, or an error naming
    the line of an id neither side has."""
    positions = {s: i for i, s in enumerate(submissions)}
    cols = {r: i for i, r in enumerate(reviewers)}
    out = {}
    for line, row in rows(path, ("submission", "reviewer"), "--conflicts"):
        s, r = row["submission"], row["reviewer"]
        if s not in positions:
            raise InputError(f"{path}:{line}: unknown submission {s!r}; check the id")
        if r not in cols:
            raise InputError(f"{path}:{line}: unknown reviewer {r!r}; check the id")
        out[(positions[s], cols[r])] = f"listed in {path.name}"
    return out
