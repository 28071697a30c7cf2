"""Fielded query terms are exact over the whole corpus (retrieval/fielded.py, store/words.py): every answer
equals a brute-force scan of every live paper with the grammar's own test, on a corpus where the phrase and
the author sit only in papers that a plain search of the same words ranks far below its first 300; across
segments, after deletes, and on a cluster of shards. A query of no free words lists every paper it matches.

The corpus is 1,500 generated papers embedded by the hashing test encoder: which papers hold a term does
not depend on the model, and 1,500 papers is what it takes to push the planted ones past rank 300."""

from __future__ import annotations

import json
import random
import re

import pytest
from conftest import run_cli

from embedsearch import Document, Index
from embedsearch.retrieval.find import when
from embedsearch.retrieval.query import parse

FILLER = [f"filler{i}" for i in range(400)] + ["model", "graph", "network", "theory", "learning"]
PLANTED = {  # id: (title, year, authors); each holds "discrete diffusion" once, as written in a long text
    "p1": ("Sampling notes", 2021, ["Yann LeCun", "Ana Ruiz"]),
    "p2": ("Discrete diffusion for codes", 2019, ["LeCun, Yann"]),
    "p3": ("Other matters", None, ["Yann LeCun"]),
    "p4": ("A survey", 2024, ["Émile Noël"]),
}


def planted(doc_id: str, rng: random.Random) -> Document:
    title, year, authors = PLANTED[doc_id]
    words = rng.choices(FILLER, k=300)
    words[150:150] = ["Discrète-Diffusion" if doc_id == "p1" else "discrete diffusion"]
    return Document(doc_id, " ".join(words), title, {"authors": authors, **({"year": year} if year else {})})


def decoy(n: int, rng: random.Random) -> Document:
    """Papers dense in both words, never as the phrase; some by namesakes (Yann Dauphin, Mark LeCun)."""
    words = ["diffusion"] * 6 + [f"discrete {w}" for w in rng.choices(FILLER, k=6)] + rng.choices(FILLER, k=14)
    rng.shuffle(words)
    text = " ".join(words)
    authors = rng.sample(["Yann Dauphin", "Mark LeCun", "Bo Li", "Ana Ruiz"], 1 + n % 2)  # Yann + LeCun, apart
    return Document(f"d{n}", text, f"Decoy {n} on diffusion", {"authors": authors, "year": 2000 + n % 25})


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    rng = random.Random(3)
    docs = [decoy(n, rng) for n in range(1500)] + [planted(p, rng) for p in ("p1", "p2", "p3")]
    index = Index.build(docs, tmp_path_factory.mktemp("fielded") / "idx", model="hashing-384")
    index.add([planted("p4", rng), decoy(9999, rng)])  # a second segment
    index.remove(["d7", "d8"])
    return Index.load(index.path)


def scan(index: Index, query: str) -> set[str]:
    """Every live paper the grammar's own test keeps, read one by one."""
    parsed = parse(query)
    years = [f for f in parsed.filters]
    return {d.id for d in index.documents
            if parsed.keeps(d.title, d.text, d.metadata) and all(f.mask([d.metadata.get(f.field)])[0] for f in years)}


QUERIES = ['diffusion "discrete diffusion"', 'discrete -"discrete diffusion"', "diffusion -filler3 -filler17",
           'diffusion author:"Yann LeCun"', "diffusion author:lecun", 'discrete title:"discrete diffusion"',
           'diffusion "discrete diffusion" year:2015..2022', 'diffusion author:noel', 'diffusion author:"mark lecun"',
           # common words: each in (nearly) every paper, the phrases in many, answered by positions alone
           '"diffusion discrete"', 'model "diffusion diffusion discrete"', 'discrete -"diffusion diffusion"']


@pytest.mark.parametrize("query", QUERIES)
def test_every_fielded_term_returns_exactly_what_a_scan_finds(corpus, query):
    expected = scan(corpus, query)
    assert {h.id for h in corpus.find(query, 2000)} == expected
    if len(expected) <= 10:
        assert {h.id for h in corpus.find(query, 10)} == expected


def test_the_planted_papers_rank_far_below_what_the_old_checks_read(corpus):
    ranked = [h.id for h in corpus.search("diffusion discrete diffusion", 1000)]
    assert all(p not in ranked[:300] for p in ("p1", "p2", "p3", "p4"))
    assert {h.id for h in corpus.find('diffusion "discrete diffusion"', 10)} == {"p1", "p2", "p3", "p4"}


def test_an_author_alone_lists_every_paper_newest_first_undated_last(corpus):
    answer = corpus.find('author:"Yann LeCun"', 10)
    assert answer.listing and answer.total == 3 == len(scan(corpus, 'author:"Yann LeCun"'))
    assert [h.id for h in answer] == ["p1", "p2", "p3"]  # 2021, 2019, no year
    assert [h.id for h in corpus.find('author:"Yann LeCun"', 10, sort="oldest")] == ["p2", "p1", "p3"]
    page = corpus.find("author:lecun", 5)
    assert page.total == len(scan(corpus, "author:lecun")) > 5 and len(page) == 5
    years = [when(h) for h in corpus.find("author:lecun", 2000)]
    dated = [y for y in years if y]
    assert dated == sorted(dated, reverse=True) and years == dated + [""] * (len(years) - len(dated))
    assert "d7" not in {h.id for h in corpus.find("author:lecun", 2000)}  # removed papers stay out


