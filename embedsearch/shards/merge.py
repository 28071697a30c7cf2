"""The ingress's side of a sharded search: merge each shard's candidates into one ranking equal to that of a
single index over every shard's documents. It takes the global dense and lexical top ``depth`` from the
shards' lists (the dense one cut from their shortlists as ``vectors.best`` cuts one index's segments'), then
fuses over their union, each signal divided by its best over all shards, exactly as ``retrieval.search.fuse``
does for one index. Ties (equal scores) go to the lower shard, then row."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..corpus import Document
from ..errors import InputError
from ..retrieval.search import MODES, Hit, Ranked, SearchSettings, band, check_k, check_query, fuse
from ..store.vectors import Shortlisted, best
from .shard import Candidate


@dataclass(frozen=True)
class Placed:
    """A merged result: the shard and row it came from, and its ranking with the evidence."""

    shard: int
    ranked: Ranked


def request(query: str, k: int, mode: str | None, settings: SearchSettings) -> tuple[str, str]:
    """A search's query and mode checked as one index checks them (``mode`` None: the settings' own)."""
    check_k(k)
    mode = mode or settings.mode
    if mode not in MODES:
        raise InputError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
    return check_query(query), mode


def depth(k: int, mode: str, settings: SearchSettings) -> int:
    """How many candidates each shard offers per signal: what one index takes before fusing."""
    return k if mode != "hybrid" else max(k, settings.candidates)


def merge(offered: Sequence[Sequence[Candidate]], k: int, mode: str, settings: SearchSettings) -> list[Placed]:
    """One ranking of ``k`` from every shard's candidates (``offered[s]`` is shard ``s``'s)."""
    pool = [(s, c) for s, candidates in enumerate(offered) for c in candidates]
    key = {(s, c.row): i for i, (s, c) in enumerate(pool)}
    if mode == "dense":
        return [Placed(s, Ranked(c.row, c.dense, c.cosine, None)) for s, c in nearest(pool, k)]
    lexical = sorted((p for p in pool if p[1].lexical), key=lambda p: (-p[1].bm25, p[0], p[1].row))
    if mode == "lexical":
        return [Placed(s, Ranked(c.row, c.bm25, c.cosine, c.bm25)) for s, c in lexical[:k]]
    wanted = depth(k, mode, settings)
    dense = nearest(pool, wanted)
    chosen = {(s, c.row) for s, c in dense} | {(s, c.row) for s, c in lexical[:wanted]}
    order = sorted(chosen, key=key.__getitem__)
    position = {place: i for i, place in enumerate(order)}
    cosine = np.asarray([pool[key[p]][1].cosine for p in order])
    bm25 = np.asarray([pool[key[p]][1].bm25 for p in order])
    fused = fuse([(position[(s, c.row)], c.dense) for s, c in dense],
                 [(position[(s, c.row)], c.bm25) for s, c in lexical[:wanted]],
                 lambda rows: cosine[rows], lambda rows: bm25[rows], k, settings)
    return [Placed(order[r.row][0], Ranked(order[r.row][1], r.score, r.cosine, r.bm25)) for r in fused]


def nearest(pool: Sequence[tuple[int, Candidate]], k: int) -> list[tuple[int, Candidate]]:
    """The dense top ``k`` of every shard's shortlist, as ``vectors.best`` takes it over one index's segments."""
    shortlisted = {(s, c.row): (s, c) for s, c in pool if c.dense is not None}
    return [shortlisted[key] for key, _, _ in best([Shortlisted(key, c.approximate, c.dense) for key, (_, c) in
                                                   shortlisted.items()], k)]


def without(offered: Sequence[Sequence[Candidate]], skip: tuple[int, int] | None) -> list[Sequence[Candidate]]:
    """Each shard's candidates, less the row ``skip`` = ``(shard, row)`` (the paper a "similar" asks about)."""
    return [[c for c in found if (s, c.row) != skip] for s, found in enumerate(offered)]


def hits_of(placed: Sequence[Placed], fetch: Sequence, bands: tuple[float, float]) -> list[Hit]:
    """Hits for merged results, each document fetched from its shard (``fetch[s](rows)``), in rank order."""
    documents: dict[tuple[int, int], Document] = {}
    for s in sorted({p.shard for p in placed}):
        rows = [p.ranked.row for p in placed if p.shard == s]
        documents.update({(s, r): d for r, d in zip(rows, fetch[s](rows))})
    out = []
    for rank, p in enumerate(placed, start=1):
        doc, r = documents[(p.shard, p.ranked.row)], p.ranked
        out.append(Hit(rank, doc.id, r.score, doc.title, doc.text, doc.metadata, r.cosine, r.bm25, band(r.cosine, bands)))
    return out
