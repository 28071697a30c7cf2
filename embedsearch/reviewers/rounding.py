"""Bipartite dependent rounding (Gandhi, Khuller, Parthasarathy, Srinivasan, J. ACM 2006): a fractional
assignment becomes one assignment drawn so that each pair is chosen with exactly its probability, each
submission keeps its exact number of reviewers and each reviewer's load lands on the floor or ceiling of its
expected load. The fractional values are whole units of ``1 / scale``, so the arithmetic is exact."""

from __future__ import annotations

import random

import numpy as np

from . import progress


def sample(s_idx: np.ndarray, r_idx: np.ndarray, units: np.ndarray, scale: int, seed: int) -> np.ndarray:
    """Which pairs one draw chooses (a boolean per pair) from pair probabilities ``units / scale``."""
    n = int(s_idx.max()) + 1 if len(s_idx) else 0
    x = [int(u) for u in units]
    ends = list(zip(s_idx.tolist(), (r_idx + n).tolist()))
    adj: dict[int, set[int]] = {}
    for e, (a, b) in enumerate(ends):
        if 0 < x[e] < scale:
            adj.setdefault(a, set()).add(e)
            adj.setdefault(b, set()).add(e)
    rng = random.Random(seed)
    fractional = sum(1 for u in x if 0 < u < scale)
    progress.step(f"drawing one assignment from {fractional:,} fractional pairs")
    note, whole, shown = progress.noter(), 0, 0
    while adj:
        whole += _step(adj, ends, x, scale, rng)
        if whole - shown >= 10_000:
            note(f"{whole:,} of {fractional:,} pairs decided")
            shown = whole
    return np.asarray(x, np.int64) == scale


def _step(adj: dict[int, set[int]], ends: list[tuple[int, int]], x: list[int], scale: int,
          rng: random.Random) -> int:
    """Walk fractional edges from some vertex until a cycle closes (round it, keep walking from where it
    closed) or the walk is a maximal path (round it); how many edges became whole."""
    start = next(iter(adj))
    verts, edges, at = [start], [], {start: 0}
    turned, done = False, 0
    while True:
        v = verts[-1]
        came = edges[-1] if edges else None
        nxt = next((e for e in adj.get(v, ()) if e != came), None)
        if nxt is None:
            if not edges:
                return done
            if turned:
                return done + _round(edges, adj, ends, x, scale, rng)
            verts, edges, at, turned = [v], [], {v: 0}, True  # a dead end: walk back from it
            continue
        a, b = ends[nxt]
        w = b if a == v else a
        if w in at:
            p = at[w]
            done += _round(edges[p:] + [nxt], adj, ends, x, scale, rng)
            for u in verts[p + 1:]:
                del at[u]
            verts, edges = verts[:p + 1], edges[:p]
            if not adj:
                return done
            continue
        at[w] = len(verts)
        verts.append(w)
        edges.append(nxt)


def _round(path: list[int], adj: dict[int, set[int]], ends: list[tuple[int, int]], x: list[int], scale: int,
           rng: random.Random) -> int:
    """Shift alternate edges of ``path`` (a cycle or a maximal path) up and down by the same amount, until
    one becomes whole: up with probability beta / (alpha + beta), so every edge's expectation is unchanged."""
    odd, even = path[0::2], path[1::2]
    alpha = min(min(scale - x[e] for e in odd), min((x[e] for e in even), default=scale))
    beta = min(min(x[e] for e in odd), min((scale - x[e] for e in even), default=scale))
    shift = alpha if rng.random() * (alpha + beta) < beta else -beta
    done = 0
    for k, e in enumerate(path):
        x[e] += shift if k % 2 == 0 else -shift
        if x[e] in (0, scale):
            done += 1
            for v in ends[e]:
                edges = adj[v]
                edges.discard(e)
                if not edges:
                    del adj[v]
    return done
