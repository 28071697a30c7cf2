"""A phrase's positions intersected by numba, for phrases of common words (``words.Words.phrase_rows``): each
loop walks a word's postings once beside the sorted phrase starts, reading a row's positions only where a
start lies in it, so no array of every occurrence is made. Imported only by phrases whose candidates are
many enough to pay for importing numba; machine code is cached on disk (``cache=True``)."""

from __future__ import annotations

import numba
import numpy as np

jit = numba.njit(cache=True, nogil=True)


@jit
def starts_of(wanted, rows, counts, positions, lag):
    """Every place the word (its ``rows``, ``counts`` and ``positions``) has in the ascending rows ``wanted``,
    less ``lag`` (where the phrase would begin; places before ``lag`` left out), as ``row << 32 | place``."""
    total, e, at = 0, 0, 0
    for row in wanted:
        while rows[e] < row:
            at += counts[e]
            e += 1
        total += counts[e]
    out = np.empty(total, np.int64)
    size, e, at = 0, 0, 0
    for row in wanted:
        while rows[e] < row:
            at += counts[e]
            e += 1
        for x in range(at, at + counts[e]):
            if positions[x] >= lag:
                out[size] = (np.int64(row) << 32) | (np.int64(positions[x]) - lag)
                size += 1
    return out[:size]


@jit
def follow(starts, offset, rows, counts, positions):
    """Which ``starts`` (ascending ``row << 32 | place``) have the word ``offset`` places after them."""
    keep = np.zeros(len(starts), np.bool_)
    e, at, n = 0, 0, len(rows)
    for j in range(len(starts)):
        row, place = starts[j] >> 32, (starts[j] & 0xFFFFFFFF) + offset
        while e < n and rows[e] < row:
            at += counts[e]
            e += 1
        if e < n and rows[e] == row:
            for x in range(at, at + counts[e]):
                if positions[x] >= place:
                    keep[j] = positions[x] == place
                    break
    return keep
