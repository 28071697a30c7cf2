"""Reviewer affinity (``reviewers``): the aggregate of a reviewer's best publications, the readers of
archives, submissions and publication files, the conflict rule, and the ``affinity`` command end to end."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli

from embedsearch import Document
from embedsearch.reviewers import AffinitySettings, ConflictSettings, Matcher, Reviewers, Submissions
from embedsearch.reviewers.affinity import scores
from embedsearch.reviewers.conflicts import from_authors

pytestmark = pytest.mark.xdist_group("papers")  # one worker embeds the 240 papers (conftest's papers fixture), not each


def unit(*rows) -> np.ndarray:
    m = np.asarray(rows, dtype=np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def test_a_reviewer_scores_the_harmonic_sum_of_their_best_publications():
    submissions = unit([1, 0, 0])
    publications = unit([1, 0, 0], [0.6, 0.8, 0], [0, 1, 0], [0.8, 0.6, 0])
    owner = np.array([0, 0, 0, 1])
    got = scores(submissions, publications, owner, 2, AffinitySettings(top=2, power=1.0))
    assert got[0, 0] == pytest.approx(1.0 + 0.6 / 2) and got[0, 1] == pytest.approx(0.8)
    got = scores(submissions, publications, owner, 2, AffinitySettings(top=1))
    assert got[0].tolist() == pytest.approx([1.0, 0.8])


def write_archive(folder: Path, reviewer: str, papers: list[dict]) -> None:
    folder.mkdir(exist_ok=True)
    (folder / f"{reviewer}.jsonl").write_text("".join(json.dumps(p) + "\n" for p in papers))


@pytest.fixture(scope="module")
def panel(tmp_path_factory, bundled_docs):
    """Three reviewers, each the author of three bundled abstracts, and three submissions drawn from them."""
    root = tmp_path_factory.mktemp("panel")
    for r, start in (("~Ada_Lovelace1", 0), ("~Bo_Chen1", 10), ("~Cy_Diaz1", 20)):
        name = r[1:-1].replace("_", " ")
        write_archive(root / "archives", r, [
            {"id": f"{r}-{i}", "content": {"title": d.first_sentence(80), "abstract": d.text, "authors": [name, "Zed Coauthor"],
                                           "year": 2024}}
            for i, d in enumerate(bundled_docs[start:start + 3])])
    subs = {f"sub{k}": {"id": f"sub{k}", "content": {"title": None, "abstract": bundled_docs[i].text,
                                                     "authors": authors}}
            for k, (i, authors) in enumerate([(1, ["Someone Else"]), (11, ["Zed Coauthor"]), (21, ["cy  DIAZ"])])}
    (root / "submissions.json").write_text(json.dumps(subs))
    return root


def test_each_submission_finds_the_reviewer_who_wrote_on_its_subject_with_evidence(panel, tmp_path):
    matcher = Matcher.open(panel / "archives", folder=tmp_path / "profiles")
    table = matcher.table(Submissions.read([panel / "submissions.json"], matcher.publications.model_name))
    best = {p.submission: p for p in table.pairs(keep=1)}
    assert {s: p.reviewer for s, p in best.items()} == {"sub0": "~Ada_Lovelace1", "sub1": "~Bo_Chen1",
                                                        "sub2": "~Cy_Diaz1"}
    evidence = best["sub0"].evidence[0]
    assert evidence.id == "~Ada_Lovelace1-1" and evidence.similarity > 0.95 and evidence.title
    again = Matcher.open(panel / "archives", folder=tmp_path / "profiles")
    segments = [[s.name for s in m.publications.snapshot.segments] for m in (matcher, again)]
    assert segments[0] == segments[1]  # the same index reused: nothing rebuilt or embedded again


def test_authors_conflict_by_name_and_by_recent_coauthorship(panel, tmp_path):
    reviewers = Reviewers.read(panel / "archives")
    subs = Submissions.read([panel / "submissions.json"], "hashing-384")
    found = from_authors(subs.documents, reviewers)
    named = {(subs.ids[s], reviewers.ids[r]): why for (s, r), why in found.items()}
    assert "names the reviewer" in named[("sub2", "~Cy_Diaz1")]
    assert {k for k in named if k[0] == "sub1"} == {("sub1", r) for r in reviewers.ids}  # Zed wrote with all three
    assert not any(k[0] == "sub0" for k in named)


def test_only_recent_coauthors_conflict():
    papers = (Document("p1", "old work", metadata={"authors": ["Rae Self", "Old Friend"], "year": 2010}),
              Document("p2", "new work", metadata={"authors": ["Rae Self", "New Friend"], "year": 2024}))
    reviewers = Reviewers(("r",), papers, np.array([0, 0]))
    submissions = [Document("s1", "x", metadata={"authors": ["Old Friend"]}),
                   Document("s2", "y", metadata={"authors": ["new friend"]}),
                   Document("s3", "z", metadata={"authors": "Rae Self and Someone"})]
    assert sorted(from_authors(submissions, reviewers, ConflictSettings(years=3))) == [(1, 0), (2, 0)]
    assert sorted(from_authors(submissions, reviewers, ConflictSettings(years=20))) == [(0, 0), (1, 0), (2, 0)]


def test_the_command_writes_scores_marks_conflicts_and_explains_each_pair(panel, tmp_path):
    out = tmp_path / "scores.csv"
    result = run_cli("affinity", "--reviewers", str(panel / "archives"), "--submissions",
                     str(panel / "submissions.json"), "--all", "--out", str(out), "--json", "--model", "hashing-384",
                     "--profiles", str(tmp_path / "p"), check=True)
    with out.open() as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0])[:3] == ["submission", "reviewer", "score"] and len(rows) == 9
    assert {r["reviewer"] for r in rows if r["submission"] == "sub1" and r["conflict"]} == \
        {"~Ada_Lovelace1", "~Bo_Chen1", "~Cy_Diaz1"}
    pairs = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(pairs) == 9 and all(len(p["evidence"]) == 3 and p["evidence"][0]["title"] for p in pairs)
    assert "from 0 to 2.93" in result.stderr and "not a cosine" in result.stderr  # the scale, stated
    assert all(r["submission title"] for r in rows)  # beside the ids, for the chair who reads the file
    assert {r["reviewer"]: r["reviewer name"] for r in rows}["~Ada_Lovelace1"] == "Ada Lovelace"
    top = run_cli("affinity", "--reviewers", str(panel / "archives"), "--submissions", str(panel / "submissions.json"),
                  "--top", "2", "--out", str(tmp_path / "top.csv"), "--model", "hashing-384", "--profiles",
                  str(tmp_path / "p"), check=True)
    assert len((tmp_path / "top.csv").read_text().splitlines()) == 1 + 3 * 2 and "embedding" not in top.stderr


def test_submissions_from_an_index_are_not_embedded_again(bundled_index, panel, tmp_path):
    subs = Submissions.of(bundled_index)
    assert len(subs.documents) == len(bundled_index) and subs.vectors.shape == (len(bundled_index), 384)
    assert np.array_equal(subs.vectors[3], np.asarray(bundled_index.embeddings[[3]])[0])


def test_a_publications_file_with_a_reviewer_field_is_read_like_archives(tmp_path):
    (tmp_path / "pubs.csv").write_text("reviewer,id,title,abstract\nr1,p1,Graphs,Graph networks.\n"
                                       "r2,p1,Graphs,Graph networks.\nr1,p2,Bandits,Regret bounds.\n")
    reviewers = Reviewers.read(tmp_path / "pubs.csv")
    assert reviewers.ids == ("r1", "r2") and [d.id for d in reviewers.of(0)] == ["p1", "p2"]


@pytest.mark.parametrize("files, phrases", [
    ({"~a.jsonl": ""}, ("~a.jsonl", "has no publications")),
    ({"~a.jsonl": '{"id": "p1", "content": {"authors": ["A"]}}\n'}, ("~a.jsonl:1", "neither a title nor an abstract")),
    ({"~a.jsonl": '{"id": "p1", "title": "T", "abstract": "x"}\n{"id": "p1", "title": "U", "abstract": "y"}\n'},
     ("~a.jsonl:2", "appears twice for reviewer '~a'")),
    ({"~a.jsonl": '{"id": "p1", "title": "T", "abstract": "x"\n'}, ("~a.jsonl:1", "invalid JSON")),
])
def test_bad_archives_are_one_line_naming_the_file_and_line(tmp_path, files, phrases):
    write_archive(tmp_path / "archives", "~ok", [{"id": "q", "title": "Fine", "abstract": "A fine abstract."}])
    for name, content in files.items():
        (tmp_path / "archives" / name).write_text(content)
    (tmp_path / "subs.jsonl").write_text('{"id": "s1", "abstract": "An abstract."}\n')
    result = run_cli("affinity", "--reviewers", str(tmp_path / "archives"), "--submissions", str(tmp_path / "subs.jsonl"),
                     "--out", str(tmp_path / "scores.csv"), "--model", "hashing-384", "--profiles", str(tmp_path / "p"))
    lines = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert result.returncode == 2 and len(lines) == 1 and all(p in lines[0] for p in phrases), result.stderr
    assert not (tmp_path / "scores.csv").exists()


def test_unknown_ids_in_the_conflicts_file_are_named(panel, tmp_path):
    (tmp_path / "coi.csv").write_text("submission,reviewer\nsub0,~Ada_Lovelace1\nsub9,~Bo_Chen1\n")
    result = run_cli("affinity", "--reviewers", str(panel / "archives"), "--submissions", str(panel / "submissions.json"),
                     "--conflicts", str(tmp_path / "coi.csv"), "--out", str(tmp_path / "s.csv"), "--model",
                     "hashing-384", "--profiles", str(tmp_path / "p"))
    assert result.returncode == 2 and "coi.csv:3: unknown submission 'sub9'" in result.stderr, result.stderr


def test_a_cluster_folder_gives_the_same_submissions_as_its_index(tmp_path):
    from embedsearch import Index

    docs = [Document(f"p{i}", f"abstract {i} on graphs and bandits") for i in range(10)]
    index = Index.build(docs, tmp_path / "one", model="hashing-384")
    index.split(tmp_path / "cluster", 3)
    whole, split = Submissions.of(index), Submissions.read([tmp_path / "cluster"], "ignored: the cluster has one")
    order = [split.ids.index(i) for i in whole.ids]
    assert sorted(split.ids) == sorted(whole.ids) and np.array_equal(split.vectors[order], whole.vectors)
    assert split.fingerprint == whole.fingerprint