def test_word_postings_made_in_chunks_equal_those_made_at_once(corpus, tmp_path):
    from embedsearch.store.words import Words, build

    segment = corpus.snapshot.segments[0]
    build(iter(segment.documents), tmp_path, chunk_size=97)
    chunked, whole = Words(tmp_path, [], segment.rows), segment.words
    assert chunked.vocab == whole.vocab and len(whole.vocab) > 400
    assert (chunked.indptr == whole.indptr).all() and (chunked.rows == whole.rows).all()
    assert all((a == b).all() for a, b in zip(chunked._positional, whole._positional))


def test_positions_answer_random_phrases_as_the_grammar_does(tmp_path):
    """Positional postings made in chunks, against ``plain(phrase) in body`` on 2,000 random papers: repeated
    words, accents, phrases at a text's start and end and across title and abstract."""
    from embedsearch.corpus.fold import plain
    from embedsearch.store.words import Words, build

    rng = random.Random(5)
    words = "the of in a model models cells patients with were graph Ménage menage à trois x_1 3d".split()
    docs = [Document(f"r{i}", " ".join(rng.choices(words, k=rng.randint(0, 40))),
                     " ".join(rng.choices(words, k=rng.randint(0, 4))) or None) for i in range(2000)]
    build(iter(docs), tmp_path, chunk_size=333)
    postings = Words(tmp_path, [], len(docs))
    bodies = [plain(f"{d.title or ''} {d.text}") for d in docs]
    common = 0
    for _ in range(300):
        phrase = plain(" ".join(rng.choices(words, k=rng.randint(1, 4)))).split()
        expected = [i for i, body in enumerate(bodies) if f" {' '.join(phrase)} " in body]
        assert postings.phrase_rows(phrase).tolist() == expected, phrase
        assert postings.phrase_rows(phrase, compiled_from=1).tolist() == expected, phrase  # numba's loops
        common += len(expected) > 200
    assert common > 20


def test_shards_answer_fielded_terms_as_one_index(corpus, tmp_path):
    cluster = corpus.split(tmp_path / "cluster", 3)
    for query in QUERIES:
        assert {h.id for h in cluster.find(query, 2000)} == scan(corpus, query), query
    listed = cluster.find('author:"Yann LeCun"', 10)
    assert [h.id for h in listed] == ["p1", "p2", "p3"] and listed.total == 3


def test_the_cli_and_api_say_how_many_papers_a_listing_holds(corpus):
    shown = run_cli("search", 'author:"Yann LeCun"', "--index", str(corpus.path), check=True).stdout
    assert "3 papers match every term" in shown and "p3" in shown
    lines = run_cli("search", "author:lecun", "-k", "3", "--json", "--index", str(corpus.path), check=True).stdout
    assert len(lines.splitlines()) == 3 and all(json.loads(line)["metadata"]["authors"] for line in lines.splitlines())

    from fastapi.testclient import TestClient

    from embedsearch.serve.app import create_app
    from embedsearch.serve.settings import ServeSettings

    with TestClient(create_app(corpus.path, ServeSettings(topics=False))) as client:
        first = client.get("/search", params={"q": "author:lecun", "k": 5}).json()
        second = client.get("/search", params={"q": "author:lecun", "k": 5, "offset": 5}).json()
    assert first["total"] == second["total"] == len(scan(corpus, "author:lecun"))
    assert not {h["id"] for h in first["hits"]} & {h["id"] for h in second["hits"]} and first["more"]


def test_the_fast_phrase_check_agrees_with_the_grammar_on_every_kind_of_text():
    """The regex path of ``_checker`` (ASCII papers) against ``Query.keeps`` on 3,000 random papers and terms:
    case, punctuation, underscores, digits, hyphens, accents and words inside other words."""
    from embedsearch.retrieval.fielded import _checker
    from embedsearch.retrieval.query import Query

    rng = random.Random(7)
    words = ["deep", "Deep", "DEEP", "net", "nets", "net_2", "2net", "é", "discrète", "Discrete", "a", "I", "ß", "ss"]
    glue = [" ", "  ", "-", ", ", ".", "_", "\n", "(", ") ", "'", "—"]

    def text(n: int, pool: list[str] = words) -> str:
        return "".join(rng.choice(pool) + rng.choice(glue) for _ in range(n)).strip()

    def term(doc: Document) -> str:
        """Half the time words of the paper itself in their order, glued anew: a term that often holds."""
        held = re.findall(r"\w+", f"{doc.title or ''} {doc.text}")
        if held and rng.random() < 0.5:
            start = rng.randrange(len(held))
            return "".join(w + rng.choice(glue) for w in held[start:start + rng.randint(1, 3)]).strip()
        return text(rng.randint(1, 3))

    for _ in range(3000):
        doc = Document("x", text(rng.randint(0, 12)), text(rng.randint(0, 4)) or None)
        terms = [term(doc) for _ in range(3)]
        test = Query("", phrases=tuple(terms[:rng.randint(0, 2)]), without=tuple(terms[2:rng.randint(2, 3)]),
                     titles=tuple(terms[1:rng.randint(1, 2)]))
        assert _checker(test)(doc) == test.keeps(doc.title, doc.text, doc.metadata), (doc, test)


