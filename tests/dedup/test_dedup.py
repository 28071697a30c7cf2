import csv
import io
import json
import re

import numpy as np
import pytest
from conftest import run_cli, write_sealed

from embedsearch import Document, Index, InputError, ModelMismatchError
from embedsearch.dedup import DedupSettings
from embedsearch.dedup.evidence import Shingled, containment, normalise, shared_passages, shingle_hashes
from embedsearch.dedup.groups import connected
from embedsearch.store.settings import VectorSettings


def test_evidence_helpers():
    assert normalise("Hello,  WORLD!\n") == "hello world"
    first, second = "the cat sat on the mat with a hat today", "yesterday the cat sat on the mat with a hat"
    assert containment(shingle_hashes(first), shingle_hashes(second)) == pytest.approx(5 / 6)
    assert shared_passages(Shingled.of(first), Shingled.of(second)) == ["the cat sat on the mat with a hat"]
    assert connected([(3, 1), (1, 2), (5, 6)]) == [[1, 2, 3], [5, 6]]


def test_each_verdict_class_is_found_with_evidence(planted):
    index, ids, _ = planted
    report = index.duplicates()
    verdicts = {frozenset((p.a, p.b)): p for p in report.pairs}
    exact = verdicts[frozenset((ids["a"], "dup-exact"))]
    assert exact.verdict == "exact" and exact.cosine > 0.9
    assert verdicts[frozenset((ids["b"], "dup-numbers"))].verdict in ("near-identical", "reworded")
    drop = verdicts[frozenset((ids["b"], "dup-drop"))]
    assert drop.verdict == "near-identical" and drop.overlap > 0.9 and drop.passages
    reworded = verdicts[frozenset((ids["c"], "dup-reworded"))]
    assert reworded.verdict == "reworded" and reworded.overlap < DedupSettings().near_identical
    assert {p.verdict for p in report.pairs} >= {"exact", "near-identical", "reworded"}
    assert len(reworded.passages) >= 1 and all(len(p.split()) >= 8 for p in reworded.passages)


def test_groups_keep_the_first_record_and_absorb_the_rest(planted):
    index, ids, _ = planted
    report = index.duplicates()
    assert len(report.groups) == 3
    kept = report.kept_map()
    assert kept[ids["a"]] == ("dup-exact",)
    assert set(kept[ids["b"]]) == {"dup-numbers", "dup-drop"}
    assert kept[ids["c"]] == ("dup-reworded",)
    as_json = report.to_json()
    assert set(as_json["groups"][0]) == {"kept", "members", "absorbed", "pairs"}
    assert set(as_json["groups"][0]["pairs"][0]) == {"a", "b", "cosine", "overlap", "verdict", "passages"}


def test_a_series_chained_by_a_shared_version_keeps_every_distinct_paper():
    """Issue 63: A ~ B and B ~ C, A and C distinct (an author's series, B drawing on both): ``--write-kept``
    keeps A and C and drops only B; a plain group of three direct duplicates keeps one."""
    from embedsearch.dedup.report import Candidate, DuplicateReport
    from embedsearch.dedup.settings import DedupSettings

    def pair(a, b, cosine, overlap):
        return Candidate(a, b, cosine, overlap, False, (), (0, "ABCD".index(a)), (0, "ABCD".index(b)))

    chain = DuplicateReport.from_candidates([pair("A", "B", 0.95, 0.9), pair("B", "C", 0.94, 0.8),
                                             pair("A", "C", 0.80, 0.1)], DedupSettings(), ("A", "B", "C", "D"))
    assert chain.selected == ("A", "C", "D") and chain.groups[0].absorbed == ("B",)
    assert chain.to_json()["groups"][0]["also_kept"] == ["C"]
    table = io.StringIO()
    chain.write_csv(table)
    rows = list(csv.DictReader(io.StringIO(table.getvalue())))
    assert {(r["a"], r["b"], r["kept"], r["also kept"]) for r in rows} == {("A", "B", "A", "C"), ("B", "C", "A", "C")}
    triple = DuplicateReport.from_candidates([pair("A", "B", 0.95, 0.9), pair("B", "C", 0.94, 0.8),
                                              pair("A", "C", 0.94, 0.7)], DedupSettings(), ("A", "B", "C", "D"))
    assert triple.selected == ("A", "D") and "also_kept" not in triple.to_json()["groups"][0]
    same = {"A": "Stability of a finite volume scheme", "B": "Stability of a finite volume scheme",
            "C": "Convergence of a finite volume scheme for fluids", "D": "Other"}
    assert chain.distinct_titles(same.get) == ()  # B is A under the same title: one submission
    series = {**same, "B": "Stability of a colocated scheme for the Navier-Stokes equations"}
    assert chain.distinct_titles(series.get) == ("B",)  # a new title: a distinct paper reusing the abstract
    assert chain.distinct_titles({"A": None, "B": "x y", "C": "z"}.get) == ()  # no title to tell them apart


