"""Large-corpus IVF index: trained on a sample, filled in shards, merged on disk, memory-mapped."""

import shutil

import faiss
import numpy as np
import pytest
from conftest import clustered

from embedsearch import Document, Index, InputError
from embedsearch.store import vectors as vec
from embedsearch.store.settings import VectorSettings
from embedsearch.store.vectors import ivf

SETTINGS = VectorSettings(index_type="ivfpq", ivf_lists=32, nprobe=8, shard_size=1000, train_sample=4000)


def test_four_shards_merged_on_disk_answer_like_one_monolithic_index(tmp_path):
    x = clustered(4000)
    trained = ivf.write_sharded(tmp_path, "vectors.faiss", x, SETTINGS)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["vectors.faiss", "vectors.ivfdata"]
    monolithic = ivf.deserialize(ivf.serialize(trained))
    monolithic.add(x)
    ondisk = vec.read(tmp_path / "vectors.faiss")
    assert ondisk.ntotal == 4000 and isinstance(faiss.downcast_InvertedLists(ondisk.invlists), faiss.OnDiskInvertedLists)
    d1, i1 = ondisk.search(x[:200], 10)
    d2, i2 = monolithic.search(x[:200], 10)
    np.testing.assert_array_equal(i1, i2)
    np.testing.assert_allclose(d1, d2, rtol=1e-5)


def test_codec_follows_corpus_size():
    s = VectorSettings()
    assert ivf.factory(1_000_000, 384, s) == ("IVF4000,PQ96x8", 4000)
    assert ivf.factory(100_000, 384, s)[0].endswith(",SQ8")
    assert ivf.factory(100_000, 384, VectorSettings(ivf_codec="pq", pq_bytes=48))[0].endswith("PQ48x8")
    with pytest.raises(InputError, match="unknown IVF codec"):
        VectorSettings(ivf_codec="lsh")
    with pytest.raises(InputError, match="needs at least 1248 vectors to train, got 500"):
        ivf.train(clustered(500), SETTINGS)


@pytest.fixture()
def ivf_index(bundled_index, tmp_path):
    x = clustered(3000, d=384)
    docs = [Document(f"p{i}", f"Synthetic abstract number {i} about topic {i % 40}.") for i in range(3000)]
    return Index.from_embeddings(docs, x, tmp_path / "idx", bundled_index.manifest.model, SETTINGS), x


def test_index_on_disk_survives_a_move_and_finds_true_neighbours(ivf_index, tmp_path):
    index, x = ivf_index
    assert index.info()["index_type"] == "ivfpq" and (index.snapshot.segments[0].folder / "vectors.ivfdata").exists()
    moved = tmp_path / "moved"
    shutil.move(str(index.path), moved)
    index = Index.load(moved)
    truth = np.argsort(-(x[:50] @ x.T), axis=1)[:, 1:11]
    found = [[index.documents.row_of[h.id] for h in index.similar(f"p{q}", 10)] for q in range(50)]
    recall = np.mean([len(set(t) & set(f)) / 10 for t, f in zip(truth, found)])
    assert recall >= 0.9


def test_add_remove_and_compact_keep_the_on_disk_layout_and_the_quantizer(ivf_index):
    index, _ = ivf_index
    centroids = ivf.centroids(ivf.read_trained(index.snapshot.segments[0].folder / "vectors.faiss"))
    index.remove([f"p{i}" for i in range(100)])
    new = "Vision-language-action models for robot manipulation, trained at scale."
    index.add([Document("new", new)])
    assert len(index) == 2901 and [s.rows for s in index.snapshot.segments] == [3000, 1]
    for _ in ("segments", "compacted"):
        for segment in index.snapshot.segments:
            assert segment.index_type == "ivfpq" and (segment.folder / "vectors.ivfdata").exists()
            np.testing.assert_array_equal(ivf.centroids(ivf.read_trained(segment.folder / "vectors.faiss")), centroids)
        assert "p5" not in {h.id for h in index.similar("p145", 2900)}
        assert index.similar("new", 1)[0].id != "new"
        assert index.similar_to_text(new, 1)[0].id == "new"
        index.compact()
    assert [s.rows for s in index.snapshot.segments] == [2901] and index.snapshot.to_json()["index"]["ondisk"]
    assert vec.read(index.snapshot.segments[0].folder / "vectors.faiss").ntotal == 2901


def test_missing_list_file_is_reported(ivf_index):
    from embedsearch.errors import IndexStoreError

    index, _ = ivf_index
    (index.snapshot.segments[0].folder / "vectors.ivfdata").unlink()
    with pytest.raises(IndexStoreError, match="vectors.ivfdata is missing; rebuild"):
        Index.load(index.path).search("topic 3", 3)
    assert any("vectors.ivfdata: missing" in p for p in Index.load(index.path).check())