def test_an_index_whose_postings_predate_positions_makes_them_on_first_use(corpus, tmp_path):
    """A segment written before positions (format 1: no counts or positions) answers a phrase exactly once its
    postings are made again beside it; so does one whose evidence sentences lack word pieces."""
    import shutil

    from conftest import write_sealed

    from embedsearch.disk.durable import sha256

    copy = tmp_path / "old"
    shutil.copytree(corpus.path, copy)
    digests = {}
    for folder in (copy / "segments").iterdir():
        if (folder / "words").is_dir():  # as a segment written before they were recorded with it
            (folder / "words" / "positions.npy").unlink()
            (folder / "words" / "config.json").write_text(json.dumps({"format": 1, "documents": 1}))
            shutil.rmtree(folder / "sentences")
            info = json.loads((folder / "segment.json").read_text())
            info["files"] = {n: r for n, r in info["files"].items() if not n.startswith(("words/", "sentences/"))}
            (folder / "segment.json").write_text(json.dumps(info))
            digests[folder.name] = sha256(folder / "segment.json")
    for file in (copy / "generations").glob("[0-9]*.json"):
        generation = json.loads(file.read_text())
        for entry in generation["segments"]:
            entry["info_sha256"] = digests.get(entry["name"], entry["info_sha256"])
        write_sealed(file, generation)
    old = Index.load(copy)
    for query in ('diffusion "discrete diffusion"', '"diffusion discrete"'):
        assert {h.id for h in old.find(query, 2000)} == scan(corpus, query)
    assert all((f / "words" / "positions.npy").is_file() and (f / "sentences" / "spans.npy").is_file()
               for f in (copy / "segments").iterdir() if (f / "segment.json").is_file())


def test_an_author_term_on_an_index_without_authors_is_an_error_not_an_empty_answer(bundled_index):
    """The bundled abstracts carry no author field: ``author:`` says so, as ``year:`` does, in the library,
    the CLI (exit 2, one line) and the API (400), instead of "0 papers match"."""
    from fastapi.testclient import TestClient

    from embedsearch.errors import InputError
    from embedsearch.serve.app import create_app
    from embedsearch.serve.settings import ServeSettings

    with pytest.raises(InputError, match="no paper of this index has an author field.*fields: collection"):
        bundled_index.find("author:streinu", 10)
    shown = run_cli("search", "author:streinu", "--index", str(bundled_index.path))
    errors = [line for line in shown.stderr.splitlines() if line.startswith("error: ")]
    assert shown.returncode == 2 and len(errors) == 1 and "author field" in errors[0], shown.stderr
    with TestClient(create_app(bundled_index.path, ServeSettings(topics=False))) as client:
        got = client.get("/search", params={"q": "diffusion author:streinu", "k": 5})
    assert got.status_code == 400 and "author field" in got.text


def test_a_title_term_without_titles_and_a_filter_no_paper_passes_are_errors_not_empty_answers(every_kind,
                                                                                               bundled_index):
    """The other silent empty answers: ``title:`` where no paper has a title (the bundled abstracts have none),
    and a filter on a value no paper holds; an empty answer for words that match nothing stays an answer."""
    from embedsearch.errors import InputError

    index = Index.load(every_kind)
    assert not any(d.title for d in bundled_index.documents)
    with pytest.raises(InputError, match="title:'diffusion': no paper of this index has a title"):
        bundled_index.find("title:diffusion", 5)
    assert [h.id for h in index.find("title:molecules", 5)]  # an index with titles answers
    with pytest.raises(InputError, match="filter 'year=1999': no paper of this index passes it"):
        index.find("graph neural networks", 5, filters=["year=1999"])
    assert len(index.find("graph neural networks", 5, filters=["year=2024"])) == 3
    shown = run_cli("search", "molecules", "--index", str(every_kind), "--filter", "year>=2030")
    assert shown.returncode == 2 and "no paper of this index passes it" in shown.stderr
    assert not index.find('"no paper holds this phrase"', 5)  # words that match nothing: an empty answer
    from fastapi.testclient import TestClient

    from embedsearch.serve.app import create_app
    from embedsearch.serve.settings import ServeSettings

    with TestClient(create_app(every_kind, ServeSettings(topics=False))) as client:
        got = client.get("/search", params={"q": "molecules", "filter": "year=1999"})
    assert got.status_code == 409 and "no paper of this index passes it" in got.json()["error"]
