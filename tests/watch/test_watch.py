"""Watches (watch/): a saved search lists exactly the matching papers added since it last ran, then nothing
until more arrive; the files it keeps survive compact and a rebuild; the Atom feed parses; bad watches are
one line, exit 2."""

from __future__ import annotations

import json
import shutil
from xml.etree import ElementTree as ET

import pytest
from conftest import run_cli

from embedsearch import Document, Index
from embedsearch.watch import Watch, add, listed, run

pytestmark = pytest.mark.xdist_group("papers")  # one worker embeds the 240 papers (conftest's papers fixture), not each

NEW = [Document("new-galaxy", "We map dark matter halos around galaxy clusters with weak gravitational lensing.",
                "Weak lensing of galaxy clusters", {"year": 2024}),
       Document("new-review", "A randomized study of bias in conference peer review and reviewer assignment.",
                "Bias in peer review", {"year": 2024}),
       Document("new-galaxy-2", "Star formation histories of dwarf galaxies from deep imaging surveys.",
                "Dwarf galaxy star formation", {"year": 2025})]


@pytest.fixture()
def copy(papers, tmp_path):
    index, _ = papers
    shutil.copytree(index.path, tmp_path / "idx")
    return Index.load(tmp_path / "idx")


def test_a_watch_lists_exactly_what_arrived_since_it_last_ran(copy):
    add(copy, Watch("galaxies", "galaxy star formation"))
    assert [h.id for h in run(copy, "galaxies").answer] == []  # nothing arrived yet: old papers never show
    copy.add(NEW)
    first = run(copy, "galaxies")
    assert first.arrived == 3 and {h.id for h in first.answer} == {"new-galaxy", "new-galaxy-2"}
    assert first.answer[0].id == "new-galaxy-2" and first.watch.runs == 2
    again = run(copy, "galaxies")
    assert again.arrived == 0 and again.answer == []
    copy.remove(["new-galaxy"])
    copy.add([Document("newer", "Galaxy mergers drive star formation bursts in the early universe.", "Mergers")])
    assert [h.id for h in run(copy, "galaxies").answer] == ["newer"]


def test_a_watch_from_liked_papers_and_its_grammar(copy, papers):
    _, rows = papers
    liked = [i for i, r in rows.items() if r["label"] == "reviewers" and "review" in r["title"].lower()][:2]
    add(copy, Watch("reviewing", like=tuple(liked)))
    add(copy, Watch("no-bias", '"peer review" -bias'))
    copy.add(NEW)
    assert [h.id for h in run(copy, "reviewing").answer] == ["new-review"]
    assert [h.id for h in run(copy, "no-bias").answer] == []


def test_watches_survive_compact_and_a_rebuild(copy, tmp_path):
    add(copy, Watch("galaxies", "galaxy star formation"))
    copy.add(NEW[:1])
    copy.compact()
    assert [w.name for w in listed(copy.path)] == ["galaxies"]
    source = tmp_path / "again.jsonl"
    source.write_text("".join(json.dumps({"id": d.id, "title": d.title, "text": d.text}) + "\n"
                              for d in [*copy.documents.get(range(len(copy))), *NEW[1:]]))
    rebuilt = Index.from_sources([source], copy.path)
    assert {h.id for h in run(rebuilt, "galaxies").answer} == {"new-galaxy", "new-galaxy-2"}
    assert [w.name for w in listed(rebuilt.path)] == ["galaxies"]


def test_the_cli_runs_watches_and_writes_an_atom_feed(copy, tmp_path):
    new = tmp_path / "new.jsonl"
    new.write_text("".join(json.dumps({"id": d.id, "title": d.title, "text": d.text}) + "\n" for d in NEW))
    run_cli("watch", "add", "galaxies", "galaxy star formation", "--index", str(copy.path), check=True)
    run_cli("add", str(new), "--index", str(copy.path), check=True)
    feed = tmp_path / "feed.xml"
    result = run_cli("watch", "run", "--index", str(copy.path), "--json", "--atom", str(feed), check=True)
    [line] = result.stdout.splitlines()
    assert {h["id"] for h in json.loads(line)["hits"]} == {"new-galaxy", "new-galaxy-2"}
    entries = ET.parse(feed).getroot().findall("{http://www.w3.org/2005/Atom}entry")
    assert {e.find("{http://www.w3.org/2005/Atom}title").text for e in entries} == {
        "Weak lensing of galaxy clusters", "Dwarf galaxy star formation"}
    listing = run_cli("watch", "list", "--index", str(copy.path), check=True).stdout
    assert "galaxies: galaxy star formation" in listing and "1 runs" in listing


@pytest.mark.parametrize("args, phrase", [
    (["add", "bad name", "x"], "watch name 'bad name'"), (["add", "w"], "needs a QUERY"),
    (["add", "w", "x year:abc"], "'year:abc'"), (["add", "w", "--like", "nope"], "'nope'"),
    (["run", "missing"], "no watch named 'missing'"), (["run"], "keeps no watches")])
def test_bad_watches_are_one_line_exit_2(copy, args, phrase):
    result = run_cli("watch", *args, "--index", str(copy.path))
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert result.returncode == 2 and len(errors) == 1 and phrase in errors[0], result.stderr
    assert not (copy.path / "watches").exists() or not list((copy.path / "watches").iterdir())
