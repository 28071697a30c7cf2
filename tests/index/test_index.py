import json

import numpy as np
import pytest
from conftest import write_sealed

from embedsearch import Document, Hit, Index, InputError, ModelMismatchError
from embedsearch.retrieval.dense import dense

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
        for hit in bundled_index.search(VLA, 5, mode=mode):
            row = bundled_index.documents.row_of[hit.id]
            assert hit.cosine == pytest.approx(float(bundled_index.embeddings[row] @ query), abs=1e-5)
    dense = bundled_index.search(VLA, 5, mode="dense")
    assert [h.score for h in dense] == [h.cosine for h in dense]
    hybrid = bundled_index.search(VLA, 5, mode="hybrid")
    assert all(h.bm25 is not None for h in hybrid) and [h.score for h in hybrid] != [h.cosine for h in hybrid]


def test_similar_by_id_excludes_the_paper_itself_and_ranks_by_cosine(bundled_index):
    target = "001_d172d3709162399d:3"
    hits = bundled_index.similar(target, 5)
    row = bundled_index.documents.row_of[target]
    cosines = np.asarray(bundled_index.embeddings) @ np.asarray(bundled_index.embeddings[row])
    cosines[row] = -1
    assert [h.id for h in hits] == [bundled_index.documents.ids[r] for r in np.argsort(-cosines)[:5]]


def test_similar_takes_ids_and_similar_to_text_takes_text(bundled_index, bundled_docs):
    for doc in (bundled_docs[10], bundled_docs[40]):
        assert bundled_index.similar_to_text(doc.text, 1)[0].id == doc.id
    with pytest.raises(InputError, match="no document with id 'nope'.*similar_to_text"):
        bundled_index.similar("nope")
    with pytest.raises(InputError, match="no document with id"):
        bundled_index.similar(bundled_docs[10].text)  # text is never taken for an id, whatever its length


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

    from embedsearch.embedding import embed
    from embedsearch.embedding.onnx_encoder import OnnxEncoder

    for name in ("encode_pieces", "load_model"):  # every way to embed: the model, or loading it
        monkeypatch.setattr(embed, name, lambda *a, **k: pytest.fail("remove must not embed"))
    for name in ("encode", "encode_pieces"):  # the export, for queries and in bulk
        monkeypatch.setattr(OnnxEncoder, name, lambda *a, **k: pytest.fail("remove must not embed"))
    index_copy.remove(["new-1", "001_d172d3709162399d:3"])
    monkeypatch.undo()
    reloaded = Index.load(index_copy.path)
    assert len(reloaded) == 56
    ids = {h.id for h in reloaded.search("marsupial optimizer underwater acoustics", 56)}
    assert "new-1" not in ids and "001_d172d3709162399d:3" not in ids


def test_add_embeds_only_new_text(index_copy, monkeypatch, tmp_path):
    import shutil

    from embedsearch.embedding import embed
    from embedsearch.embedding.onnx_encoder import OnnxEncoder
    from embedsearch.embedding.onnx_export import export_dir

    exported = export_dir(index_copy.manifest.model.fingerprint)
    monkeypatch.setenv("EMBEDSEARCH_CACHE_DIR", str(tmp_path / "cold"))  # no cached vector can hide a re-embed
    shutil.copytree(exported, export_dir(index_copy.manifest.model.fingerprint))
    fast, seen = [], []
    real_fast, real = OnnxEncoder.encode, OnnxEncoder.encode_pieces
    monkeypatch.setattr(OnnxEncoder, "encode", lambda self, texts, *a, **k: fast.extend(texts)
                        or real_fast(self, texts, *a, **k))
    monkeypatch.setattr(OnnxEncoder, "encode_pieces", lambda self, texts: seen.extend(texts) or real(self, texts))
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


