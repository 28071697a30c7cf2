"""Topics under bad input: damaged topic results never break a search, and a missing level or output folder
fails before any work, writing nothing."""

from __future__ import annotations

import shutil

from bad_input import one_error_line, tree_hash
from conftest import run_cli



def test_damaged_topic_results_never_break_search(copy):
    (copy / "topics" / "abc123").mkdir(parents=True)
    (copy / "topics" / "abc123" / "model.json").write_text("{not json")
    result = run_cli("search", "spiking", "--index", str(copy), "-k", "1")
    assert result.returncode == 0 and "Spiking nets" in result.stdout, result.stderr

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
