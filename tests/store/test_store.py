import json
import os

import pytest
from conftest import run_cli, write_sealed

from embedsearch import Index, IndexStoreError
from embedsearch.store.files import FORMAT_VERSION


def test_a_moved_index_answers_the_same_in_a_fresh_process(bundled_index, tmp_path):
    import shutil

    from conftest import run_cli

    moved = tmp_path / "moved"
    shutil.copytree(bundled_index.path, moved)  # nothing on disk may point at the folder it was built in
    query = "discrete diffusion language models"
    out = run_cli("search", query, "--index", str(moved), "-k", "5", "--json", check=True).stdout
    assert [(h["id"], h["score"]) for h in map(json.loads, out.splitlines())] == \
        [(h.id, round(h.score, 6)) for h in bundled_index.search(query, 5)]


def test_folder_uses_open_formats_only(bundled_index):
    names = {p.relative_to(bundled_index.path).as_posix() for p in bundled_index.path.rglob("*")
             if p.is_file() and not p.name.startswith(".")}
    segment = next(n.split("/")[1] for n in names if n.startswith("segments/"))
    assert {"manifest.json", "generations/1.json"} <= names
    assert {f"segments/{segment}/{f}" for f in ("documents.jsonl", "embeddings.npy", "vectors.faiss", "segment.json",
                                                "metadata.parquet", "lexical/tf.npy")} <= names
    assert {n.rsplit(".", 1)[-1] for n in names} <= {"json", "jsonl", "npy", "faiss", "parquet"}
    manifest = json.loads((bundled_index.path / "manifest.json").read_text())
    for key in ("format_version", "package_version", "model", "metric", "built_at", "index", "store"):
        assert key in manifest
    assert manifest["model"]["dimension"] == 384 and manifest["model"]["fingerprint"]
    generation = json.loads((bundled_index.path / "generations" / "1.json").read_text())
    assert generation["documents"] == 57 and [s["name"] for s in generation["segments"]] == [segment]


def test_failed_build_leaves_the_previous_index_loadable(index_copy, bundled_docs, monkeypatch):
    before = (index_copy.path / "manifest.json").read_text()

    def explode(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr("embedsearch.store.vectors.flat.Flat.build", explode)
    with pytest.raises(RuntimeError):
        Index.build(bundled_docs[:10], index_copy.path)
    assert (index_copy.path / "manifest.json").read_text() == before
    assert len(Index.load(index_copy.path)) == 57
    assert [p.name for p in index_copy.path.parent.iterdir() if p.name.startswith(".")] == []


def test_interrupted_swap_is_recovered(index_copy):
    path = index_copy.path
    os.rename(path, path.parent / f".{path.name}.old-abc123")
    assert len(Index.load(path)) == 57


def test_not_an_index_and_newer_format(tmp_path, index_copy):
    with pytest.raises(IndexStoreError, match="not an embedsearch index"):
        Index.load(tmp_path)
    with pytest.raises(IndexStoreError, match="no index here"):
        Index.load(tmp_path / "missing")
    manifest = json.loads((index_copy.path / "manifest.json").read_text())
    manifest["format_version"] = FORMAT_VERSION + 1
    (index_copy.path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(IndexStoreError, match="newer than this embedsearch reads.*upgrade"):
        Index.load(index_copy.path)


def test_corrupted_faiss_file_is_reported_on_first_search(index_copy):
    next(index_copy.path.glob("segments/*/vectors.faiss")).write_bytes(b"garbage")
    with pytest.raises(IndexStoreError, match="vectors.faiss: .*check --repair"):  # its size, checked on open
        Index.load(index_copy.path).search("anything", 3)


def test_document_count_mismatch_is_caught(index_copy):
    file = index_copy.path / "generations" / "1.json"
    generation = json.loads(file.read_text())
    generation["segments"][0]["rows"] = 99
    write_sealed(file, generation)
    with pytest.raises(IndexStoreError, match="for 99 documents|the generation says 99|expected \\(99, 384\\)"):
        Index.load(index_copy.path).search("anything", 3)


def test_the_manifest_and_info_say_which_versions_made_the_index(bundled_index):
    from importlib.metadata import version

    import faiss
    import numpy

    made = json.loads(run_cli("info", "--index", str(bundled_index.path), "--json", check=True).stdout)["provenance"]
    assert made["versions"]["numpy"] == numpy.__version__ and made["versions"]["faiss-cpu"] == faiss.__version__
    for name in ("embedsearch", "torch", "onnxruntime", "umap-learn", "hdbscan", "scikit-learn"):
        assert made["versions"][name] == version(name)
    assert made["torch_cpu_capability"] in {"AVX512", "AVX2", "DEFAULT", "VSX", "ZVECTOR", "SVE256", None}
