"""Files a command writes for its user (cli/output.py): never inside an index, never over a source, never
over an existing file without --force, and never half-written."""

import json
from pathlib import Path

import pytest
from conftest import run_cli
from bad_input import one_error_line, tree_hash, write_jsonl

from embedsearch import Index, InputError
from embedsearch.cli.output import check_output
from embedsearch.disk.durable import durable_file as output_file


@pytest.fixture()
def corpus_index(tmp_path):
    """A small index built from a JSONL corpus with two near-identical abstracts (so dedup finds a pair)."""
    text = "Sparse attention for long documents cuts memory while keeping accuracy on retrieval benchmarks."
    rows = [{"id": "a", "text": text}, {"id": "b", "text": text + " We release code."}]
    rows += [{"id": f"o{i}", "text": f"Topic number {i} about subject {i} with words {i * 7}."} for i in range(6)]
    corpus = write_jsonl(tmp_path / "corpus.jsonl", rows)
    run_cli("build", str(corpus), "--index", str(tmp_path / "idx"), "--model", "hashing-384", check=True)
    return corpus, tmp_path / "idx"


@pytest.mark.parametrize("option", ["--csv", "--write-kept"])
def test_dedup_outputs_never_overwrite_the_index_or_its_source(corpus_index, option):
    corpus, index = corpus_index
    before, source = tree_hash(index), corpus.read_bytes()
    one_error_line(run_cli("dedup", "--index", str(index), option, str(index / "manifest.json"), "--force"), 2,
                   "inside the index folder")
    one_error_line(run_cli("dedup", "--index", str(index), option, str(corpus), "--force"), 2,
                   "a file an index was built from")
    assert tree_hash(index) == before and corpus.read_bytes() == source
    assert run_cli("info", "--index", str(index)).returncode == 0


def test_an_existing_output_is_replaced_only_with_force(corpus_index, tmp_path):
    _, index = corpus_index
    report = tmp_path / "pairs.csv"
    report.write_text("mine\n")
    one_error_line(run_cli("dedup", "--index", str(index), "--csv", str(report)), 2, "already exists", "--force")
    assert report.read_text() == "mine\n"
    run_cli("dedup", "--index", str(index), "--csv", str(report), "--force", check=True)
    assert report.read_text().startswith("group,kept,also kept,a,b,verdict")
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".pairs")) == []


def test_the_map_is_not_written_inside_an_index_or_over_a_file(corpus_index, tmp_path):
    _, index = corpus_index
    before = tree_hash(index)
    one_error_line(run_cli("map", "--index", str(index), "--out", str(index / "segments" / "map.html")), 2,
                   "inside the index folder")
    page = tmp_path / "map.html"
    page.with_suffix(".png").write_bytes(b"an image I keep")
    one_error_line(run_cli("map", "--index", str(index), "--out", str(page), "--png"), 2, "--png", "already exists")
    assert tree_hash(index) == before and not page.exists()
    assert page.with_suffix(".png").read_bytes() == b"an image I keep"


def test_a_failed_write_leaves_the_old_file_and_no_temporary_one(tmp_path):
    target = tmp_path / "kept.jsonl"
    target.write_text("old\n")
    with pytest.raises(ZeroDivisionError), output_file(target) as fh:
        fh.write("new, half written")
        1 / 0
    assert target.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["kept.jsonl"]
    with output_file(target) as fh:
        fh.write(json.dumps({"id": "x"}) + "\n")
    assert target.read_text() == '{"id": "x"}\n'


def test_check_output_follows_links_to_what_they_name(corpus_index, tmp_path):
    _, index = corpus_index
    link = tmp_path / "innocent.csv"
    link.symlink_to(index / "manifest.json")
    with pytest.raises(InputError, match="inside the index folder"):
        check_output(link, "--csv", force=True)
    assert check_output(Path(tmp_path / "new.csv"), "--csv") == (tmp_path / "new.csv").resolve()


@pytest.mark.parametrize("command", [["dedup", "--csv"], ["dedup", "--write-kept"], ["map", "--out"]])
def test_outputs_never_overwrite_a_file_given_to_add(corpus_index, tmp_path, command):
    _, index = corpus_index
    (tmp_path / "extra").mkdir()
    extra = write_jsonl(tmp_path / "extra" / "more.jsonl",
                        [{"id": "n1", "text": "Graph networks for protein structure prediction from sequences."}])
    run_cli("add", str(extra), "--index", str(index), check=True)
    assert str(extra.resolve()) in Index.load(index).sources
    before = extra.read_bytes()
    one_error_line(run_cli(*command[:1], "--index", str(index), command[1], str(extra), "--force"), 2,
                   "read by `add`")
    assert extra.read_bytes() == before