def test_add_checked_refuses_skips_or_adds_duplicates_of_indexed_abstracts(index_copy, bundled_docs):
    from embedsearch.errors import DuplicateError

    original = bundled_docs[4]
    new = [Document("again", original.text.replace(". ", ". Indeed, ", 1)),
           Document("fresh", "Coral reef bleaching under ocean warming, measured by divers over a decade.")]
    generation = index_copy.generation
    with pytest.raises(DuplicateError, match="nothing was added") as refused:
        index_copy.add_checked(new)
    assert [(p.a, p.b) for p in refused.value.report.pairs] == [("again", original.id)]
    assert index_copy.refresh().generation == generation and len(index_copy) == 57
    report = index_copy.add_checked(new, on_duplicate="skip")
    assert [(p.a, p.b) for p in report.pairs] == [("again", original.id)]
    assert "fresh" in index_copy.documents.row_of and "again" not in index_copy.documents.row_of
    index_copy.add_checked([new[0]], on_duplicate="add")
    assert "again" in index_copy.documents.row_of and len(index_copy) == 59
    with pytest.raises(InputError, match="on_duplicate 'keep'"):
        index_copy.add_checked([Document("x", "Some other text about graphs.")], on_duplicate="keep")


def test_model_mismatch_is_refused(index_copy):
    manifest = json.loads((index_copy.path / "manifest.json").read_text())
    manifest["model"]["fingerprint"] = "0000000000000000"
    write_sealed((index_copy.path / "manifest.json"), manifest)
    with pytest.raises(ModelMismatchError, match="was built with model 'all-MiniLM-L6-v2'.*rebuild"):
        Index.load(index_copy.path, model="all-MiniLM-L6-v2")
    with pytest.raises(ModelMismatchError):
        Index.load(index_copy.path).add([Document("z", "more text")])


def test_hnsw_index_finds_the_true_neighbours_of_20000_vectors(bundled_index, tmp_path):
    from conftest import clustered

    from embedsearch import VectorSettings

    x = clustered(20_000, d=384, centres=200)
    docs = [Document(f"v{i}", f"vector {i}") for i in range(20_000)]
    hnsw = Index.from_embeddings(docs, x, tmp_path / "h", bundled_index.manifest.model,
                                 VectorSettings(index_type="hnsw", hnsw_ef_search=64))
    assert hnsw.info()["index_type"] == "hnsw"
    queries = x[:200] + 0.05 * np.random.default_rng(1).normal(size=(200, 384)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    truth = np.argsort(-(queries @ x.T), axis=1)[:, :10]
    found = [[r for r, _ in hits] for hits in dense(hnsw.snapshot, queries, 10)]
    recall = np.mean([len(set(t) & set(f)) / 10 for t, f in zip(truth, found)])
    assert 0.9 <= recall  # approximate search that still finds nine in ten true neighbours


@pytest.mark.parametrize("mode", ["hybrid", "dense", "lexical"])
def test_every_hit_carries_a_cosine_and_a_band_a_reader_can_compare_across_queries(bundled_index, mode):
    from embedsearch.retrieval.answer import best_match

    on_topic = bundled_index.search("discrete diffusion language models", 5, mode=mode)
    assert best_match(on_topic) != "none" and on_topic[0].match != "distant"
    dense = {h.id: h.cosine for h in bundled_index.search("discrete diffusion language models", 57, mode="dense")}
    assert all(h.cosine == pytest.approx(dense[h.id], abs=1e-5) for h in on_topic)
    off_topic = bundled_index.search("chocolate cake recipe with strawberries", 5, mode=mode)
    assert best_match(off_topic) == "none" and all(h.match == "distant" for h in off_topic)
    if mode != "lexical":  # words that no abstract uses: nothing at all to show in lexical mode
        assert len(off_topic) == 5 and all(h.cosine < 0.3 for h in off_topic)


def test_similar_papers_carry_bands(bundled_index, bundled_docs):
    hits = bundled_index.similar(bundled_docs[0].id, 3)
    settings = bundled_index.search_settings
    assert all(h.match == ("close" if h.cosine >= settings.close_cosine else
                           "related" if h.cosine >= settings.related_cosine else "distant") for h in hits)
