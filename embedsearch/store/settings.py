"""How an index is kept on disk: the merge policy and the store's own settings (recorded in the manifest)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import InputError

GRACE_SECONDS = 600.0


@dataclass(frozen=True)
class MergePolicy:
    """When segments merge by themselves after a commit (defaults measured in benchmarks/segments_bench.py)."""

    segments_per_tier: int = 8
    tier_factor: int = 10
    floor_rows: int = 1_000
    max_deleted_share: float = 0.25
    max_merged_rows: int = 1_000_000  # a commit's own merges stay short; `compact` merges larger ones

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


@dataclass(frozen=True)
class StoreSettings:
    """How an index is kept on disk: the merge policy, how long superseded generations stay for readers
    (``grace_seconds``), the largest segment a build writes at once (bounds its memory), the largest one
    ``compact`` merges into (``max_segment_rows``), and the buffer a merge streams vectors and postings
    through (``merge_buffer_mb``: its memory, whatever the corpus)."""

    merge: MergePolicy = MergePolicy()
    grace_seconds: float = GRACE_SECONDS
    segment_rows: int = 250_000
    max_segment_rows: int = 2_500_000
    merge_buffer_mb: int = 256

    def __post_init__(self) -> None:
        if self.grace_seconds < 0 or self.segment_rows < 1:
            raise InputError("grace_seconds must be >= 0 and segment_rows >= 1")
        if self.max_segment_rows < 1 or self.merge_buffer_mb < 1:
            raise InputError("max_segment_rows and merge_buffer_mb must be at least 1")
