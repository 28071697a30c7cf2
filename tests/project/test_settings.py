"""Settings check themselves when made: a bad value is one line that says what would work."""

import pytest

from embedsearch import InputError
from embedsearch.dedup import DedupSettings
from embedsearch.embedding.settings import EmbedSettings
from embedsearch.retrieval.settings import SearchSettings
from embedsearch.store.settings import LexicalSettings, MergePolicy, StoreSettings, VectorSettings
from embedsearch.topics import TopicSettings


@pytest.mark.parametrize("make, message", [
    (lambda: EmbedSettings(model=" "), "model must name"),
    (lambda: EmbedSettings(batch_size=0), "batch_size must be at least 1"),
    (lambda: EmbedSettings(max_windows=0), "max_windows must be at least 1"),
    (lambda: EmbedSettings(tail_weight=1.5), "tail_weight must be between 0 and 1"),
    (lambda: VectorSettings(nprobe=0), "nprobe must be at least 1"),
    (lambda: VectorSettings(shard_size=0), "shard_size must be at least 1"),
    (lambda: VectorSettings(exact_below=2_000_000), "exact_below (2,000,000) must not exceed compress_above"),
    (lambda: VectorSettings(index_type="annoy"), "unknown index type 'annoy'; choose one of auto, flat"),
    (lambda: VectorSettings(ivf_lists=0), "ivf_lists must be at least 1"),
    (lambda: LexicalSettings(method="bm25l"), "unknown BM25 method 'bm25l'; choose one of lucene"),
    (lambda: LexicalSettings(b=2.0), "b must be between 0 and 1, got 2.0"),
    (lambda: SearchSettings(candidates=0), "candidates must be at least 1"),
    (lambda: SearchSettings(rrf_k=0), "rrf_k must be at least 1"),
    (lambda: SearchSettings(mode="fuzzy"), "choose one of hybrid, dense, lexical"),
    (lambda: TopicSettings(components=1), "components must be at least 2"),
    (lambda: TopicSettings(neighbours=1), "neighbours must be at least 2"),
    (lambda: DedupSettings(neighbours=0), "neighbours must be at least 1"),
    (lambda: DedupSettings(min_overlap=-0.1), "min_overlap must be between 0 and 1"),
    (lambda: MergePolicy(segments_per_tier=1), "segments_per_tier must be at least 2"),
    (lambda: MergePolicy(max_deleted_share=0), "max_deleted_share must be between 0.001 and 1"),
    (lambda: StoreSettings(segment_rows=0), "segment_rows must be at least 1"),
    (lambda: TopicSettings(member_epochs=3), "member_epochs must be between 5 and 2000, got 3"),
])
def test_bad_settings_fail_at_construction_with_one_line(make, message):
    with pytest.raises(InputError) as caught:
        make()
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_the_cli_reads_its_defaults_from_the_settings():
    from conftest import run_cli

    dedup = run_cli("dedup", "--help").stdout
    assert f"(default {DedupSettings().threshold})" in dedup and f"(default {DedupSettings().min_overlap})" in dedup
    build = run_cli("build", "--help").stdout
    assert EmbedSettings().model in build and f"[default: {EmbedSettings().max_windows}]" in build
    topics = run_cli("topics", "--help").stdout
    assert f"[default: {TopicSettings().seed}]" in topics and f"{TopicSettings().sample}" in topics
