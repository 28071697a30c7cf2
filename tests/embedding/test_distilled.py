"""A static model distilled from the bundled MiniLM (``static-minilm``): an index built with it answers with
it, a model folder works by path, and another static model, or a precision, fails in one line."""

import json
import shutil

import numpy as np
import pytest

from conftest import run_cli
from embedsearch import EmbedSettings, Index
from embedsearch.embedding.distilled import STATIC_MINILM, StaticEncoder, is_static, static_folder

pytestmark = pytest.mark.xdist_group("distilled")  # one worker distils the model (about 30 s), not each


@pytest.fixture(scope="module")
def static_index(tmp_path_factory, bundled_docs):
    return Index.build(bundled_docs, tmp_path_factory.mktemp("static") / "idx",
                       embed=EmbedSettings(model=STATIC_MINILM))


def test_a_static_index_answers_with_its_own_distilled_model(static_index, bundled_index):
    model = static_index.manifest.model
    assert model.name == STATIC_MINILM and model.dimension == 256
    encoder = static_index.snapshot.encoder
    assert isinstance(encoder, StaticEncoder) and encoder.fingerprint == model.fingerprint
    assert model.fingerprint != bundled_index.manifest.model.fingerprint
    doc = static_index.documents.get([7])[0]
    assert float(static_index.encode([doc.embed_text])[0] @ static_index.embeddings[7]) > 0.9999
    query = "discrete diffusion with continuous-time Markov chains"
    assert static_index.search(query, 1)[0].id == "001_d172d3709162399d:3"
    # a draft, not MiniLM: its vectors are its own, close in ranking but not in value
    assert np.asarray(static_index.embeddings).shape == (len(bundled_index), 256)


def test_the_distilled_model_is_a_model2vec_folder_that_works_by_path(static_index, tmp_path, bundled_docs):
    folder = static_folder(STATIC_MINILM)
    assert is_static(str(folder)) and is_static(STATIC_MINILM) and not is_static("all-MiniLM-L6-v2")
    by_path = Index.build(bundled_docs[:10], tmp_path / "p", embed=EmbedSettings(model=str(folder)))
    assert by_path.manifest.model.fingerprint == static_index.manifest.model.fingerprint
    assert np.allclose(np.asarray(by_path.embeddings), np.asarray(static_index.embeddings)[:10], atol=1e-6)


def test_an_index_searched_with_another_static_model_fails_in_one_line(bundled_docs, tmp_path):
    from model2vec import StaticModel

    folder = tmp_path / "mine"
    shutil.copytree(static_folder(STATIC_MINILM), folder)
    Index.build(bundled_docs[:10], tmp_path / "idx", embed=EmbedSettings(model=str(folder)))
    model = StaticModel.from_pretrained(str(folder))
    rng = np.random.default_rng(0)
    StaticModel(vectors=model.embedding + rng.normal(scale=0.1, size=model.embedding.shape).astype(np.float32),
                tokenizer=model.tokenizer, config=model.config, normalize=True).save_pretrained(str(folder))
    found = run_cli("search", "diffusion", "--index", str(tmp_path / "idx"))
    assert found.returncode != 0
    message = found.stderr.strip()
    assert "\n" not in message and "is not the one the index was built with" in message and str(folder) in message


def test_a_static_model_has_no_precision_and_says_so(bundled_docs, tmp_path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({"id": d.id, "text": d.text}) + "\n" for d in bundled_docs[:3]))
    bad = run_cli("build", str(corpus), "-i", str(tmp_path / "i"), "--model", STATIC_MINILM, "--precision", "int8")
    assert bad.returncode != 0 and "static model" in bad.stderr and "--precision" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1 and not (tmp_path / "i").exists()
    not_a_model = tmp_path / "empty"
    not_a_model.mkdir()
    (not_a_model / "config.json").write_text(json.dumps({"model_type": "model2vec"}))
    with pytest.raises(Exception, match="holds no static model"):
        StaticEncoder(str(not_a_model))