def test_the_deduplicated_corpus_is_selected_and_written_with_its_metadata(planted, tmp_path):
    index, _, _ = planted
    report = index.duplicates()
    planted_ids = {"dup-exact", "dup-numbers", "dup-drop", "dup-reworded"}
    assert report.selected == tuple(i for i in index.documents.ids if i not in planted_ids)
    assert report.duplicate_ratio == pytest.approx(4 / 61)
    assert report.to_json()["kept"] == 57 and report.recut(threshold=0.95).selected == report.selected
    out = tmp_path / "kept.jsonl"
    result = run_cli("dedup", "--index", str(index.path), "--write-kept", str(out), check=True)
    assert "wrote 57 of 61 records" in result.stderr and "6.6% were duplicates" in result.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in rows] == list(report.selected)
    assert rows[0]["collection"] and rows[0]["text"] == index.documents.get([0])[0].text  # metadata kept
    run_cli("build", str(out), "--index", str(tmp_path / "clean"), check=True)
    again = run_cli("dedup", "--index", str(tmp_path / "clean"), "--json", check=True)
    assert json.loads(again.stdout)["groups"] == [] and json.loads(again.stdout)["judged"] == 57
    missing = run_cli("dedup", "--index", str(index.path), "--write-kept", str(tmp_path / "no" / "kept.jsonl"))
    assert missing.returncode == 2 and "does not exist" in missing.stderr


def test_topical_neighbours_in_the_bundled_corpus_are_not_flagged(bundled_index):
    report = bundled_index.duplicates()
    assert report.groups == ()
    assert len(report.candidates) > 0  # they are close neighbours, just not duplicates


def test_recut_changes_verdicts_without_recomputing(planted, monkeypatch):
    index, ids, _ = planted
    report = index.duplicates()
    from embedsearch.dedup.evidence import Shingled
    from embedsearch.retrieval import dense
    from embedsearch.store.docstore import DocumentStore
    from embedsearch.store.snapshot import LiveDocuments

    def recomputed(*a, **k):
        pytest.fail("recut must not search, read texts or compute evidence again")

    # patched where every caller reaches them, so no import elsewhere escapes: searching (each segment's
    # shortlist), reading texts, shingling
    for owner, name in ((dense, "shortlist"), (LiveDocuments, "get"), (DocumentStore, "get"), (Shingled, "of")):
        monkeypatch.setattr(owner, name, recomputed)
    strict = report.recut(min_overlap=1.0, near_identical=1.0, threshold=1.0)
    assert {frozenset((p.a, p.b)) for p in strict.pairs} == {frozenset((ids["a"], "dup-exact"))}
    loose = strict.recut(min_overlap=0.5)
    assert len(loose.groups) == 3
    with pytest.raises(InputError, match="run dedup again"):
        report.recut(floor=0.1)


def test_cross_set_reports_each_new_abstract_and_keeps_the_reference(planted, bundled_index, tmp_path, bundled_docs):
    _, ids, base = planted
    new = Index.build([Document("sub-1", base[ids["b"]].text.replace("  ", " ") + " We release code."),
                       Document("sub-2", "An unrelated abstract about tax law in medieval Flanders and its courts.")],
                      tmp_path / "new")
    report = new.duplicates(against=bundled_index)
    assert [(g.kept, g.absorbed) for g in report.groups] == [(ids["b"], ("sub-1",))]
    pair = report.groups[0].pairs[0]
    assert (pair.a, pair.b) == ("sub-1", ids["b"])
    assert report.groups[0].existing == (ids["b"],)


