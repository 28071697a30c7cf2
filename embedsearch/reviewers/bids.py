"""Scores beside affinity: reviewers' bids and per-pair probability limits, read from CSV and joined to the
candidate pairs of a scores table. The aggregate is OpenReview's: a weighted sum of affinity and bid, bids
mapped Very High 1.0, High 0.5, Neutral 0, Low -0.5, Very Low -1.0, a missing bid 0."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ..errors import InputError
from .csvfile import rows
from .scores import ScoreTable

BIDS = {"very high": 1.0, "high": 0.5, "neutral": 0.0, "low": -0.5, "very low": -1.0, "none": 0.0}
SIGNALS = ("affinity", "bid")


def weights(text: str) -> dict[str, float]:
    """``affinity=1,bid=0.5`` as a mapping; a signal not named weighs 0, an unknown one is an error."""
    out = {name: 0.0 for name in SIGNALS}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, _, value = part.partition("=")
        if name.strip() not in SIGNALS:
            raise InputError(f"--weights {text!r}: unknown signal {name.strip()!r}; use {', '.join(SIGNALS)}")
        try:
            out[name.strip()] = float(value)
        except ValueError:
            raise InputError(f"--weights {text!r}: {part!r} needs a number, as in affinity=1,bid=1") from None
    return out


def bid_value(text: str) -> float:
    """A bid in OpenReview's words (any case, '_' or '-' for a space) or as a number in [-1, 1]."""
    word = text.strip().lower().replace("_", " ").replace("-", " ")
    if word in BIDS:
        return BIDS[word]
    value = float(word)
    if not (math.isfinite(value) and -1 <= value <= 1):
        raise ValueError(text)
    return value


def read_pair_values(path: Path, table: ScoreTable, column: str, parse, flag: str) -> tuple[np.ndarray, int]:
    """Per candidate pair of ``table``, the value ``column`` of ``path`` gives it (NaN where none), and how
    many lines name pairs that are not candidates; an unknown id, a bad value or a pair twice names its line."""
    subs = {s: i for i, s in enumerate(table.submissions)}
    revs = {r: i for i, r in enumerate(table.reviewers)}
    position = {(s, r): i for i, (s, r) in enumerate(zip(table.submission.tolist(), table.reviewer.tolist()))}
    values = np.full(len(table.score), np.nan)
    outside = 0
    for line, row in rows(path, ("submission", "reviewer", column), flag):
        s, r, text = row["submission"], row["reviewer"], row[column]
        if s not in subs:
            raise InputError(f"{path}:{line}: unknown submission {s!r} (not in --scores)")
        if r not in revs:
            raise InputError(f"{path}:{line}: unknown reviewer {r!r} (not in --scores)")
        try:
            value = parse(text)
        except ValueError:
            raise InputError(f"{path}:{line}: {column} {text!r} is not valid for {flag}") from None
        at = position.get((subs[s], revs[r]))
        if at is None:
            outside += 1
        elif not math.isnan(values[at]):
            raise InputError(f"{path}:{line}: the pair {s!r}, {r!r} appears twice")
        else:
            values[at] = value
    return values, outside


def probability(text: str) -> float:
    value = float(text)
    if not (math.isfinite(value) and 0 <= value <= 1):
        raise ValueError(text)
    return value


def aggregate(table: ScoreTable, bids: np.ndarray, weight: dict[str, float]) -> ScoreTable:
    """The table with each pair's score the weighted sum of its affinity and its bid (a missing bid 0)."""
    score = weight["affinity"] * table.score + weight["bid"] * np.nan_to_num(bids, nan=0.0)
    return ScoreTable(table.submissions, table.reviewers, table.submission, table.reviewer, score, table.conflict,
                      table.titles, table.names)


def formula(weight: dict[str, float]) -> str:
    return " + ".join(f"{weight[name]:g}*{name}" for name in SIGNALS if weight[name])
