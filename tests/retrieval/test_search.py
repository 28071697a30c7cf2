import numpy as np
import pytest

from embedsearch import Document, Index, InputError
from embedsearch.retrieval.fusion import fuse, top_lexical
from embedsearch.retrieval.settings import SearchSettings
from conftest import SHARED


def test_minmax_fusion_on_a_hand_checked_example():
    dense = [(0, 0.9), (1, 0.5), (2, 0.1)]
    lexical = [(2, 10.0), (3, 5.0), (1, 0.0)]
    cos = {0: 0.9, 1: 0.5, 2: 0.1, 3: 0.3}
    bm = {0: 0.0, 1: 0.0, 2: 10.0, 3: 5.0}
    ranked = fuse(dense, lexical, lambda r: np.array([cos[i] for i in r]), lambda r: np.array([bm[i] for i in r]),
                  4, SearchSettings(fusion="minmax", dense_weight=0.5))
    # dense scaled over [0.1, 0.9]: 0->1, 1->0.5, 2->0, 3->0.25; lexical over [0, 10]: 2->1, 3->0.5, 0,1->0
    assert [(r.row, round(r.score, 3)) for r in ranked] == [(0, 0.5), (2, 0.5), (3, 0.375), (1, 0.25)]
    assert ranked[0].cosine == 0.9 and ranked[1].bm25 == 10.0


def test_max_scaled_fusion_is_the_default_and_hand_checked():
    dense = [(0, 0.8), (1, 0.4)]
    lexical = [(1, 10.0), (2, 5.0)]
    cos = {0: 0.8, 1: 0.4, 2: -0.1}
    bm = {0: 0.0, 1: 10.0, 2: 5.0}
    settings = SearchSettings()
    assert (settings.fusion, settings.dense_weight) == ("max", 0.6)
    ranked = fuse(dense, lexical, lambda r: np.array([cos[i] for i in r]), lambda r: np.array([bm[i] for i in r]),
                  3, settings)
    # dense / 0.8: 0->1, 1->0.5, 2->0 (negative cosine floored); lexical / 10: 1->1, 2->0.5, 0->0
    assert [(r.row, round(r.score, 3)) for r in ranked] == [(1, 0.7), (0, 0.6), (2, 0.2)]


def test_rrf_fusion_on_a_hand_checked_example():
    dense = [(0, 0.9), (1, 0.5)]
    lexical = [(1, 3.0), (2, 1.0)]
    ranked = fuse(dense, lexical, lambda r: np.zeros(len(r)), lambda r: np.zeros(len(r)), 3,
                  SearchSettings(fusion="rrf", dense_weight=0.5, rrf_k=60))
    expected = {0: 0.5 / 61, 1: 0.5 / 62 + 0.5 / 61, 2: 0.5 / 62}
    assert [r.row for r in ranked] == [1, 0, 2]
    assert [r.score for r in ranked] == pytest.approx([expected[1], expected[0], expected[2]])


def test_top_lexical_skips_non_matching_rows():
    assert top_lexical(np.array([0.0, 2.0, 1.0, 0.0]), 10) == [(1, 2.0), (2, 1.0)]


def test_each_mode_finds_each_paper_from_its_opening_words(bundled_index, bundled_docs):
    for doc in bundled_docs[::5]:  # twelve papers from all three files, none hard-coded
        query = " ".join(doc.text.split()[:40])
        for mode in ("dense", "lexical", "hybrid"):
            assert bundled_index.search(query, 3, mode=mode)[0].id == doc.id, (mode, query)
    for mode in ("dense", "lexical", "hybrid"):
        hits = bundled_index.search("CTMC rate matrix discrete diffusion", 3, mode=mode)
        assert hits[0].id == "001_d172d3709162399d:3", mode
    dense = bundled_index.search("CTMC", 1, mode="dense")[0]
    assert dense.cosine == dense.score and dense.bm25 is None
    hybrid = bundled_index.search("CTMC", 1, mode="hybrid")[0]
    assert hybrid.cosine is not None and hybrid.bm25 > 0


def test_lexical_mode_finds_exact_acronyms(bundled_index):
    hits = bundled_index.search("ALFWorld", 5, mode="lexical")
    assert hits and all("alfworld" in h.text.lower() for h in hits)


def test_unknown_mode(bundled_index):
    with pytest.raises(InputError, match="unknown mode 'fuzzy'"):
        bundled_index.search("x", mode="fuzzy")


