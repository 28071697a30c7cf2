"""Merging segments: the tiered policy that decides when, and the merge itself.

As Lucene's tiered merge policy: segments fall in tiers by live size (``tier_factor`` apart, from
``floor_rows``); once ``segments_per_tier`` neighbouring segments share a tier they are merged into one,
so many small adds leave a handful of segments and each document is rewritten about once per tier.
A segment whose deleted share passes ``max_deleted_share`` is rewritten without its deleted rows.
No automatic merge writes more than ``max_merged_rows`` rows (a merge holds them in memory), so the
40 segments of a 10M streamed build are left as they are; ``compact`` merges everything when asked.
Merges keep corpus order (only neighbouring segments are merged) and never re-embed or re-tokenise."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import filters as flt
from .. import lexical as lex
from ..corpus import Document
from ..errors import CorruptIndexError, InputError
from . import segment as seg
from .check import checksums
from .snapshot import Snapshot


@dataclass(frozen=True)
class MergePolicy:
    """When segments merge by themselves after a commit (defaults measured in benchmarks/segments_bench.py)."""

    segments_per_tier: int = 8
    tier_factor: int = 10
    floor_rows: int = 1_000
    max_deleted_share: float = 0.25
    max_merged_rows: int = 1_000_000  # a merge holds its rows' vectors and postings in memory

    def __post_init__(self) -> None:
        if self.segments_per_tier < 2:
            raise InputError(f"segments_per_tier must be at least 2, got {self.segments_per_tier}")
        if self.tier_factor < 2 or self.floor_rows < 1:
            raise InputError("tier_factor must be at least 2 and floor_rows at least 1")
        if not 0 < self.max_deleted_share <= 1:
            raise InputError(f"max_deleted_share must be in (0, 1], got {self.max_deleted_share}")
        if self.max_merged_rows < 1:
            raise InputError(f"max_merged_rows must be at least 1, got {self.max_merged_rows}")

    def tier(self, live: int) -> int:
        return int(math.log(max(live, self.floor_rows) / self.floor_rows, self.tier_factor))


def plan(snapshot: Snapshot, policy: MergePolicy) -> list[list[int]]:
    """Runs of neighbouring segment positions to merge now (empty when the index is in shape)."""
    entries = snapshot.generation["segments"]
    live = [e["rows"] - e.get("deleted", 0) for e in entries]
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
        if position not in merged and entry.get("deleted", 0) > policy.max_deleted_share * entry["rows"] \
                and live[position] <= policy.max_merged_rows:
            groups.append([position])
    return sorted(groups)


def merge(snapshot: Snapshot, positions: list[int]) -> dict[str, Any] | None:
    """Write one segment holding the live rows of the segments at ``positions`` (in order); None when
    none of them has a live row left. Every file read is first verified against its checksum."""
    for p in positions:
        damaged = checksums(snapshot.root, snapshot.manifest, snapshot.generation["segments"][p])
        if damaged:
            raise CorruptIndexError(f"{damaged[0]}; the merge was refused and nothing was written (restore the "
                                    f"segment from a backup, or rebuild the index)")
    chosen = [(snapshot.segments[p], snapshot.live[p]) for p in positions]
    matrix = np.concatenate([np.asarray(s.embeddings if m is None else s.embeddings[m]) for s, m in chosen])
    if len(matrix) == 0:
        return None
    lexical = lex.LexicalSettings(**snapshot.manifest.get("lexical", {}))
    return seg.write(snapshot.root, _documents(chosen), matrix,
                     seg.vector_writer(snapshot.manifest, snapshot.segments, matrix), lexical,
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
