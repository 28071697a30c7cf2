"""Reference-manager formats (corpus/bibtex, ris, csl, library, export): what we write parses back with the
library that reads it in, keys are stable and unique, LaTeX specials are escaped and math kept, a broken
entry is named by its line while the rest are read, and build and add read .bib and .ris as corpora."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli

from embedsearch.corpus import bibtex, csl, ris
from embedsearch.corpus.export import paper_record, render
from embedsearch.corpus.library import read_library
from embedsearch.corpus.references import citation_keys, normal_title

PAPERS = [
    paper_record("p:1", "Attention & Memory: 50% of $O(n^2)$ with {Braces} and #tags_under", "We use $x_i^2$ and "
                 "~tildes~ \\ backslashes; Müller's café.", {"authors": ["Ashish Vaswani", "Noam Shazeer"],
                                                              "year": 2017, "doi": "10.48550/arXiv.1706.03762",
                                                              "eprint": "1706.03762", "venue": "NeurIPS"}),
    paper_record("p:2", "Attention is all you need", "Same first author, year and word.",
                 {"authors": ["Ashish Vaswani"], "year": 2017}),
    paper_record("p_3/x", None, "An abstract with no title, authors or year.", {}),
]
READERS = {"bibtex": (".bib", bibtex.rows), "ris": (".ris", ris.rows), "csl-json": (".json", csl.rows)}


@pytest.mark.parametrize("kind", ["bibtex", "ris", "csl-json"])
def test_every_export_parses_back_the_same_with_the_library_that_reads_it(kind, tmp_path):
    suffix, read = READERS[kind]
    file = tmp_path / f"out{suffix}"
    file.write_text(render(kind, PAPERS))
    back = [r for _, r in read(file)]
    assert len(back) == len(PAPERS)
    for wrote, got in zip(PAPERS, back):
        for field in ("title", "abstract", "authors", "year", "doi", "eprint"):
            assert got.get(field) == wrote.get(field), (kind, field, got.get(field), wrote.get(field))
        assert got["index_id"] == wrote["id"]
    assert [r for _, r in read_library(file)] == back  # the --library reader takes what export writes


def test_bibtex_escapes_latex_specials_keeps_math_and_keys_are_unique():
    text = render("bibtex", PAPERS)
    assert r"Attention \& Memory: 50\% of $O(n^2)$ with \{Braces\} and \#tags\_under" in text
    assert "$x_i^2$" in text and r"\textasciitilde{}tildes" in text
    assert citation_keys(PAPERS) == ["vaswani2017attention", "vaswani2017attentiona", "abstractno"]  # never anon
    assert "@article{vaswani2017attention," in text and "@article{vaswani2017attentiona," in text


def test_titles_match_whatever_their_case_accents_markup_and_braces():
    assert normal_title(r"{BERT}: Pre-Training of {D}eep \'{E}l\`eves") == normal_title("bert pre training of deep eleves")


def test_a_broken_bibtex_entry_is_named_by_its_line_and_the_rest_are_read(tmp_path):
    file = tmp_path / "lib.bib"
    file.write_text("@article{a, title={First}}\n\n@article{b, title={never closed\n@article{c, title={Third}}\n")
    got = list(bibtex.rows(file))
    assert [r["id"] for _, r in got if isinstance(r, dict)] == ["a", "c"]
    assert [str(r) for _, r in got if not isinstance(r, dict)] == [f"{file}:3: broken BibTeX entry (check its "
                                                                   "braces, quotes and commas)"]


def test_ris_records_are_named_by_line_and_one_never_closed_is_a_problem(tmp_path):
    file = tmp_path / "lib.ris"
    file.write_text("TY  - JOUR\nTI  - One\nAB  - Text one.\nER  - \nTY  - JOUR\nTI  - Two\nTY  - JOUR\nTI  - Three\n"
                    "AU  - Doe, Jane\nPY  - 2020\nER  - \n")
    got = list(ris.rows(file))
    assert [(w.rsplit(":", 1)[1], r.get("title") if isinstance(r, dict) else str(r)) for w, r in got] == [
        ("1", "One"), ("5", f"{file}:5: RIS record without its ER line"), ("7", "Three")]
    assert got[2][1]["authors"] == ["Jane Doe"] and got[2][1]["year"] == 2020


def test_zotero_csv_and_csl_json_libraries_are_read(tmp_path):
    zotero = tmp_path / "zotero.csv"
    zotero.write_text('"Key","Item Type","Publication Year","Author","Title","DOI","Abstract Note"\n'
                      '"K1","journalArticle","2019","Doe, Jane; Roe, Rick","Graph nets","10.1000/xyz","About graphs."\n')
    [(where, entry)] = read_library(zotero)
    assert where.endswith(":2") and entry == {"id": "K1", "title": "Graph nets", "abstract": "About graphs.",
                                              "authors": ["Jane Doe", "Rick Roe"], "year": 2019, "doi": "10.1000/xyz"}
    items = tmp_path / "items.json"
    items.write_text(json.dumps([{"id": "x", "title": "T", "author": [{"family": "Doe", "given": "J."}],
                                  "issued": {"date-parts": [[2021, 3]]}}, "not an item"]))
    got = read_library(items)
    assert got[0][1]["authors"] == ["J. Doe"] and got[0][1]["year"] == 2021 and "item 2" in str(got[1][1])


@pytest.mark.parametrize("suffix", [".bib", ".ris"])
def test_build_and_add_read_bibtex_and_ris_as_corpora(tmp_path, suffix):
    first, second = tmp_path / f"a{suffix}", tmp_path / f"b{suffix}"
    first.write_text(render("bibtex" if suffix == ".bib" else "ris", PAPERS[:1]))
    second.write_text(render("bibtex" if suffix == ".bib" else "ris", PAPERS[1:2]))
    run_cli("build", str(first), "--index", str(tmp_path / "idx"), "--model", "hashing-384", check=True)
    run_cli("add", str(second), "--index", str(tmp_path / "idx"), check=True)
    hits = [json.loads(line) for line in run_cli("search", "attention", "--index", str(tmp_path / "idx"), "--json",
                                                  check=True).stdout.splitlines()]
    assert len(hits) == 2
    meta = next(h for h in hits if "Memory" in h["title"])["metadata"]
    assert meta["authors"] == ["Ashish Vaswani", "Noam Shazeer"] and meta["year"] == 2017
    assert meta["doi"] == "10.48550/arxiv.1706.03762" and meta["eprint"] == "1706.03762"


def test_a_library_of_an_unknown_kind_is_refused(tmp_path):
    from embedsearch import InputError

    (tmp_path / "x.txt").write_text("hello")
    with pytest.raises(InputError, match=r"unknown kind '\.txt'"):
        read_library(tmp_path / "x.txt")



ARXIV = [  # as arXiv writes them: LaTeX in titles and abstracts, the id the only date, a category field
    paper_record("0704.1269", r"Cosmic M\'enage \`a Trois: {\it Marginally consistent} $\Lambda$CDM",
                 r"We show that the Universe's {\em expansion} is M\"uller-consistent at $z \sim 1$.",
                 {"authors": ["Jane Doe", "R. \\'Alvarez"], "categories": "astro-ph gr-qc"}),
    paper_record("hep-th/9901001", "Strings on a plain title", "No LaTeX here: 50% of cases & more.", {}),
]
SHOWN = {"0704.1269": "Cosmic Ménage à Trois: Marginally consistent $\\Lambda$CDM",
         "hep-th/9901001": "Strings on a plain title"}


def test_arxiv_papers_export_as_arxiv_does_latex_passing_through_and_decoding_back_to_what_the_page_shows():
    import bibtexparser
    from bibtexparser.middlewares import LatexDecodingMiddleware

    from embedsearch.corpus.readable import readable

    text = render("bibtex", ARXIV)
    assert r"title = {{Cosmic M\'enage \`a Trois: {\it Marginally consistent} $\Lambda$CDM}}" in text  # as written
    assert r"textbackslash" not in text and r"\{\it" not in text
    assert r"50\% of cases \& more" in text  # plain text keeps its escaping
    parsed = bibtexparser.parse_string(text, append_middleware=[LatexDecodingMiddleware(keep_math_mode=True)])
    first, second = parsed.entries
    assert first.entry_type == "misc" and first.key == "doe2007cosmic" and second.key == "strings1999plain"
    wanted = {"eprint": "0704.1269", "archiveprefix": "arXiv", "primaryclass": "astro-ph", "year": "2007",
              "doi": "10.48550/arXiv.0704.1269", "url": "https://arxiv.org/abs/0704.1269"}
    assert {f.key: f.value for f in first.fields if f.key in wanted} == wanted
    for entry, paper in zip(parsed.entries, ARXIV):
        shown = readable(paper["title"], keep_math=True)  # the page typesets the math
        assert " ".join(entry["title"].split()) == shown == SHOWN[paper["id"]]  # what the page shows
    csl_items = json.loads(render("csl-json", ARXIV))
    assert csl_items[0]["title"] == SHOWN["0704.1269"] and csl_items[0]["type"] == "article"
    assert csl_items[0]["DOI"] == "10.48550/arXiv.0704.1269" and csl_items[0]["issued"] == {"date-parts": [[2007]]}
    assert csl_items[0]["author"][1] == {"family": "Álvarez", "given": "R."}
    assert "Müller" in csl_items[0]["abstract"] and "$z \\sim 1$" in csl_items[0]["abstract"]
    ris_text = render("ris", ARXIV)
    assert "TI  - Cosmic Ménage à Trois: Marginally consistent $\\Lambda$CDM" in ris_text
    assert "DO  - 10.48550/arXiv.0704.1269" in ris_text and "TY  - UNPB" in ris_text and "PY  - 1999" in ris_text


def test_citeproc_renders_every_entry_with_its_year_authors_and_a_unicode_title(tmp_path):
    """A real citation processor (citeproc-py, Harvard style) reads the CSL-JSON export: no "n.d." where the
    year is known or comes from the arXiv id, the authors the index has, the title in Unicode. (citeproc-py's
    own BibTeX reader knows no font or math macros, so the BibTeX is checked by bibtexparser's decoding above;
    pandoc's citeproc, which reads it, is not installed here.)"""
    from citeproc import Citation, CitationItem, CitationStylesBibliography, CitationStylesStyle, formatter
    from citeproc.source.json import CiteProcJSON

    source = CiteProcJSON(json.loads(render("csl-json", ARXIV)))
    style = CitationStylesStyle("harvard-cite-them-right", validate=False)  # the style citeproc-py ships
    bibliography = CitationStylesBibliography(style, source, formatter.plain)
    for key in [p["id"] for p in ARXIV]:
        bibliography.register(Citation([CitationItem(key)]))
    rendered = [str(entry) for entry in bibliography.bibliography()]
    assert len(rendered) == 2 and not any("n.d." in r for r in rendered), rendered
    doe = next(r for r in rendered if "Doe" in r)
    assert "2007" in doe and "Ménage" in doe and "Álvarez" in doe and "\\" not in doe.split("$")[0], doe
    assert "1999" in next(r for r in rendered if "Strings" in r)