@pytest.fixture(scope="module")
def with_metadata(tmp_path_factory):
    docs = [Document("p1", "Graph neural networks for molecules.", "GNN", {"year": 2023, "venue": "ICML",
                                                                          "authors": ["Ada", "Bo"]}),
            Document("p2", "Graph transformers for molecular property prediction.", "GT",
                     {"year": 2025, "venue": "NeurIPS", "authors": ["Cy"]}),
            Document("p3", "Diffusion models for molecule generation.", "Diff", {"year": "2024", "venue": "neurips"})]
    return Index.build(docs, tmp_path_factory.mktemp("meta") / "idx")


def test_filters_restrict_every_mode(with_metadata):
    for mode in ("dense", "lexical", "hybrid"):
        ids = [h.id for h in with_metadata.search("graph molecules", 5, mode=mode, filters=["venue=NeurIPS"])]
        assert set(ids) <= {"p2", "p3"} and "p2" in ids
        ids = [h.id for h in with_metadata.search("molecules", 5, mode=mode, filters=["year>=2024"])]
        assert set(ids) <= {"p2", "p3"} and ids
    ids = [h.id for h in with_metadata.search("molecules", 5, filters=["authors=Ada"])]
    assert ids == ["p1"]
    ids = [h.id for h in with_metadata.search("molecules", 5, filters=["authors!=ada"])]
    assert sorted(ids) == ["p2", "p3"]
    ids = [h.id for h in with_metadata.search("molecules", 5, filters=["year>=2024", "venue!=neurips"])]
    assert ids == []


def test_filters_follow_add_and_remove(tmp_path):
    docs = [Document("a", "Sparse attention for long documents.", "A", {"venue": "ICML"}),
            Document("b", "Sparse attention kernels on GPUs.", "B", {"venue": "NeurIPS"})]
    index = Index.build(docs, tmp_path / "idx")
    assert [h.id for h in index.search("sparse attention", 5, filters=["venue=NeurIPS"])] == ["b"]
    index.add([Document("c", "Sparse attention with learned routing.", "C", {"venue": "NeurIPS"})])
    assert sorted(h.id for h in index.search("sparse attention", 5, filters=["venue=NeurIPS"])) == ["b", "c"]
    index.remove(["b"])
    assert [h.id for h in index.search("sparse attention", 5, filters=["venue=NeurIPS"])] == ["c"]


@pytest.mark.parametrize("expression, message", [
    ("yr=2020", "unknown field 'yr'; fields: authors, venue, year"),
    ("year>=recent", "needs a finite number"),
    ("year", "expected FIELD=VALUE"),
])
def test_bad_filters(with_metadata, expression, message):
    with pytest.raises(InputError, match=message):
        with_metadata.search("molecules", filters=[expression])


def test_lexical_index_follows_add_and_remove(index_copy):
    index_copy.add([Document("zz", "Quokkas are marsupials.", "Quokka")])
    assert index_copy.search("quokka marsupial", 1, mode="lexical")[0].id == "zz"
    index_copy.remove(["zz"])
    assert all(h.id != "zz" for h in index_copy.search("quokka marsupial", 5, mode="lexical"))


def test_a_preview_reads_as_the_rendered_abstract_does_when_only_its_head_is_rendered():
    """A hit without a title shows its abstract's first sentence as a reader reads it; only its head is
    rendered, which must not change what the whole abstract's rendering shows."""
    import json

    from embedsearch.corpus import Document
    from embedsearch.retrieval.answer import Hit

    path = SHARED / "eval" / "arxiv" / "arxiv_kaggle_0704_2000.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()[:400]]
    texts = [r["abstract"] for r in rows if "$" in r["abstract"] or "\\" in r["abstract"]]
    texts.append("Is it possible to understand cancer? " + "Many genes act. " * 3 + "x " * 400 + "End. More.")
    texts.append("Is it possible to understand \\emph{cancer}? " + "gene " * 20 + "act. " + "y " * 400 + ". Z.")
    assert len(texts) > 100
    for text in texts:
        shown = Document("x", text).readable().first_sentence()
        assert Hit(rank=1, id="x", score=1.0, title=None, text=text).preview == shown
    assert Hit(rank=1, id="x", score=1.0, title=r"Fr\"olicher spaces", text="A.").preview == "Frölicher spaces"
