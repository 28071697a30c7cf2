"""Why each hit matched (retrieval/evidence.py): the query words that matched it with their shares of its
BM25 score, and its sentence closest in meaning to the query (by the model's word-piece vectors)."""

from __future__ import annotations

import pytest

from embedsearch.store.sentences import split as sentences
from embedsearch.retrieval.answer import Answer

pytestmark = pytest.mark.xdist_group("papers")  # one worker embeds the 240 papers (conftest's papers fixture), not each


def test_every_hit_says_which_words_matched_and_their_shares(papers):
    from embedsearch.store.lexical import Tokenizer

    index, _ = papers
    tokenize = Tokenizer.of(index.manifest.lexical)
    query = "randomized trial of herding in discussions"
    for hit in index.find(query, 10):
        shares = hit.evidence["words"]
        held = set(tokenize(f"{hit.title} {hit.title} {hit.text}"))
        assert {w["word"] for w in shares} == {w for w in query.split() if set(tokenize(w)) & held}
        if shares:
            assert sum(w["share"] for w in shares) == pytest.approx(1, abs=1e-3)
            assert [w["share"] for w in shares] == sorted((w["share"] for w in shares), reverse=True)
    top = index.find("herding herding discussions", 1)[0].evidence["words"]
    assert top[0]["word"] == "herding" and top[0]["share"] > 0.5


def test_the_sentence_closest_to_the_query_is_chosen_not_the_first(papers):
    index, _ = papers
    chosen = 0
    for doc in index.documents.get(range(60)):
        spans = sentences(doc.text)
        if len(spans) < 4:
            continue
        start, end = spans[-2]
        answer = index.find(doc.text[start:end], 1)
        if not answer or answer[0].id != doc.id:
            continue
        assert answer[0].evidence["sentence"] == [start, end], (doc.id, answer[0].evidence)
        assert answer[0].evidence["sentence_by"] == "meaning"
        chosen += 1
    assert chosen >= 10


def test_sentences_break_at_stops_not_inside_numbers_or_abbreviations():
    text = "We use e.g. the method. It gains 1.5 points! Next (a) one? Results in Fig. 3 show that the U.S. " \
           "Census data is noisy. Sec. 4 details the method, e.g. the loss. Ménage à trois — naïve. Done."
    assert [text[a:b] for a, b in sentences(text)] == [
        "We use e.g. the method.", "It gains 1.5 points!", "Next (a) one?",
        "Results in Fig. 3 show that the U.S. Census data is noisy.", "Sec. 4 details the method, e.g. the loss.",
        "Ménage à trois — naïve.", "Done."]


def test_an_empty_answer_needs_no_evidence(papers):
    from embedsearch.retrieval.evidence import explain

    index, _ = papers
    assert explain(index.snapshot, Answer((), 1), "anything").hits == ()


def _closest_by_tokenizing(index, hit, query: str) -> list[int]:
    """The reference: every sentence of the hit tokenized now and embedded by the word-piece vectors."""
    import numpy as np

    from embedsearch.embedding.piece_vectors import StaticVectors

    static = StaticVectors.of(index.manifest.model.settings.model)
    spans = sentences(hit.text)
    scores = static.embed([hit.text[a:b] for a, b in spans]) @ static.embed([query])[0]
    return list(spans[int(np.argmax(scores))])


def test_the_stored_sentences_pick_what_tokenizing_each_sentence_now_would(papers):
    """Evidence reads each segment's stored spans and word pieces (store/sentences.py); the sentence it picks is
    the one a query-time pass over the whole text picks, on every hit of fixed queries."""
    index, _ = papers
    queries = ["star formation in molecular clouds", "random matrices and their eigenvalues",
               "superconducting phase transition in thin films", "herding in online discussions", "dark matter halos"]
    differs, multi = 0, 0
    for query in queries:
        for hit in index.find(query, 10):
            multi += len(sentences(hit.text)) > 2
            differs += hit.evidence["sentence"] != _closest_by_tokenizing(index, hit, query)
    assert multi >= 30 and differs == 0


def test_the_sentences_are_written_with_each_segment_and_recorded(papers):
    import json

    index, _ = papers
    for segment in index.snapshot.segments:
        recorded = json.loads((segment.folder / "segment.json").read_text())["files"]
        assert {"sentences/spans.npy", "sentences/pieces.npy", "sentences/norms.npy", "words/rows.npy"} <= set(recorded)


def test_a_later_page_explains_only_its_own_hits(papers):
    index, _ = papers
    first = index.find("dark matter halos in galaxies", 5)
    later = index.find("dark matter halos in galaxies", 5, offset=5)
    assert [h.id for h in later[:5]] == [h.id for h in first]
    assert all(h.evidence is None for h in later[:5]) and all(h.evidence["sentence"] for h in later[5:])
    assert len(later) == 10 and [h.rank for h in later] == list(range(1, 11))
