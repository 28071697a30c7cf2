"""Recommendations from seed papers (recommend/): seeds of one kind bring that kind and are never returned,
each hit names the seeds it is closest to, unlikes push their kind down, a library is matched by DOI, arXiv
id and title (or embedded), and bad seeds are one line, exit 2."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from conftest import run_cli

from embedsearch import InputError
from embedsearch.errors import UnknownIdError
from embedsearch.corpus.bibtex import rows as bib_rows

pytestmark = pytest.mark.xdist_group("papers")  # one worker embeds the 240 papers (conftest's papers fixture), not each


def of(rows, label, n, skip=0):
    return [i for i, r in rows.items() if r["label"] == label][skip:skip + n]


def test_one_seed_is_that_papers_similar(papers):
    index, rows = papers
    seed = of(rows, "math", 1)[0]
    found = index.recommend(like=[seed], k=8)
    assert found.method == "similar"
    assert [h.id for h in found.answer] == [h.id for h in index.similar(seed, 8)]


@pytest.mark.parametrize("label", ["math", "cond-mat", "astro-ph"])
def test_seeds_of_one_kind_bring_that_kind_and_are_never_returned(papers, label):
    index, rows = papers
    seeds = of(rows, label, 4)
    found = index.recommend(like=seeds, k=10)
    assert found.method == "svm" and not set(seeds) & {h.id for h in found.answer}
    assert Counter(rows[h.id]["label"] for h in found.answer)[label] >= 8
    for hit in found.answer:
        closest = hit.evidence["closest_seeds"]
        assert len(closest) == 2 and {c["seed"] for c in closest} <= set(seeds)
        assert closest[0]["cosine"] >= closest[1]["cosine"] and hit.cosine == pytest.approx(closest[0]["cosine"], abs=1e-6)
        start, end = hit.evidence["sentence"]
        assert 0 <= start < end <= len(hit.text)


def test_unlikes_push_their_kind_down_and_are_never_returned(papers):
    index, rows = papers
    likes, unlikes = of(rows, "cond-mat", 3), of(rows, "math", 4) + of(rows, "astro-ph", 4)
    before = index.recommend(like=likes, k=60).answer  # 40 papers per kind: at 60 the others come in
    after = index.recommend(like=likes, unlike=unlikes, k=60).answer
    kinds = lambda answer: sum(rows[h.id]["label"] in ("math", "astro-ph") for h in answer)  # noqa: E731
    assert kinds(after) <= kinds(before) - 5  # 22 -> 13 here, over background seeds 0-4
    assert not set(unlikes) & {h.id for h in after}


def test_bad_seeds_are_one_error_each(papers):
    index, rows = papers
    with pytest.raises(UnknownIdError, match="'nope'"):
        index.recommend(like=["nope"])
    with pytest.raises(InputError, match="at least one liked paper"):
        index.recommend(unlike=of(rows, "math", 1))
    seed = of(rows, "math", 1)[0]
    with pytest.raises(InputError, match="both liked and unliked"):
        index.recommend(like=[seed], unlike=[seed])
    for args, phrase in [(["--like", "nope"], "'nope'"), (["--like", ""], "empty"), ([], "--like ID or a --library")]:
        result = run_cli("recommend", "--index", str(index.path), *args)
        errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
        assert result.returncode == 2 and len(errors) == 1 and phrase in errors[0], result.stderr


LIBRARY = r"""@article{byTitle,
  title = {{%s}},
  author = {Someone, A.}, year = {2007}}
@article{byCase, title = {%s}}
@inproceedings{byDoi, title = {A title that is not the paper's}, doi = {https://doi.org/10.5555/TEST.1}}
@misc{byArxiv, title = {Another title altogether}, eprint = {%sv2}, archivePrefix = {arXiv}}
@article{broken, title = {never closed
@article{mine, title = {My own unpublished note}, abstract = {Galaxy clusters and dark matter halos in cosmological simulations.}}
@article{nothing, author = {Nobody, N.}, year = {1999}}
"""


@pytest.fixture()
def library(papers, tmp_path):
    _, rows = papers
    math, astro = of(rows, "math", 2), of(rows, "astro-ph", 1)[0]
    title = rows[math[0]]["title"]
    shouted = rows[math[1]]["title"].upper().replace("E", "{\\'E}", 1)  # case, accents and LaTeX markup differ
    file = tmp_path / "mine.bib"
    file.write_text(LIBRARY % (title, shouted, rows[astro]["eprint"]))
    return file, {"byTitle": math[0], "byCase": math[1], "byDoi": "rm-1", "byArxiv": astro}


def test_a_bibtex_library_is_matched_by_doi_arxiv_id_and_title_the_rest_embedded(papers, library):
    index, _ = papers
    file, expected = library
    found = index.recommend(library=file, k=5)
    matched = {m.entry.split("(")[-1].rstrip(")"): (m.id, m.how) for m in found.library.matched}
    assert matched == {"byTitle": (expected["byTitle"], "title"), "byCase": (expected["byCase"], "title"),
                       "byDoi": ("rm-1", "doi"), "byArxiv": (expected["byArxiv"], "arxiv")}
    assert [e.split("(")[-1].rstrip(")") for e, _ in found.library.embedded] == ["mine"]
    assert [u.split("(")[-1].rstrip(")") for u in found.library.unmatched] == ["nothing"]
    assert len(found.library.problems) == 1 and f"{file}:7" in found.library.problems[0]
    assert not set(expected.values()) & {h.id for h in found.answer}  # matched seeds never come back
    assert set(found.seeds.like) == set(expected.values()) and len(found.seeds.texts) == 1


def test_the_cli_reports_the_library_and_exports_what_it_found(papers, library, tmp_path):
    index, _ = papers
    file, expected = library
    out = tmp_path / "found.bib"
    result = run_cli("recommend", "--library", str(file), "--index", str(index.path), "-k", "4", "--json",
                     "--bibtex", str(out))
    assert result.returncode == 0, result.stderr
    assert "4 matched, 1 unmatched with text (used as seeds), 1 unmatched without text, 1 broken" in result.stderr
    assert f"{file}:7" in result.stderr and "nothing" in result.stderr
    entries = result.stderr.split("in the file's order:\n", 1)[1].splitlines()[:7]  # one line an entry, in order
    assert len(entries) == 7 and "(byDoi): paper rm-1 of the index (by doi)" in entries[[
        n for n, e in enumerate(entries) if "byDoi" in e][0]]
    assert any("(mine): not in the index; its text is a seed" in e for e in entries)
    assert any("(nothing): not in the index and no title or abstract: left out" in e for e in entries)
    assert any(f"{file}:7" in e and "unreadable, left out" in e for e in entries)
    at = [int(e.split(f"{file}:", 1)[1].split()[0].rstrip(":")) for e in entries]
    assert at == sorted(at)  # the file's order
    hits = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(hits) == 4 and all(h["evidence"]["closest_seeds"] for h in hits)
    back = [r for _, r in bib_rows(out)]
    assert [r["index_id"] for r in back] == [h["id"] for h in hits]
    assert [r["title"] for r in back] == [h["title"] for h in hits]


def test_a_library_that_matches_nothing_and_carries_no_text_is_refused(papers, tmp_path):
    index, _ = papers
    file = tmp_path / "empty.bib"
    file.write_text("@article{a, author = {Nobody, N.}}\n@article{b, year = {2001}}\n")
    result = run_cli("recommend", "--library", str(file), "--index", str(index.path))
    assert result.returncode == 2 and "no entry matches" in result.stderr and "2 unmatched without text" in result.stderr
