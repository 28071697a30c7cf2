import faiss
import numpy as np
import pytest
from conftest import clustered as shared_clustered

from embedsearch.errors import IndexStoreError, InputError
from embedsearch.retrieval.dense import dense_rows
from embedsearch.store import vectors as vec
from embedsearch.store.settings import VectorSettings


def clustered(n, seed=0):
    return shared_clustered(n, d=32, centres=20, spread=0.3, seed=seed)


def test_auto_choice_scales_with_size():
    s = VectorSettings()
    assert s.choose(57) == "flat"
    assert s.choose(100_000) == "hnsw"
    assert s.choose(5_000_000) == "ivfpq"
    assert VectorSettings(index_type="hnsw").choose(10) == "hnsw"
    with pytest.raises(InputError, match="unknown index type"):
        VectorSettings(index_type="annoy")


@pytest.mark.parametrize("kind", ["flat", "hnsw", "ivfpq"])
def test_each_index_type_finds_the_true_nearest_neighbours(kind):
    """Through the search path, which re-scores compressed (PQ) candidates exactly."""
    x = clustered(5000)
    index = vec.build(x, VectorSettings(index_type=kind, ivf_lists=16, nprobe=16))
    truth = np.argsort(-(x[:50] @ x.T), axis=1)[:, :10]
    rows = [[r for r, _ in hits] for hits in dense_rows(index, kind, x, x[:50], 10)]
    recall = np.mean([len(set(t) & set(r)) / 10 for t, r in zip(truth, rows)])
    assert recall >= 0.9


FAISS_CLASS = {"flat": faiss.IndexFlat, "hnsw": faiss.IndexHNSW, "ivfpq": faiss.IndexIVF}


def test_save_writes_the_chosen_kind_and_reads_it_back(tmp_path):
    x = clustered(3000)
    for kind in ("flat", "hnsw", "ivfpq"):
        folder = tmp_path / kind
        folder.mkdir()
        assert vec.save(folder / "vectors.faiss", x, VectorSettings(index_type=kind, ivf_lists=16)) == kind
        index = vec.read(folder / "vectors.faiss", kind)
        assert isinstance(index, FAISS_CLASS[kind]) and index.ntotal == 3000
        assert (folder / "vectors.ivfdata").exists() == (kind == "ivfpq")


def test_corrupted_file_gets_a_clear_error(tmp_path):
    path = tmp_path / "vectors.faiss"
    vec.save(path, clustered(100), VectorSettings())
    path.write_bytes(path.read_bytes()[:50])
    with pytest.raises(IndexStoreError, match="vectors.faiss: FAISS file is corrupted"):
        vec.read(path)


def test_a_flat_search_in_numpy_finds_what_faiss_finds():
    from embedsearch.retrieval.dense import exact

    vectors = clustered(3000, seed=3)
    vectors[10] = vectors[11]  # a tie
    queries = clustered(5, seed=4)
    index = faiss.IndexFlatIP(vectors.shape[1])
    index.add(vectors)
    allowed = np.random.default_rng(0).random(len(vectors)) < 0.3
    for k, mask in ((10, None), (10, allowed), (5000, None), (7, allowed)):
        scores, rows = exact(vectors, queries, k, mask)
        params = None if mask is None else faiss.SearchParameters(sel=faiss.IDSelectorBatch(np.flatnonzero(mask)))
        limit = min(k, len(vectors) if mask is None else int(mask.sum()))
        theirs, their_rows = index.search(queries, limit, params=params)
        assert rows.shape == (5, limit)
        assert np.allclose(scores, theirs, atol=1e-5)
        assert [set(r) for r in rows.tolist()] == [set(r) for r in their_rows.tolist()]
        assert mask is None or mask[rows].all()
        assert (np.diff(scores, axis=1) <= 0).all()


def test_a_search_of_a_small_index_never_loads_faiss(bundled_index):
    """A flat segment is searched in numpy from its stored vectors: a search command does not pay for
    importing faiss and reading its copy of them."""
    import subprocess
    import sys

    code = ("import sys; from embedsearch import Index; idx = Index.load(sys.argv[1]); "
            "hits = idx.find('discrete diffusion', 5, mode='dense'); assert len(hits) == 5, hits; "
            "print('faiss' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code, str(bundled_index.path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
