"""Why each hit matched (retrieval/evidence.py): the query words that matched it with their shares of its
BM25 score, and its sentence closest in meaning to the query (by the model's word-piece vectors)."""

from __future__ import annotations

import pytest

from embedsearch.retrieval.evidence import sentences
from embedsearch.retrieval.search import Answer


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
    text = "We use e.g. the method. It gains 1.5 points! Next (a) one? $x$ holds."
    assert [text[a:b] for a, b in sentences(text)] == ["We use e.g. the method.", "It gains 1.5 points!",
                                                       "Next (a) one?", "$x$ holds."]


def test_an_empty_answer_needs_no_evidence(papers):
    from embedsearch.retrieval.evidence import explain

    index, _ = papers
    assert explain(index.snapshot, Answer((), 1), "anything").hits == ()
