"""The store's settings, all recorded in the manifest: how an index is kept on disk (the merge policy and
``StoreSettings``), its BM25 postings (``LexicalSettings``) and its vector index (``VectorSettings``)."""

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


@dataclass(frozen=True)
class LexicalSettings:
    """BM25 parameters and text processing (tuned on SciFact's train split, see benchmarks)."""

    k1: float = 1.2
    b: float = 0.6
    method: str = "lucene"
    stemmer: str | None = "english"
    stopwords: bool = True
    title_weight: int = 2

    def __post_init__(self) -> None:
        if self.method != "lucene":
            raise InputError(f"BM25 method {self.method!r} is not supported; use 'lucene'")
        if self.k1 < 0 or not 0 <= self.b <= 1:
            raise InputError(f"BM25 needs k1 >= 0 and 0 <= b <= 1, got k1={self.k1}, b={self.b}")
        if self.title_weight < 0:
            raise InputError(f"title_weight must be >= 0, got {self.title_weight}")

INDEX_TYPES = ("auto", "flat", "hnsw", "ivfpq")  # "auto", then the backends of ``vectors``
IVF_CODECS = ("auto", "pq", "sq8")


@dataclass(frozen=True)
class VectorSettings:
    """Which FAISS index to build and how to search it; defaults scale with corpus size.

    At ``compress_above`` vectors and beyond, the index is IVF (see ``ivf``): trained on ``train_sample``
    vectors, filled in shards of ``shard_size`` and kept on disk. ``ivf_codec`` ``auto`` stores SQ8
    codes below ``sq_below`` vectors and PQ codes (``pq_bytes``, default dim/4) from there on.
    """

    index_type: str = "auto"
    exact_below: int = 50_000
    compress_above: int = 1_000_000
    hnsw_m: int = 32
    hnsw_ef_construction: int = 80
    hnsw_ef_search: int = 128
    ivf_lists: int | None = None
    ivf_codec: str = "auto"
    sq_below: int = 200_000
    pq_bytes: int | None = None
    nprobe: int = 32
    train_sample: int = 100_000
    shard_size: int = 250_000

    def __post_init__(self) -> None:
        if self.index_type not in INDEX_TYPES:
            raise InputError(f"unknown index type {self.index_type!r}; choose one of {', '.join(INDEX_TYPES)}")
        if self.ivf_codec not in IVF_CODECS:
            raise InputError(f"unknown IVF codec {self.ivf_codec!r}; choose one of {', '.join(IVF_CODECS)}")
        positive = ("exact_below", "compress_above", "hnsw_m", "hnsw_ef_construction", "hnsw_ef_search", "nprobe",
                    "train_sample", "shard_size", "sq_below")
        for name in positive + tuple(n for n in ("ivf_lists", "pq_bytes") if getattr(self, n) is not None):
            if getattr(self, name) < 1:
                raise InputError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.exact_below > self.compress_above:
            raise InputError(f"exact_below ({self.exact_below:,}) must not exceed compress_above "
                             f"({self.compress_above:,}): exact search below one, compression from the other")

    def choose(self, n: int) -> str:
        if self.index_type != "auto":
            return self.index_type
        if n < self.exact_below:
            return "flat"
        return "hnsw" if n < self.compress_above else "ivfpq"
