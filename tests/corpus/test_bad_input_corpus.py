"""Bad records are named by file and line, refused or (asked to) skipped alone: one record never poisons an
index, ids are kept exactly or refused, and a value that does not fit its field's kind never disables a
filter. Each case is the real command in a subprocess."""

from __future__ import annotations

import json
import shutil

import pytest
from bad_input import ROWS, one_error_line, refused_then_skipped, tree_hash, write_jsonl, years_from
from conftest import run_cli

from embedsearch import Index


@pytest.mark.parametrize("row, phrases", [
    ({"id": "x", "abstract": 5}, ["field 'abstract' holds a number (5), not text"]),
    ({"id": "x", "abstract": ["a", "b"]}, ["field 'abstract' holds a list, not text"]),
    ({"id": "x\ny", "abstract": "fine text"}, ["line break or control character"]),
])
def test_records_with_the_wrong_shape(tmp_path, row, phrases):
    source = write_jsonl(tmp_path / "p.jsonl", [row])
    one_error_line(run_cli("build", str(source), "--index", str(tmp_path / "i")), 2, "p.jsonl:1", *phrases)
    assert not (tmp_path / "i").exists()

def test_jsonl_with_a_byte_order_mark_is_read_whole(tmp_path):
    source = tmp_path / "bom.jsonl"
    source.write_bytes(b"\xef\xbb\xbf" + "".join(json.dumps(r) + "\n" for r in ROWS[:2]).encode())
    run_cli("build", str(source), "--index", str(tmp_path / "i"), "--model", "hashing-384", check=True)
    from embedsearch import Index

    assert Index.load(tmp_path / "i").documents.ids == ["a", "b"]

def test_invalid_json_message_reads_cleanly(tmp_path):
    source = tmp_path / "p.jsonl"
    source.write_text('{"id": "x", "abstract": "unterminated\n')
    line = one_error_line(run_cli("build", str(source), "--index", str(tmp_path / "i")), 2,
                          "p.jsonl:1: invalid JSON: Unterminated string (column")
    assert " at at " not in line

def test_a_lone_surrogate_is_a_file_line_error_or_skipped(tmp_path):
    corpus = tmp_path / "s.jsonl"
    corpus.write_text('{"id": "a", "text": "fine text"}\n{"id": "b", "text": "bad \\ud800 text"}\n'
                      '{"id": "c", "text": "more text", "note": ["ok", "\\udfff"]}\n')
    skipped = refused_then_skipped(corpus, tmp_path / "i", f"{corpus}:2", "unpaired surrogate")
    assert f"{corpus}:2" in skipped.stderr and f"{corpus}:3" in skipped.stderr and "'note'" in skipped.stderr
    assert Index.load(tmp_path / "i").documents.ids == ["a"]

def test_ids_are_kept_exactly_or_refused_and_metadata_is_never_a_python_repr(tmp_path):
    import base64

    import pyarrow as pa
    import pyarrow.parquet as pq

    spaced = write_jsonl(tmp_path / "spaced.jsonl", [{"id": " p1 ", "text": "an abstract"}])
    one_error_line(run_cli("build", str(spaced), "--index", str(tmp_path / "x"), "--model", "hashing-384"), 2,
                   f"{spaced}:1", "' p1 '", "spaces around it")
    table = pa.table({"id": ["p1", "p2"], "text": ["first abstract", "second abstract"],
                      "blob": pa.array([b"\x00\x01", b"\xff"], pa.binary()),
                      "nested": [{"a": 1, "b": [1, 2]}, {"a": 2, "b": []}]})
    pq.write_table(table, tmp_path / "rows.parquet")
    run_cli("build", str(tmp_path / "rows.parquet"), "--index", str(tmp_path / "i"), "--model", "hashing-384",
            check=True)
    doc = Index.load(tmp_path / "i").documents.get([0])[0]
    assert base64.b64decode(doc.metadata["blob"]) == b"\x00\x01"
    assert json.loads(doc.metadata["nested"]) == {"a": 1, "b": [1, 2]}

def test_a_csv_record_with_an_unbalanced_quote_is_named_by_its_line_and_skipped_alone(tmp_path):
    corpus = tmp_path / "q.csv"
    corpus.write_text('id,text\na,"first abstract"\nb,"an unbalanced quote\nc,third abstract\n'
                      'd,"a quoted abstract\nover two lines"\ne,fifth abstract\n')
    skipped = refused_then_skipped(corpus, tmp_path / "i", f"{corpus}:3:", "check its quotes")
    assert "skipped 1 invalid record(s)" in skipped.stderr and f"{corpus}:3:" in skipped.stderr
    index = Index.load(tmp_path / "i")
    assert index.documents.ids == ["a", "c", "d", "e"]
    assert index.documents.get([2])[0].text == "a quoted abstract\nover two lines"

