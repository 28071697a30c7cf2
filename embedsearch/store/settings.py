"""The store's settings, all recorded in the manifest: how an index is kept on disk (the merge policy and
``StoreSettings``), its BM25 postings (``LexicalSettings``) and its vector index (``VectorSettings``)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import InputError, check, check_choice

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
        check(self, segments_per_tier=(2, None), tier_factor=(2, None), floor_rows=(1, None),
              max_deleted_share=(0.001, 1), max_merged_rows=(1, None))

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
        check(self, grace_seconds=(0, None), segment_rows=(1, None), max_segment_rows=(1, None),
              merge_buffer_mb=(1, None))


@dataclass(frozen=True)
class LexicalSettings:
    """BM25 parameters and text processing (tuned on SciFact's train split, see benchmarks)."""

    k1: float = 1.2
    b: float = 0.6
    method: str = "lucene"
    stemmer: str | None = "english"
    stopwords: bool = True
    title_weight: int = 2
    forms: bool = True  # British spellings and irregular plurals meet their forms (``forms``); False before format 3

    def __post_init__(self) -> None:
        check_choice("BM25 method", self.method, ("lucene",))
        check(self, k1=(0, None), b=(0, 1), title_weight=(0, None))

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
        check_choice("index type", self.index_type, INDEX_TYPES)
        check_choice("IVF codec", self.ivf_codec, IVF_CODECS)
        check(self, **{name: (1, None) for name in ("exact_below", "compress_above", "hnsw_m", "hnsw_ef_construction",
                                                    "hnsw_ef_search", "nprobe", "train_sample", "shard_size",
                                                    "sq_below", "ivf_lists", "pq_bytes")})
        if self.exact_below > self.compress_above:
            raise InputError(f"exact_below ({self.exact_below:,}) must not exceed compress_above "
                             f"({self.compress_above:,}): exact search below one, compression from the other")

    def choose(self, n: int) -> str:
        if self.index_type != "auto":
            return self.index_type
        if n < self.exact_below:
            return "flat"
        return "hnsw" if n < self.compress_above else "ivfpq"
