"""A duplicate check against a corpus file with bad records says how to skip them."""

from __future__ import annotations

import json

from bad_input import ROWS, one_error_line
from conftest import run_cli



def test_dedup_against_a_corpus_file_offers_the_skip_it_has(built, tmp_path):
    source = tmp_path / "last-year.jsonl"
    source.write_text(json.dumps(ROWS[0]) + "\n{broken\n")
    one_error_line(run_cli("dedup", "--index", str(built), "--against", str(source)), 2, "last-year.jsonl:2",
                   "--skip-invalid")
    result = run_cli("dedup", "--index", str(built), "--against", str(source), "--skip-invalid", "--json")
    assert result.returncode == 0, result.stderr
    groups = json.loads(result.stdout)["groups"]
    assert [g["kept"] for g in groups] == ["a"]