@pytest.mark.parametrize("line, phrases", [
    ('"year": [2019, 2020]', ("holds numbers in this index", "[2019, 2020]")),
    ('"year": "twenty"', ("holds numbers in this index", "'twenty'")),
    ('"year": true', ("holds numbers in this index", "True")),
    ('"year": Infinity', ("not a finite number",)),
    ('"year": 123456789012345678901234567890', ("beyond 64-bit integers",)),
    ('"big": 123456789012345678901234567890', ("field 'big'", "beyond 64-bit integers")),
])
def test_a_value_that_does_not_fit_its_field_is_refused_or_skipped_and_filters_keep_working(years, tmp_path, line,
                                                                                             phrases):
    index = tmp_path / "idx"
    shutil.copytree(years, index)
    source = tmp_path / "more.jsonl"
    source.write_text('{"id": "ok", "text": "graph networks again", "year": 2022}\n'
                      f'{{"id": "bad", "text": "graph networks once more", {line}}}\n')
    before = tree_hash(index)
    one_error_line(run_cli("add", str(source), "--index", str(index)), 2, f"{source}:2", *phrases)
    assert tree_hash(index) == before
    skipped = run_cli("add", str(source), "--index", str(index), "--skip-invalid", check=True)
    assert f"{source}:2" in skipped.stderr and "added 1 documents" in skipped.stderr
    assert years_from(index) == ["ok", "y2", "y3"]
    run_cli("compact", "--index", str(index), check=True)
    assert years_from(index) == ["ok", "y2", "y3"] and years_from(index, "year<2019") == ["y0"]

@pytest.mark.parametrize("value", ["null", '""', "NaN"])
def test_a_missing_value_is_accepted_and_never_disables_a_filter(years, tmp_path, value):
    index = tmp_path / "idx"
    shutil.copytree(years, index)
    source = tmp_path / "more.jsonl"
    source.write_text(f'{{"id": "unknown", "text": "graph networks of unknown year", "year": {value}}}\n')
    run_cli("add", str(source), "--index", str(index), check=True)
    assert years_from(index) == ["y2", "y3"] and "unknown" in years_from(index, "year!=2019")
    run_cli("compact", "--index", str(index), check=True)
    assert years_from(index) == ["y2", "y3"]

@pytest.mark.parametrize("value, phrase", [
    ('["a", "b"]', 'id ["a", "b"]'), ('{"a": 1}', "is an object"), ("true", "is a boolean"), ("1.5", "decimal number"),
])
def test_ids_that_are_not_text_or_whole_numbers_are_refused_in_build_and_add(years, tmp_path, value, phrase):
    source = tmp_path / "ids.jsonl"
    source.write_text('{"id": 7, "text": "a whole-number id"}\n' f'{{"id": {value}, "text": "another abstract"}}\n')
    one_error_line(run_cli("build", str(source), "--index", str(tmp_path / "new"), "--model", "hashing-384"), 2,
                   f"{source}:2", phrase, "text or a whole number")
    assert not (tmp_path / "new").exists()
    index = tmp_path / "idx"
    shutil.copytree(years, index)
    before = tree_hash(index)
    one_error_line(run_cli("add", str(source), "--index", str(index)), 2, f"{source}:2", phrase)
    assert tree_hash(index) == before
    run_cli("add", str(source), "--index", str(index), "--skip-invalid", check=True)
    assert "7" in Index.load(index).documents.row_of

def test_a_library_document_id_must_be_text(tmp_path):
    from embedsearch import Document
    from embedsearch.errors import InputError

    with pytest.raises(InputError, match="a Document's id is text"):
        Index.build([Document(7, "an abstract")], tmp_path / "i", model="hashing-384")
    assert not (tmp_path / "i").exists()

def test_a_huge_integer_in_a_build_is_one_line(tmp_path):
    source = tmp_path / "big.jsonl"
    source.write_text('{"id": "g1", "text": "an abstract", "n": 123456789012345678901234567890}\n')
    one_error_line(run_cli("build", str(source), "--index", str(tmp_path / "i"), "--model", "hashing-384"), 2,
                   f"{source}:1", "field 'n'", "beyond 64-bit integers")
