"""Bad input against the index folder never destroys data: a build refuses what is not its index, a damaged
file is one line with exit 3, and a failed command leaves the folder byte for byte as it was. Each case is the
real command in a subprocess."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys

import numpy as np
import pytest
from bad_input import one_error_line, part, tree_hash, truncate, write_jsonl
from conftest import REPO, run_cli

from embedsearch import Index


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

def test_add_through_a_symlink_writes_the_real_index(tmp_path, copy):
    link = tmp_path / "current"
    link.symlink_to(copy)
    extra = write_jsonl(tmp_path / "new.jsonl", [{"id": "d", "abstract": "Graph networks for protein folding."}])
    run_cli("add", str(extra), "--index", str(link), check=True)
    assert link.is_symlink() and os.readlink(link) == str(copy)
    assert not list(tmp_path.glob(".current*"))
    from embedsearch import Index

    assert "d" in Index.load(copy).documents.row_of

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

def test_symlink_loop_and_empty_index_option(tmp_path, corpus):
    loop = tmp_path / "loop.jsonl"
    loop.symlink_to(loop)
    one_error_line(run_cli("build", str(loop), "--index", str(tmp_path / "i")), 2, "symbolic link loop")
    one_error_line(run_cli("build", str(corpus), "--index", ""), 2, "--index is empty")
    one_error_line(run_cli("search", "x", "--index", ""), 2, "--index is empty")

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
