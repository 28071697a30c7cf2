"""The command's own bad input: files named in errors, option values checked before any work, and outputs
that never overwrite a source. Each case is the real command in a subprocess, checked for its exit code, its
one-line message and the user's files before and after."""

from __future__ import annotations

import os
import subprocess
import sys

from bad_input import ROWS, one_error_line, tree_hash, write_jsonl
from conftest import REPO, run_cli



def test_similar_file_errors_name_the_file(built, tmp_path):
    abstract = tmp_path / "abs.txt"
    abstract.write_text("   \n")
    one_error_line(run_cli("similar", "--file", str(abstract), "--index", str(built)), 2, f"{abstract}:", "empty")
    one_error_line(run_cli("similar", "--file", str(tmp_path / "nope.txt"), "--index", str(built)), 2,
                   "nope.txt: no such file")

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
