"""Word forms meet in BM25 and in exclusions (issue 63, point 6): British and American spellings, irregular
plurals; an index built before (format 2) answers as it was built until `upgrade` re-tokenises it."""

import json

import pytest
from conftest import run_cli, write_sealed

from embedsearch import Document, Index
from embedsearch.store.lexical import Tokenizer
from embedsearch.store.settings import LexicalSettings

PAPERS = [Document("colour", "We count the proper colourings of grid graphs and bound how fast their number grows.",
                   "7-colourings of the grid"),
          Document("vortices", "Quantized vortices in rotating superfluids form lattices whose dynamics we simulate."),
          Document("fluid", "Rotating superfluids at low temperature: a study of their heat capacity."),
          Document("other", "Spiking neural networks learn with surrogate gradients on event cameras.")]


def test_the_tokenizer_meets_spellings_and_irregular_plurals():
    tokens = Tokenizer.of(LexicalSettings())
    assert tokens("colouring colourings coloring") == tokens("coloring coloring coloring")
    assert tokens("vortices matrices spectra") == tokens("vortex matrix spectrum")
    assert tokens("behaviour modelling") == tokens("behavior modeling")
    old = Tokenizer.of(LexicalSettings(forms=False))
    assert old("colouring vortices") != old("coloring vortex")  # an index built before keeps its own tokens


@pytest.fixture(scope="module")
def built(tmp_path_factory, bundled_docs):
    """Two indexes of the same papers: one as this version builds it, one as format 2 did (no word forms)."""
    docs = [*PAPERS, *bundled_docs[:8]]
    root = tmp_path_factory.mktemp("forms")
    new = Index.build(docs, root / "new")
    old = Index.build(docs, root / "old", lexical=LexicalSettings(forms=False))
    manifest = json.loads((old.path / "manifest.json").read_text())
    del manifest["lexical"]["forms"]
    write_sealed(old.path / "manifest.json", {**manifest, "format_version": 2})
    return new, Index.load(old.path)


def lexical_ids(index, query):
    return [h.id for h in index.find(query, 5, "lexical")]


def test_coloring_finds_colourings_and_minus_vortex_drops_vortices(built):
    new, old = built
    assert json.loads((new.path / "manifest.json").read_text())["format_version"] == 3
    assert lexical_ids(new, "graph coloring algorithms")[0] == "colour"
    assert lexical_ids(new, "colorings") == ["colour"]
    assert "vortices" in lexical_ids(new, "rotating superfluids")
    assert lexical_ids(new, "rotating superfluids -vortex") == ["fluid"]
    assert lexical_ids(new, "rotating superfluids -vortices") == ["fluid"]
    assert lexical_ids(old, "colorings") == [] and lexical_ids(old, "colourings") == ["colour"]  # format 2: as built
    assert "vortices" in lexical_ids(old, "rotating superfluids -vortex")


def test_upgrade_re_tokenises_a_format_2_index_keeping_its_deletions(built, tmp_path):
    import shutil

    _, old = built
    copy = tmp_path / "old"
    shutil.copytree(old.path, copy)
    run_cli("remove", "--index", str(copy), "other", check=True)
    before = json.loads((copy / "manifest.json").read_text())
    assert before["format_version"] == 2 and "forms" not in before["lexical"]
    result = run_cli("upgrade", "--index", str(copy), check=True)
    assert "to format 3" in result.stderr
    after = Index.load(copy)
    assert json.loads((copy / "manifest.json").read_text())["lexical"]["forms"] is True
    assert lexical_ids(after, "colorings") == ["colour"]
    assert lexical_ids(after, "rotating superfluids -vortex") == ["fluid"]
    assert "other" not in after.documents.row_of and len(after) == len(old) - 1
    assert run_cli("check", "--index", str(copy)).returncode == 0
    assert "needs no upgrade" in run_cli("upgrade", "--index", str(copy)).stderr


def test_a_watch_refuses_the_forms_of_an_excluded_word_as_a_search_does(built, tmp_path):
    import shutil

    from embedsearch.watch import Watch, add, run

    new, _ = built
    shutil.copytree(new.path, tmp_path / "idx")
    index = Index.load(tmp_path / "idx")
    add(index, Watch("fluids", "rotating superfluids -vortex"))
    index.add([Document("vortices-2", "Vortices in rotating superfluids: their lattices melt when heated."),
               Document("fluid-2", "Rotating superfluids in neutron stars and what they tell of the stars' crust.")])
    assert [h.id for h in run(index, "fluids").answer] == ["fluid-2"]
