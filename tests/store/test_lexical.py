import numpy as np

from embedsearch.corpus import Document
from embedsearch.retrieval.bm25 import SegmentedBM25
from embedsearch.store import lexical as lex
from embedsearch.store.settings import LexicalSettings

DOCS = [Document("a", "Spiking neural networks use time-to-first-spike (TTFS) coding.", "Spiking nets"),
        Document("b", "Discrete diffusion language models built on CTMCs."),
        Document("c", "Robots follow vision-language-action (VLA) policies; robots learn.")]


def scorer(folder):
    return SegmentedBM25([(lex.Postings(folder), None)], LexicalSettings())


def test_scores_match_bm25s_itself(tmp_path):
    import bm25s

    lex.build(DOCS, tmp_path)
    index = scorer(tmp_path)
    settings = LexicalSettings()
    reference = bm25s.BM25(k1=settings.k1, b=settings.b, method=settings.method)
    reference.index([lex.doc_tokens(d, index.tokenizer, settings) for d in DOCS], show_progress=False)
    for query in ["TTFS spiking", "robots learning policies", "diffusion models of language", "unrelated words"]:
        expected = reference.get_scores(index.tokenizer(query)) if index.tokenizer(query) else np.zeros(3)
        np.testing.assert_allclose(index.scores(query), expected, rtol=1e-6)


def test_tokenizer_drops_stop_words_and_stems(tmp_path):
    lex.build(DOCS, tmp_path)
    tokenizer = scorer(tmp_path).tokenizer
    assert tokenizer("The robots are learning") == ["robot", "learn"]


def test_acronym_query_hits_the_right_document(tmp_path):
    lex.build(DOCS, tmp_path)
    scores = scorer(tmp_path).scores("VLA")
    assert scores.argmax() == 2 and scores[0] == scores[1] == 0
