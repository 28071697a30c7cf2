"""Filters and queries never give a silent wrong answer: a filter that can never match is an error naming
why, one that can answers as the records say, and a query needs a letter or a digit. Each case is the real
command in a subprocess."""

from __future__ import annotations


import pytest
from bad_input import CONDITIONS, VALUES, holds, ids_for, one_error_line, write_jsonl, years_from
from conftest import run_cli

from embedsearch import Index


def test_double_equals_and_whole_floats_filter_like_equals(built):
    assert ids_for(built, "year==2024") == ids_for(built, "year=2024") == ["a"]
    assert ids_for(built, "year=2024.0") == ["a"]
    assert ids_for(built, "venue==neurips") == ["a"]
    assert ids_for(built, "authors=Ada") == ["a", "c"]

@pytest.mark.parametrize("condition, phrases", [
    ("venue>=5", ["'venue' holds text", "use venue=VALUE"]),
    ("year>=nan", ["needs a finite number"]),
    ("year<inf", ["needs a finite number"]),
    ("year=2024.5", ["'year' holds whole numbers", "can never match"]),
    ("year=twenty", ["'year' holds whole numbers"]),
    ("authors>2", ["'authors' holds text"]),
    ("year=>2024", ["unexpected"]),
])
def test_filters_that_can_never_match_are_errors(built, condition, phrases):
    result = run_cli("search", "networks", "--index", str(built), "--filter", condition)
    one_error_line(result, 2, *phrases)
    assert result.stdout == ""

def test_queries_need_a_letter_or_digit(built, tmp_path):
    nul = tmp_path / "q.txt"
    nul.write_bytes(b"\x00\x00\x00\n")
    one_error_line(run_cli("search", "--queries", str(nul), "--index", str(built)), 2, "q.txt:1", "no letters")
    one_error_line(run_cli("search", "?!…", "--index", str(built)), 2, "no letters or digits")

def test_a_filter_on_a_text_field_quotes_the_value_that_is_not_a_number(tmp_path):
    rows = [{"id": f"p{i}", "text": f"abstract number {i}", "year": y} for i, y in enumerate(["2020", "twenty"])]
    corpus = write_jsonl(tmp_path / "mixed.jsonl", rows)
    run_cli("build", str(corpus), "--index", str(tmp_path / "i"), "--model", "hashing-384", check=True)
    one_error_line(run_cli("search", "abstract", "--index", str(tmp_path / "i"), "--filter", "year>=2020"), 2,
                   "'year' holds text (e.g. 'twenty')")

def test_a_list_of_numbers_matches_a_comparison_by_any_element(tmp_path):
    rows = [{"id": "a", "text": "graph networks", "years": [2019, 2021]},
            {"id": "b", "text": "graph networks too", "years": [2017]}, {"id": "c", "text": "graph nets", "years": 2022}]
    run_cli("build", str(write_jsonl(tmp_path / "l.jsonl", rows)), "--index", str(tmp_path / "i"), "--model",
            "hashing-384", check=True)
    assert years_from(tmp_path / "i", "years>=2020") == ["a", "c"]
    assert years_from(tmp_path / "i", "years!=2019") == ["b", "c"]

def test_filters_answer_as_the_records_say_after_any_sequence_of_accepted_adds(tmp_path):
    import random

    from embedsearch import Document
    from embedsearch.store.settings import StoreSettings

    rng = random.Random(0)
    kept = [Document("d0", "graph w0", metadata={"year": 2018, "tags": ["a"], "years": [2018]})]
    index = Index.build(kept, tmp_path / "i", model="hashing-384", storage=StoreSettings(grace_seconds=0))
    for step in range(1, 13):
        batch = [Document(f"d{step}.{j}", f"graph w{step} w{j}",
                          metadata={f: rng.choice(v) for f, v in VALUES.items() if rng.random() < 0.75})
                 for j in range(rng.randint(1, 3))]
        index.add(batch)
        kept += batch
        if step % 5 == 0:
            gone = rng.choice(kept[1:])
            index.remove([gone.id])
            kept.remove(gone)
        if step % 4 == 0:
            index.compact()
        for condition in CONDITIONS:
            got = sorted(h.id for h in index.search("graph", len(index), mode="dense", filters=[condition]))
            want = sorted(d.id for d in kept if holds(d.metadata.get(condition.split("<")[0].split(">")[0]
                                                                     .split("!")[0].split("=")[0]), condition))
            assert got == want, (step, condition)
    assert index.snapshot.field_kinds == {"year": "number", "tags": "list of text", "years": "list of numbers"}
