"""Merging segments: the tiered policy that decides when, and the merge itself.

As Lucene's tiered merge policy: segments fall in tiers by live size (``tier_factor`` apart, from
``floor_rows``); once ``segments_per_tier`` neighbouring segments share a tier they are merged into one,
so many small adds leave a handful of segments and each document is rewritten about once per tier.
A segment whose deleted share passes ``max_deleted_share`` is rewritten without its deleted rows.
A merge streams its vectors and postings in bounded memory (``merging``); still, no automatic merge writes
more than ``max_merged_rows`` rows, so a commit never waits on rewriting millions of documents: the 40
segments of a 10M streamed build are left as they are until ``compact`` merges them into segments of at
most ``StoreSettings.max_segment_rows``.
Merges keep corpus order (only neighbouring segments are merged) and never re-embed or re-tokenise."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ..corpus import Document
from ..errors import CorruptIndexError
from . import metadata
from . import segment as seg
from .check import checksums
from .generation import SegmentEntry
from .files import EMBEDDINGS
from .merge_streams import copy_live_rows, merge_postings
from .npy import NpyRows
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


def compaction(snapshot: Snapshot, max_rows: int) -> list[list[int]]:
    """What ``compact`` merges: runs of neighbouring segments of at most ``max_rows`` live rows together (a
    larger segment alone), each run rewritten without its deleted rows (and its files verified). A segment
    alone with nothing deleted is already compact: it is left as it is, not copied."""
    groups: list[list[int]] = []
    total = 0
    for position, entry in enumerate(snapshot.generation.segments):
        if groups and total + entry.live <= max_rows:
            groups[-1].append(position)
            total += entry.live
        else:
            groups.append([position])
            total = entry.live
    entries = snapshot.generation.segments
    return [g for g in groups if len(g) > 1 or entries[g[0]].deleted]


def merge(snapshot: Snapshot, positions: list[int]) -> SegmentEntry | None:
    """Write one segment holding the live rows of the segments at ``positions`` (in order); None when
    none of them has a live row left. Every file read is first verified against its checksum. Vectors and
    postings stream through ``merging`` in memory bounded by ``StoreSettings.merge_buffer_mb``."""
    for p in positions:
        damaged = checksums(snapshot.root, snapshot.manifest, snapshot.generation.segments[p])
        if damaged:
            raise CorruptIndexError(f"{damaged[0]}; the merge was refused and nothing was written (restore the "
                                    f"segment from a backup, or rebuild the index)")
    chosen = [(snapshot.segments[p], snapshot.live[p]) for p in positions]
    if sum(s.rows if m is None else int(m.sum()) for s, m in chosen) == 0:
        return None
    manifest = snapshot.manifest
    budget = manifest.store.merge_buffer_mb << 20

    def write_vectors(file: Path) -> str:
        matrix = NpyRows(file.parent / EMBEDDINGS)
        return seg.vector_writer(manifest.vectors, snapshot.segments, matrix, merged=True)(file)

    return seg.write(snapshot.root, _documents(chosen), None, write_vectors, manifest.lexical,
                     write_embeddings=lambda file: copy_live_rows([(s.folder / EMBEDDINGS, m) for s, m in chosen],
                                                                  file, budget),
                     write_lexical=lambda folder: merge_postings([(s.folder, m) for s, m in chosen], folder,
                                                                 manifest.lexical, budget),
                     write_metadata=lambda folder: metadata.merge([(s.folder, m) for s, m in chosen], folder,
                                                                  [s.fields for s, _ in chosen]),
                     model=manifest.model.settings.model)


def _documents(chosen) -> Iterator[Document]:
    for segment, live in chosen:
        for row, doc in enumerate(segment.documents):
            if live is None or live[row]:
                yield doc


