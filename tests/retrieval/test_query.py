"""The query grammar (retrieval/query.py, find.py) on real papers: each operator narrows what a plain search
of the same words returns (so each test fails when its operator is ignored), results can come newest first,
and a malformed query is one line, exit 2, quoting the token."""

from __future__ import annotations

import pytest
from conftest import run_cli

from embedsearch import InputError
from embedsearch.retrieval.query import plain

pytestmark = pytest.mark.xdist_group("papers")  # one worker embeds the 240 papers (conftest's papers fixture), not each


def both(index, query: str, plain_query: str, k: int = 15):
    """The grammar's hits and a plain search's for the same words."""
    return index.find(query, k), index.search(plain_query, k)


def text(hit) -> str:
    return plain(f"{hit.title} {hit.text}")


def test_a_phrase_is_required_as_written(papers):
    index, _ = papers
    found, loose = both(index, '"peer review"', "peer review")
    assert found and all(" peer review " in text(h) for h in found)
    assert any(" peer review " not in text(h) for h in loose)


def test_a_word_and_a_phrase_are_excluded(papers):
    index, _ = papers
    found, loose = both(index, "learning -neural -\"language models\"", "learning")
    assert len(found) == 15 and all(" neural " not in text(h) and " language models " not in text(h) for h in found)
    assert any(" neural " in text(h) for h in loose)


def test_an_author_is_any_author_by_whole_words_ignoring_case_and_accents(papers):
    index, rows = papers
    found, loose = both(index, "learning author:SHAH", "learning")
    assert found and all(any("shah" in plain(a).split() for a in rows[h.id]["authors"]) for h in found)
    assert any("Shah" not in " ".join(rows[h.id].get("authors", [])) for h in loose)
    assert index.find('learning author:"nihar b. shah"', 15) == found
    assert index.find("learning author:sha", 15) == []  # whole words, not a prefix


def test_a_title_term_must_be_in_the_title(papers):
    index, _ = papers
    found, loose = both(index, "learning title:review", "learning review")
    assert found and all(" review " in plain(h.title) for h in found)
    assert any(" review " not in plain(h.title) for h in loose)


@pytest.mark.parametrize("query, low, high", [("learning year:2015..2019", 2015, 2019),
                                               ("learning year:>=2020", 2020, 9999), ("learning year:2007", 2007, 2007)])
def test_years_bound_the_results(papers, query, low, high):
    index, rows = papers
    found, loose = both(index, query, "learning", 30)
    assert found and all(low <= rows[h.id]["year"] <= high for h in found)
    assert any(not low <= rows[h.id]["year"] <= high for h in loose)


def test_a_query_of_narrowing_terms_only_searches_for_them(papers):
    index, rows = papers
    found = index.find("author:shah", 10)
    assert found and all(any("shah" in plain(a).split() for a in rows[h.id]["authors"]) for h in found)
    assert index.find("learning year:2019..2015", 30) == index.find("learning year:2015..2019", 30)


def test_newest_and_oldest_first(papers):
    index, rows = papers
    newest = [rows[h.id]["year"] for h in index.find("learning", 20, sort="newest")]
    oldest = [rows[h.id]["year"] for h in index.find("learning", 20, sort="oldest")]
    assert newest == sorted(newest, reverse=True) and oldest == sorted(oldest)
    assert newest != [rows[h.id]["year"] for h in index.find("learning", 20)]
    assert [h.rank for h in index.find("learning", 20, sort="newest")] == list(range(1, 21))


@pytest.mark.parametrize("query, phrase", [("learning year:abc", "'year:abc' is not a year"),
                                           ("learning venue:nips", "unknown field 'venue' in 'venue:nips'"),
                                           ('learning author:""', "names no value")])
def test_a_malformed_query_is_one_line_exit_2_naming_the_token(papers, query, phrase):
    index, _ = papers
    with pytest.raises(InputError, match=phrase):
        index.find(query)
    result = run_cli("search", query, "--index", str(index.path))
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert result.returncode == 2 and len(errors) == 1 and phrase in errors[0] and result.stdout == ""


def test_the_cli_sorts_and_explains(papers):
    index, _ = papers
    result = run_cli("search", '"peer review"', "--index", str(index.path), "--explain", "--sort", "newest",
                     "-k", "3", check=True)
    lines = result.stdout.splitlines()
    assert sum(line.strip().startswith("matched peer") or line.strip().startswith("matched review")
               for line in lines) == 3, result.stdout
    assert "newest first" in result.stdout


def test_the_pattern_the_api_states_refuses_exactly_what_the_parser_refuses():
    """REFUSED is what the API's schema says a query may not hold; the parser must agree on any text."""
    import re

    from hypothesis import example, given, settings
    from hypothesis import strategies as st

    from embedsearch.retrieval.query import REFUSED, parse

    refused = re.compile(REFUSED)
    tokens = st.sampled_from(["x", "author:", "title:", "year:", "Year:", "foo:", "-", '"', "..", "2020", ">=",
                              "19", " ", "  ", "a b", "http://", ":", "abc", "é"])

    @settings(max_examples=2000, deadline=None, database=None)
    @given(st.lists(tokens, min_size=1, max_size=8).map("".join))
    @example('" year:"').via("a field's name inside a phrase, found by this test once")
    @example('a "b foo:c" d').via("an unknown field inside a phrase")
    def agree(query):
        try:
            parse(query)
            accepted = True
        except InputError:
            accepted = False
        assert accepted != bool(refused.search(query)), query

    agree()
