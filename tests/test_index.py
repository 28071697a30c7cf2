import json

import numpy as np
import pytest

from embedsearch import Document, Hit, Index, InputError, ModelMismatchError

VLA = "vision-language-action models for robot manipulation"


def test_search_finds_the_paper_about_the_query(bundled_index):
    hits = bundled_index.search("continuous-time Markov chain discrete diffusion rate matrix", 3)
    assert hits[0].id == "001_d172d3709162399d:3"
    assert [h.rank for h in hits] == [1, 2, 3]
    assert hits[0].score > hits[1].score > hits[2].score
    assert isinstance(hits[0], Hit) and hits[0].title is None
    with pytest.raises(AttributeError):
        hits[0].score = 1.0


def test_dense_scores_are_cosines_and_hybrid_hits_carry_them(bundled_index):
    query = bundled_index.encode([VLA])[0]
    for mode in ("dense", "hybrid"):
        hit = bundled_index.search(VLA, 1, mode=mode)[0]
        row = bundled_index.documents.row_of[hit.id]
        assert hit.cosine == pytest.approx(float(bundled_index.embeddings[row] @ query), abs=1e-5)
    assert bundled_index.search(VLA, 1, mode="dense")[0].score == hit.cosine


def test_similar_by_id_excludes_the_paper_itself(bundled_index):
    target = "001_d172d3709162399d:3"
    hits = bundled_index.similar(target, 5)
    assert len(hits) == 5 and target not in [h.id for h in hits]


def test_similar_to_new_text_finds_the_same_paper(bundled_index, bundled_docs):
    doc = bundled_docs[10]
    assert bundled_index.similar(doc.text, 1)[0].id == doc.id
    with pytest.raises(InputError, match="no document with id 'nope'"):
        bundled_index.similar("nope")


def test_search_many_matches_single_searches(bundled_index):
    queries = [VLA, "spiking neural networks"]
    assert bundled_index.search_many(queries, 4) == [bundled_index.search(q, 4) for q in queries]


@pytest.mark.parametrize("query, message", [("   ", "empty query"), ("x" * 100_000, "100,000 characters")])
def test_bad_queries(bundled_index, query, message):
    with pytest.raises(InputError, match=message):
        bundled_index.search(query)


def test_add_and_remove_change_results_without_reembedding(index_copy, monkeypatch):
    new = Document("new-1", "We introduce QuokkaNet, a marsupial-inspired optimizer for training "
                            "large language models on underwater acoustic data.", title="QuokkaNet")
    index_copy.add([new])
    assert len(index_copy) == 58
    assert index_copy.search("marsupial optimizer underwater acoustics", 1)[0].id == "new-1"
    assert len(Index.load(index_copy.path)) == 58

    import embedsearch.embed as embed

    monkeypatch.setattr(embed, "encode_pieces", lambda *a, **k: pytest.fail("remove must not embed"))
    index_copy.remove(["new-1", "001_d172d3709162399d:3"])
    reloaded = Index.load(index_copy.path)
    assert len(reloaded) == 56
    ids = {h.id for h in reloaded.search("marsupial optimizer underwater acoustics", 56)}
    assert "new-1" not in ids and "001_d172d3709162399d:3" not in ids


def test_add_embeds_only_new_text(index_copy, monkeypatch, tmp_path):
    import embedsearch.embed as embed
    from embedsearch.query_encoder import OnnxQueryEncoder

    import shutil

    from embedsearch.query_encoder import export_dir

    exported = export_dir(index_copy.manifest["model"]["fingerprint"])
    monkeypatch.setenv("EMBEDSEARCH_CACHE_DIR", str(tmp_path / "cold"))  # no cached vector can hide a re-embed
    shutil.copytree(exported, export_dir(index_copy.manifest["model"]["fingerprint"]))
    fast, seen = [], []
    real_fast, real = OnnxQueryEncoder.encode, embed.encode_pieces
    monkeypatch.setattr(OnnxQueryEncoder, "encode", lambda self, texts, *a, **k: fast.extend(texts)
                        or real_fast(self, texts, *a, **k))
    monkeypatch.setattr(embed, "encode_pieces", lambda texts, *a, **k: seen.extend(texts) or real(texts, *a, **k))
    new = "A genuinely new abstract about sparse autoencoders for interpretability."
    index_copy.add([Document("n2", new)])  # a small add: the fast encoder, this text only
    assert fast == [new] and seen == []
    reference = embed.Embedder(embed.EmbedSettings()).embed([new])[0]
    assert float(index_copy.embeddings[index_copy.documents.row_of["n2"]] @ reference) > 0.999
    seen.clear()
    many = [Document(f"m{i}", f"Abstract {i} on protein design with diffusion models, variant {i}.") for i in range(40)]
    index_copy.add(many)  # a large add: the model, these texts only
    assert seen == [d.text for d in many] and len(index_copy) == 98


def test_add_and_remove_reject_bad_ids(index_copy):
    with pytest.raises(InputError, match="already in"):
        index_copy.add([Document("001_d172d3709162399d:3", "text")])
    with pytest.raises(InputError, match="no document with id 'ghost' in .*; nothing was removed"):
        index_copy.remove(["ghost"])
    assert len(Index.load(index_copy.path)) == 57


def test_model_mismatch_is_refused(index_copy):
    manifest = json.loads((index_copy.path / "manifest.json").read_text())
    manifest["model"]["fingerprint"] = "0000000000000000"
    (index_copy.path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ModelMismatchError, match="was built with model 'all-MiniLM-L6-v2'.*rebuild"):
        Index.load(index_copy.path, model="all-MiniLM-L6-v2")
    with pytest.raises(ModelMismatchError):
        Index.load(index_copy.path).add([Document("z", "more text")])


def test_hnsw_index_gives_the_same_answers_on_small_data(bundled_docs, bundled_index, tmp_path):
    from embedsearch import VectorSettings

    hnsw = Index.build(bundled_docs, tmp_path / "h", vectors=VectorSettings(index_type="hnsw"))
    assert hnsw.info()["index_type"] == "hnsw"
    assert [h.id for h in hnsw.search(VLA, 5)] == [h.id for h in bundled_index.search(VLA, 5)]
    np.testing.assert_allclose(hnsw.embeddings, bundled_index.embeddings)