def test_cross_set_keeps_sides_apart_when_both_corpora_use_the_same_ids(planted, bundled_index, tmp_path):
    _, ids, base = planted
    old = Index.build([Document("x", base[ids["a"]].text), Document("y", base[ids["b"]].text)], tmp_path / "old")
    new = Index.build([Document("y", base[ids["a"]].text + " Code is released."),
                       Document("z", "An unrelated abstract about tax law in medieval Flanders and its courts.")],
                      tmp_path / "new")
    [group] = new.duplicates(against=old).groups
    assert (group.kept, group.absorbed, group.existing) == ("x", ("y",), ("x",))
    assert group.to_json()["absorbed"] == ["y"] and group.to_json()["existing"] == ["x"]
    out = run_cli("dedup", "--index", str(new.path), "--against", str(old.path), check=True).stdout
    assert re.search(r"keep existing x \(.+\); absorbs new y \(", out) and "new y ~ existing x" in out  # titles too


@pytest.mark.parametrize("value", [-0.1, 1.5])
def test_thresholds_outside_0_1_are_refused(value):
    with pytest.raises(InputError, match="between 0 and 1"):
        DedupSettings(threshold=value)


def test_against_an_index_with_another_model_is_refused(index_copy, bundled_index):
    manifest = json.loads((index_copy.path / "manifest.json").read_text())
    manifest["model"]["fingerprint"] = "ffffffffffffffff"
    write_sealed((index_copy.path / "manifest.json"), manifest)
    with pytest.raises(ModelMismatchError, match="rebuild one of them"):
        bundled_index.duplicates(against=Index.load(index_copy.path))


def test_cli_json_csv_and_bad_threshold(planted, tmp_path):
    index, ids, _ = planted
    out = run_cli("dedup", "--index", str(index.path), "--json", "--csv", str(tmp_path / "p.csv"), check=True)
    groups = json.loads(out.stdout)["groups"]
    assert {g["kept"] for g in groups} == {ids["a"], ids["b"], ids["c"]}
    assert (tmp_path / "p.csv").read_text().startswith("group,kept,also kept,a,b,verdict,cosine,overlap,passages")
    table = run_cli("dedup", "--index", str(index.path), check=True).stdout
    assert re.search(rf"keep {re.escape(ids['a'])} \(.+\); absorbs dup-exact \(", table)  # each id with its title
    bad = run_cli("dedup", "--index", str(index.path), "--threshold", "1.5")
    assert bad.returncode == 2 and bad.stderr.strip() == "error: threshold must be between 0 and 1, got 1.5"
    assert run_cli("dedup", "--index", str(tmp_path)).returncode == 2


def test_cli_against_a_corpus_file(planted, tmp_path, bundled_docs):
    index, ids, base = planted
    new = tmp_path / "submissions.jsonl"
    new.write_text(json.dumps({"id": "s1", "text": base[ids["c"]].text}) + "\n" +
                   json.dumps({"id": "s2", "text": "Tax law in medieval Flanders and the courts that applied it."}) + "\n")
    out = run_cli("dedup", "--index", str(index.path), "--against", str(new), "--json", check=True)
    groups = json.loads(out.stdout)["groups"]
    assert any(set(g["members"]) >= {ids["c"], "s1"} for g in groups)
    assert all("s2" not in g["members"] for g in groups)


