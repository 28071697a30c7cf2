"""The posting loops of ``maxscore``: add one term's BM25 score to the documents holding it (all of them,
or the running ones only), reporting the ``k`` best partial scores it left among them, and fix the running
documents. Here in numpy; in ``postings_compiled`` compiled by numba, each posting visited once (5-30 ns,
bound by memory, where numpy's passes cost about 36 ns a posting). numba comes with umap-learn but costs
0.6 s to import, so a query takes the compiled loops only when it reads more than ``COMPILED_FROM``
postings. Both compute a contribution as ``contribution`` does, to the bit (``maxscore`` re-scores its
survivors with it anyway)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

COMPILED_FROM = 1 << 20  # postings a query reads before the compiled loops pay for importing numba


class Best(NamedTuple):
    """Up to ``k`` (partial score, physical row) pairs, best first not guaranteed."""

    values: np.ndarray
    rows: np.ndarray


class Scoring(NamedTuple):
    """What a contribution needs besides the posting: BM25's parameters, the average length, the idf."""

    k1: float
    b: float
    average: float
    idf: float


def contribution(lengths: np.ndarray, rows: np.ndarray, tf: np.ndarray, s: Scoring) -> np.ndarray:
    """One term's BM25 score in each of ``rows`` (below the idf), as ``add`` below computes it for one."""
    norm = s.k1 * ((1 - s.b) + s.b * lengths[rows] / s.average)
    return (s.idf * tf / (norm + tf)).astype(np.float32)


def _best(values: np.ndarray, rows: np.ndarray, k: int) -> Best:
    if len(values) > k:
        keep = np.argpartition(values, len(values) - k)[len(values) - k:]
        values, rows = values[keep], rows[keep]
    return Best(values.astype(np.float64), rows.astype(np.int64))


def read_numpy(rows: np.ndarray, tf: np.ndarray, lengths: np.ndarray, s: Scoring, partial: np.ndarray,
               eligible: np.ndarray, k: int) -> Best:
    """Add the term to every row holding it; the k best eligible rows it touched (``eligible`` empty:
    every row is)."""
    rows, tf = np.asarray(rows), np.asarray(tf)
    partial[rows] += contribution(lengths, rows, tf, s)
    if len(eligible):
        rows = rows[eligible[rows]]
    return _best(partial[rows], rows, k)


def running_numpy(partial: np.ndarray, eligible: np.ndarray, floor: float) -> np.ndarray:
    """The eligible rows (ascending) some term reached, with a partial score from ``floor`` up."""
    held = (partial > 0) & (partial >= floor)
    return np.flatnonzero(held & eligible if len(eligible) else held)


def look_up_numpy(running: np.ndarray, floor: float, held: np.ndarray, tf: np.ndarray, lengths: np.ndarray,
                  s: Scoring, partial: np.ndarray, k: int) -> tuple[np.ndarray, Best]:
    """Drop the ``running`` rows (ascending) whose partial score is below ``floor``, add the term to those
    left that hold it (found in ``held``, ascending); the rows left, and the k best of those it touched."""
    running = running[partial[running] >= floor]
    at = np.searchsorted(held, running.astype(held.dtype, copy=False))  # one type: the list is not copied
    found = at < len(held)
    found[found] = held[at[found]] == running[found]
    rows = running[found]
    partial[rows] += contribution(lengths, rows, np.asarray(tf[at[found]]), s)
    return running, _best(partial[rows], rows, k)


def _compiled():
    from . import postings_compiled

    return postings_compiled


def read_compiled(rows: np.ndarray, tf: np.ndarray, lengths: np.ndarray, s: Scoring, partial: np.ndarray,
                  eligible: np.ndarray, k: int) -> Best:
    return Best(*_compiled().read(rows, tf, lengths, *s, partial, eligible, k))


def running_compiled(partial: np.ndarray, eligible: np.ndarray, floor: float) -> np.ndarray:
    return _compiled().running(partial, eligible, floor)


def look_up_compiled(running: np.ndarray, floor: float, held: np.ndarray, tf: np.ndarray, lengths: np.ndarray,
                     s: Scoring, partial: np.ndarray, k: int) -> tuple[np.ndarray, Best]:
    running, values, best = _compiled().look_up(running, floor, held, tf, lengths, *s, partial, k)
    return running, Best(values, best)
