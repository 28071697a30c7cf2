"""The posting loops of ``postings_loops`` compiled by numba, each posting visited once; imported only
by the queries that read enough postings to pay for importing numba. Machine code is cached on disk
(``cache=True``), so only a process's first call loads it."""

from __future__ import annotations

import numba
import numpy as np

jit = numba.njit(cache=True, nogil=True)
inline = numba.njit(cache=True, nogil=True, inline="always")  # no call (nor array reference counts) a posting


@inline
def sift(values, rows, size):
    """Restore the min-heap from its root down after the root was replaced."""
    i = 0
    while True:
        small, left, right = i, 2 * i + 1, 2 * i + 2
        if left < size and values[left] < values[small]:
            small = left
        if right < size and values[right] < values[small]:
            small = right
        if small == i:
            return
        values[i], values[small] = values[small], values[i]
        rows[i], rows[small] = rows[small], rows[i]
        i = small


@inline
def offer(values, rows, size, k, value, row):
    """Keep the k best in a min-heap; returns the new size."""
    if size < k:
        i = size
        values[i], rows[i] = value, row
        while i > 0 and values[(i - 1) // 2] > values[i]:
            parent = (i - 1) // 2
            values[i], values[parent] = values[parent], values[i]
            rows[i], rows[parent] = rows[parent], rows[i]
            i = parent
        return size + 1
    if value > values[0]:
        values[0], rows[0] = value, row
        sift(values, rows, size)
    return size


@inline
def add(partial, lengths, row, tf, k1, b, average, idf):
    """``postings_loops.contribution`` for one posting, added to the row's partial score."""
    norm = k1 * ((1 - b) + b * lengths[row] / average)
    partial[row] += np.float32(np.float32(idf) * tf / (norm + tf))
    return partial[row]


@jit
def read(rows, tf, lengths, k1, b, average, idf, partial, eligible, k):
    values, best = np.empty(k, np.float64), np.empty(k, np.int64)
    size, check = 0, len(eligible) > 0
    for i in range(len(rows)):
        row = rows[i]
        value = add(partial, lengths, row, tf[i], k1, b, average, idf)
        if (not check or eligible[row]) and (size < k or value > values[0]):
            size = offer(values, best, size, k, value, row)
    return values[:size], best[:size]


@jit
def running(partial, eligible, floor):
    out, n, check = np.empty(len(partial), np.int64), 0, len(eligible) > 0
    floor = max(floor, np.nextafter(0.0, 1.0))  # a row no term reached is never running
    for row in range(len(partial)):  # without a branch: half the rows may be running, at random
        out[n] = row
        n += (partial[row] >= floor) & (not check or eligible[row])
    return out[:n]


@jit
def look_up(running, floor, held, tf, lengths, k1, b, average, idf, partial, k):
    values, best = np.empty(k, np.float64), np.empty(k, np.int64)
    kept = np.empty(len(running), np.int64)
    size, n, j = 0, 0, 0
    for i in range(len(running)):
        row = running[i]
        if partial[row] < floor:
            continue
        kept[n] = row
        n += 1
        step = 1  # gallop forward from the last place, then search between the last two probes
        while j + step < len(held) and held[j + step] < row:
            step *= 2
        j = j + np.searchsorted(held[j:min(j + step + 1, len(held))], row)
        if j < len(held) and held[j] == row:
            value = add(partial, lengths, row, tf[j], k1, b, average, idf)
            if size < k or value > values[0]:
                size = offer(values, best, size, k, value, row)
    return kept[:n], values[:size], best[:size]
