"""Merging segments: the tiered policy that decides when, and the merge itself.

As Lucene's tiered merge policy: segments fall in tiers by live size (``tier_factor`` apart, from
``floor_rows``); once ``segments_per_tier`` neighbouring segments share a tier they are merged into one,
so many small adds leave a handful of segments and each document is rewritten about once per tier.
A segment whose deleted share passes ``max_deleted_share`` is rewritten without its deleted rows.
No automatic merge writes more than ``max_merged_rows`` rows (a merge holds them in memory), so the
40 segments of a 10M streamed build are left as they are; ``compact`` merges everything when asked.
Merges keep corpus order (only neighbouring segments are merged) and never re-embed or re-tokenise."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ..corpus import Document
from ..errors import CorruptIndexError
from . import filters as flt
from . import lexical as lex
from . import segment as seg
from .check import checksums
from .generation import SegmentEntry
from .settings import MergePolicy
from .snapshot import Snapshot


def plan(snapshot: Snapshot, policy: MergePolicy) -> list[list[int]]:
    """Runs of neighbouring segment positions to merge now (empty when the index is in shape)."""
    entries = snapshot.generation.segments
    live = [e.live for e in entries]
    groups: list[list[int]] = []
    run: list[int] = []
    for position in range(len(entries) + 1):
        same = position < len(entries) and run and policy.tier(live[position]) == policy.tier(live[run[0]])
        if same:
            run.append(position)
            continue
        if len(run) >= policy.segments_per_tier and sum(live[p] for p in run) <= policy.max_merged_rows:
            groups.append(run)
        run = [position] if position < len(entries) else []
    merged = {p for g in groups for p in g}
    for position, entry in enumerate(entries):
        if position not in merged and entry.deleted > policy.max_deleted_share * entry.rows \
                and live[position] <= policy.max_merged_rows:
            groups.append([position])
    return sorted(groups)


def merge(snapshot: Snapshot, positions: list[int]) -> SegmentEntry | None:
    """Write one segment holding the live rows of the segments at ``positions`` (in order); None when
    none of them has a live row left. Every file read is first verified against its checksum."""
    for p in positions:
        damaged = checksums(snapshot.root, snapshot.manifest, snapshot.generation.segments[p])
        if damaged:
            raise CorruptIndexError(f"{damaged[0]}; the merge was refused and nothing was written (restore the "
                                    f"segment from a backup, or rebuild the index)")
    chosen = [(snapshot.segments[p], snapshot.live[p]) for p in positions]
    matrix = np.concatenate([np.asarray(s.embeddings if m is None else s.embeddings[m]) for s, m in chosen])
    if len(matrix) == 0:
        return None
    lexical = snapshot.manifest.lexical
    return seg.write(snapshot.root, _documents(chosen), matrix,
                     seg.vector_writer(snapshot.manifest.vectors, snapshot.segments, matrix), lexical,
                     write_lexical=lambda folder: lex.merge([(s.postings, _mask(s, m)) for s, m in chosen], folder,
                                                            lexical),
                     write_metadata=lambda folder: flt.merge([(s.folder, m) for s, m in chosen], folder))


def _documents(chosen) -> Iterator[Document]:
    for segment, live in chosen:
        for row, doc in enumerate(segment.documents):
            if live is None or live[row]:
                yield doc


def _mask(segment, live: np.ndarray | None) -> np.ndarray:
    return np.ones(segment.rows, dtype=bool) if live is None else live