def test_planted_duplicates_split_across_ivf_lists_are_found(bundled_index, tmp_path):
    """Candidate jobs run per inverted list but probe neighbouring lists: a pair whose two abstracts
    fall in different lists is still a candidate, and nothing else is flagged. Twins are planted next to
    the documents nearest a list boundary, pushed across it (cosine 0.956 with the original)."""
    from embedsearch.store.vectors import ivf

    rng = np.random.default_rng(3)
    x = rng.normal(size=(40, 384))[rng.integers(0, 40, 2000)] + 0.6 * rng.normal(size=(2000, 384))
    x = (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)
    settings = VectorSettings(index_type="ivfpq", ivf_lists=32, nprobe=8)
    centroids = ivf.centroids(ivf.train(x, settings))
    closeness = x @ centroids.T
    order = np.argsort(-closeness, axis=1)
    rows = np.arange(2000)
    copies = np.sort(np.argsort(closeness[rows, order[:, 0]] - closeness[rows, order[:, 1]])[:40])
    step = centroids[order[copies, 1]] - centroids[order[copies, 0]]
    twins = x[copies] + 0.3 * step / np.linalg.norm(step, axis=1, keepdims=True)
    twins /= np.linalg.norm(twins, axis=1, keepdims=True)

    words = np.array([f"w{i}" for i in range(5000)])
    texts = [" ".join(rng.choice(words, 60)) for _ in range(2000)]
    docs = [Document(f"p{i}", t) for i, t in enumerate(texts)]
    docs += [Document(f"twin{c}", texts[c].replace(texts[c].split()[5], "changed", 1)) for c in copies]
    index = Index.from_embeddings(docs, np.vstack([x, twins]).astype(np.float32), tmp_path / "ivf",
                                  bundled_index.manifest.model, settings)
    vectors = index.snapshot.segments[0].vectors
    lists = ivf.list_of(vectors, np.asarray(index.embeddings))
    assert sum(lists[c] != lists[2000 + i] for i, c in enumerate(copies)) >= 20
    assert len(index.snapshot.partitions(300)) >= 6
    pairs = {frozenset((p.a, p.b)) for p in index.duplicates(rows_per_job=300).pairs}
    assert pairs == {frozenset((f"p{c}", f"twin{c}")) for c in copies}


def test_an_exact_text_is_matched_even_where_the_vectors_miss_it(tmp_path, bundled_docs, bundled_index):
    """Exact texts are found by their hash, not only as nearest neighbours: here the indexed copy's stored
    vector is another paper's, so the neighbour search cannot reach it."""
    docs = bundled_docs[:20]
    vectors = np.asarray(bundled_index.embeddings[:20], dtype=np.float32).copy()
    vectors[7] = vectors[3]
    reference = Index.from_embeddings(docs, vectors, tmp_path / "ref", bundled_index.manifest.model)
    report = reference.check_duplicates([Document("sub", docs[7].text)], neighbours=1)
    assert any(p.b == docs[7].id and p.verdict == "exact" for p in report.pairs), report.pairs


def test_a_file_of_submissions_is_checked_against_an_index_one_row_each(bundled_index, tmp_path):
    """``dedup --index SUBMISSIONS.jsonl --against INDEX``: no index of the file to build first; a row per
    submission in the file's order, naming the paper it matches with its title, or saying it has none."""
    import csv

    paper = bundled_index.documents.get([5])[0]
    subs = tmp_path / "subs.jsonl"
    subs.write_text(json.dumps({"id": "sub-1", "title": "Resubmitted", "abstract": paper.text}) + "\n"
                    + json.dumps({"id": "sub-2", "abstract": "Coral reefs bleach when ocean water warms; we count "
                                                             "bleached colonies on three reefs over two summers."}) + "\n")
    text = run_cli("dedup", "--index", str(subs), "--against", str(bundled_index.path), "--csv",
                   str(tmp_path / "rows.csv"), check=True).stdout.splitlines()
    title = paper.readable().title or paper.readable().first_sentence()
    assert text[0].startswith(f"submission sub-1 matches paper {paper.id} ({title}): ") and \
        text[0].split("): ")[1].split(",")[0] in ("exact", "near-identical")
    assert text[1].startswith("submission sub-2: no duplicate")
    assert "2 submission(s)" in text[2] and "1 flagged" in text[2]
    rows = list(csv.reader((tmp_path / "rows.csv").read_text().splitlines()))
    assert [r[:4] for r in rows[1:]] == [["sub-1", "Resubmitted", rows[1][2], paper.id],
                                         ["sub-2", rows[2][1], "no duplicate", ""]]
    assert rows[1][2] in ("exact", "near-identical")
    report = json.loads(run_cli("dedup", "--index", str(subs), "--against", str(bundled_index.path), "--json",
                                check=True).stdout)
    assert report["judged"] == 2 and [r["id"] for r in report["submissions"]] == ["sub-1", "sub-2"]
    alone = run_cli("dedup", "--index", str(subs))
    assert alone.returncode == 2 and "--against INDEX" in alone.stderr
