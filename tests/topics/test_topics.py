import json

import numpy as np
import pytest
from conftest import run_cli

from embedsearch import Document, Index, InputError
from embedsearch.topics import TopicSettings, cached
from embedsearch.topics.labels import keywords


@pytest.fixture(scope="module")
def model(bundled_index):
    return bundled_index.topics()


def test_bundled_corpus_gets_a_useful_map_not_three_blobs(model, bundled_index):
    topics = model.topics()
    assert len(topics) >= 6
    assert len(model.unassigned()) <= 0.15 * len(bundled_index)
    assert sum(t.size for t in topics) + len(model.unassigned()) == len(bundled_index)
    assert model.coordinates.shape == (57, 2)


def test_every_paper_is_in_exactly_one_topic_or_unassigned(model, bundled_index):
    out = model.to_json()
    seen = [m for t in out["topics"] for m in t["members"]] + out["unassigned"]
    assert sorted(seen) == sorted(bundled_index.documents.ids)
    assert set(out["topics"][0]) == {"id", "name", "label", "size", "keywords", "representatives", "members", "parent"}


def test_labels_are_readable_keywords_without_stop_words(model):
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    for topic in model.topics():
        words = [w for k in topic.keywords for w in k.split()]
        assert topic.keywords and not set(words) & ENGLISH_STOP_WORDS
        assert topic.label == ", ".join(topic.keywords[:3])
        assert all(w[0].isalpha() for w in words)
        assert len(topic.representatives) == min(3, topic.size) and set(topic.representatives) <= set(topic.members)


def test_keywords_pick_what_a_topic_shares_and_others_lack():
    texts = ["robot arm grasping with tactile sensors", "robot arm manipulation policies", "robot arm imitation",
             "protein folding with graph networks", "protein structure graph prediction", "protein graph design"]
    labels = np.array([0, 0, 0, 1, 1, 1])
    words = keywords(texts, labels, [0, 1])
    assert words[0][0] in ("robot arm", "robot", "arm") and words[1][0] in ("protein graph", "protein", "graph")


def test_keywords_do_not_repeat_a_term_in_other_forms():
    texts = ["black holes evaporate through radiation", "entropy of black holes in anti-de sitter space",
             "a black hole merger seen in gravitational waves", "rotating black holes and horizons",
             "protein folding with graph networks", "protein structure graph prediction", "protein graph design"]
    words = keywords(texts, np.array([0, 0, 0, 0, 1, 1, 1]), [0])[0]
    assert words[0] == "black holes"
    assert not {"black", "black hole", "holes", "hole"} & set(words)


def test_levels_nest_from_fine_to_broad(model):
    assert len(model.levels) >= 2
    fine, broad = model.topics(0), model.topics(1)
    assert len(broad) < len(fine)
    for topic in fine:
        parent = broad[topic.parent]
        assert set(topic.members) <= set(parent.members)
    assert all(t.parent is None for t in model.topics(len(model.levels) - 1))
    with pytest.raises(InputError, match="--level 9 does not exist"):
        model.topics(9)


def test_a_coarse_topic_is_named_by_what_its_children_share_not_by_its_largest_child(model):
    """Issue 63: on the bundled fit, no topic of several children takes a child's name, one of a single child
    (the same papers) takes its child's; in a corpus made for it, the name is the phrase both children hold."""
    from embedsearch.topics.names import names

    for depth in range(1, len(model.levels)):
        for topic in model.topics(depth):
            kids = [c.title for c in model.topics(depth - 1) if c.parent == topic.id]
            assert (topic.title == kids[0]) if len(kids) == 1 else (topic.title not in kids), (topic.title, kids)
    texts = ["graph coloring heuristics and shared ground here"] * 40 + ["vortex dynamics and shared ground here"] * 8 \
        + ["protein folding kinetics"] * 30
    labels, children = np.array([0] * 48 + [1] * 30), np.array([0] * 40 + [1] * 8 + [2] * 30)
    encode = lambda phrases: np.ones((len(phrases), 3), dtype=np.float32) / np.sqrt(3)  # noqa: E731 (meaning: a tie)
    centres = np.eye(3)[:2]
    plain = names(texts, labels, [0, 1], centres, encode)
    shared = names(texts, labels, [0, 1], centres, encode, children)
    assert plain[0] == "graph coloring heuristics" and shared[0] == "shared ground"
    assert names(texts, labels, [0, 1], centres, encode, None, {0: frozenset({"graph coloring heuristic"})})[0] \
        != "graph coloring heuristics"  # a child's name, in either number, is never its parent's


def test_same_seed_gives_identical_topics_and_coordinates(index_copy, model):
    import shutil

    shutil.rmtree(index_copy.path / "topics", ignore_errors=True)  # the copy carries the fixture's results
    again = index_copy.topics()  # fitted from scratch in this process
    assert again.to_json() == model.to_json()
    np.testing.assert_array_equal(again.coordinates, model.coordinates)


def test_results_persist_and_adds_keep_the_labels_until_a_refit(index_copy, monkeypatch):
    import shutil

    from embedsearch.topics import umap_hdbscan as cluster

    shutil.rmtree(index_copy.path / "topics", ignore_errors=True)  # the copy carries the fixture's results
    calls = []
    real_reduce = cluster.reduce
    monkeypatch.setattr(cluster, "reduce", lambda *a, **k: calls.append(1) or real_reduce(*a, **k))
    first = index_copy.topics()
    assert len(calls) == 1  # fitted here: the 2-d map (topics come from the consensus runs)
    assert Index.load(index_copy.path).topics() == first and len(calls) == 1  # reused from disk
    near = index_copy.documents.get([index_copy.documents.row_of[first.topics()[0].representatives[0]]])[0]
    index_copy.add([Document("new", near.text + " We add a short new paragraph to this abstract.")])
    index_copy.remove([first.topics()[1].members[-1]])
    assert len(index_copy) == len(first.ids) and cached(index_copy.snapshot) is None  # search shows no stale labels
    carried = index_copy.topics()
    assert len(calls) == 1  # carried over, not refitted
    assert cached(Index.load(index_copy.path).snapshot) == carried
    assert [t.label for t in carried.topics()] == [t.label for t in first.topics()]
    assert "new" in carried.topics()[0].members and first.topics()[1].members[-1] not in carried.ids
    assert carried.coordinates.shape == (57, 2) and sorted(carried.ids) == sorted(index_copy.documents.ids)
    refitted = index_copy.topics(refit=True)
    assert len(calls) == 2 and index_copy.topics() == refitted
def test_carrying_topics_over_after_every_commit_keeps_two_saved_fits(index_copy):
    """A service carries topics over after each commit; the folder must not gain one model per commit."""
    first = index_copy.topics()
    base = index_copy.documents.get([0])[0].text
    for n in range(4):
        index_copy.add([Document(f"later-{n}", f"{base} Addendum number {n} with new words.")])
        carried = index_copy.topics()
    from dataclasses import asdict

    default = asdict(TopicSettings())  # fits with other settings, made by other tests, may sit beside them
    saved = [p for p in (index_copy.path / "topics").glob("*/model.json")
             if json.loads(p.read_text())["settings"]["requested"] == default]
    assert len(saved) == 2 and [t.label for t in carried.topics()] == [t.label for t in first.topics()]
    assert Index.load(index_copy.path).topics() == carried and "later-3" in carried.ids


def test_a_level_the_fit_lacks_fails_before_anything_is_saved(index_copy, model):
    import shutil

    shutil.rmtree(index_copy.path / "topics", ignore_errors=True)
    bound = TopicSettings().max_levels(len(index_copy))
    assert len(model.levels) < bound  # a level inside the bound that this fit does not have
    with pytest.raises(InputError, match=f"--level {len(model.levels)} does not exist; this model has levels"):
        index_copy.topics(level=len(model.levels))  # found out only after fitting
    with pytest.raises(InputError, match=f"at most {bound} levels"):
        index_copy.topics(level=bound)  # found out before fitting
    assert not (index_copy.path / "topics").exists()


def test_assign_outliers_attaches_and_says_so(bundled_index, model):
    attached = bundled_index.topics(assign_outliers=True)
    assert attached.unassigned() == () and set(attached.attached) == set(model.unassigned())


def test_tiny_corpora_get_a_clear_message(tmp_path):
    docs = [Document(f"d{i}", f"Abstract number {i} about subject {i}.") for i in range(5)]
    small = Index.build(docs, tmp_path / "small")
    with pytest.raises(InputError, match="topics need at least 8 documents, this index has 5"):
        small.topics()
    with pytest.raises(InputError, match="--min-size"):
        TopicSettings(min_size=40).resolve(57)


def test_topics_near_a_query_and_cli_json(bundled_index, model):
    nearest = model.nearest(bundled_index.encode(["robot manipulation with vision-language-action models"])[0])
    assert "action" in nearest[0][0].label or "robot" in " ".join(nearest[0][0].keywords)
    out = json.loads(run_cli("topics", "--index", str(bundled_index.path), "--json", check=True).stdout)
    assert out == model.to_json()
    broad = json.loads(run_cli("topics", "--index", str(bundled_index.path), "--json", "--level", "1",
                               check=True).stdout)
    assert len(broad["topics"]) < len(out["topics"])
    near = run_cli("topics", "--index", str(bundled_index.path), "--query", "bandit regret", check=True).stdout
    assert near.splitlines()[0].startswith("0.") and "topic" in near.splitlines()[0]
    near = json.loads(run_cli("topics", "--index", str(bundled_index.path), "--query", "bandit regret", "--json",
                              check=True).stdout)
    assert any("regret" in k for k in near["topics"][0]["keywords"]) and near["topics"][0]["cosine"] > 0


def test_search_hits_show_their_topic_label_once_topics_exist(model, bundled_index, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")  # a wide terminal: the line is not cut
    table = run_cli("search", "regret bounds for adversarial bandits", "--index", str(bundled_index.path), "-k", "1",
                    check=True).stdout
    hit_id = table.splitlines()[1].split()[4]  # under the header: rank, score, band, cosine, id
    from embedsearch.topics import cached

    topic = cached(bundled_index.snapshot).topic_of(hit_id)  # the newest fit (another test may refit with options)
    assert f"[{topic.title if topic else 'unassigned'}]" in table  # the name the map and the API give


def test_sample_fit_assigns_the_rest_about_as_well_as_a_full_fit(latent_topics):
    """Fit on 600 of 1,500 documents, assign 900 by a vote of their nearest sample papers. Thresholds:
    against the planted topics the sample fit must do as well as the full fit, less 0.05 (measured: full
    0.816, sample 0.880 / 0.800 for seeds 42 / 7), and agree with the full fit at ARI >= 0.75 (measured
    0.86 / 0.94; two full fits with different seeds agree at 0.996, so the gap is the sample's cost)."""
    from sklearn.metrics import adjusted_rand_score

    index, planted = latent_topics
    full = np.array(index.topics().assignments[0])
    sampled_model = index.topics(TopicSettings(sample=600))
    sampled = np.array(sampled_model.assignments[0])
    assert sampled_model.settings["sample"] == 600 and sampled_model.coordinates.shape == (1500, 2)
    assert adjusted_rand_score(planted, sampled) >= adjusted_rand_score(planted, full) - 0.05
    assert adjusted_rand_score(full, sampled) >= 0.75
    assert (sampled < 0).mean() <= 0.05


def test_vote_takes_the_topic_a_third_of_the_neighbours_hold():
    from embedsearch.topics.sample import vote

    neighbours = np.array([[0, 0, 1, -1, -1, -1], [1, 1, 0, 0, -1, -1], [-1, -1, -1, -1, -1, 2], [2] * 6])
    assert vote(neighbours).tolist() == [0, 0, -1, 2]
    assert vote(np.full((2, 3), -1)).tolist() == [-1, -1]


def test_labels_lead_with_phrases_near_the_topic_not_the_others_and_not_each_other():
    from embedsearch.topics.labels import by_meaning

    vectors = {"generic": [0.8, 0.6, 0.0], "specific": [0.7, 0.0, 0.714], "specific again": [0.69, 0.0, 0.724],
               "other side": [0.6, 0.0, -0.8]}
    encode = lambda phrases: np.array([vectors[p] for p in phrases], dtype=np.float32)  # noqa: E731
    centres = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    chosen = by_meaning({0: ["generic", "specific again", "specific", "other side"], 1: ["generic"]}, centres, encode)
    # "generic" is nearest topic 0 but as near topic 1; "specific again" repeats "specific"
    assert chosen == {0: ["specific", "other side", "specific again", "generic"], 1: ["generic"]}


def test_a_fit_works_after_ray_replaced_print(latent_topics, tmp_path):
    """Ray Serve's shutdown (and Ray Data's progress bars) leave a Python-level ``print`` in the calling
    process; numba cannot compile pynndescent's code against it. A fresh process compiles it, so the fit
    runs there."""
    import shutil
    import subprocess
    import sys

    index, _ = latent_topics
    shutil.copytree(index.path, tmp_path / "idx")
    code = ("import builtins, sys\nimport umap\nfrom embedsearch import Index\nfrom embedsearch.topics import TopicSettings\n"
            "def redirected_print(*args, **kwargs):\n    pass\n"
            "builtins.print = redirected_print\n"
            "model = Index.load(sys.argv[1]).topics(TopicSettings(sample=600, runs=3))\n"
            "sys.stdout.write(str(len(model.topics())))\n")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "idx")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert int(done.stdout) >= 2


def _flip(file) -> None:
    """One byte changed where the file still parses: a label's letter in model.json, the last number's low
    byte in an .npy."""
    data = bytearray(file.read_bytes())
    at = data.index(b'"label": "') + len(b'"label": "') if file.suffix == ".json" else len(data) - 1
    data[at] ^= 1
    file.write_bytes(bytes(data))


def _default_fit(index):
    """The folder the default topic fit of ``index`` is saved in (other tests may have saved other fits)."""
    from embedsearch.topics.model import FOLDER, _key

    return index.path / FOLDER / _key(index.snapshot, TopicSettings().resolve(len(index)))


@pytest.mark.parametrize("name", ["model.json", "coordinates.npy", "centroids-0.npy", "centroids-1.npy"])
def test_a_flipped_byte_in_saved_topics_is_named_by_check_and_fitted_again(model, index_copy, name, caplog):
    folder = _default_fit(index_copy)
    _flip(folder / name)
    assert any(str(folder / name) in p for p in index_copy.check(deep=True))
    with caplog.at_level("WARNING", logger="embedsearch.topics"):
        again = Index.load(index_copy.path).topics()
    assert any(name in r.getMessage() and "fitting again" in r.getMessage() for r in caplog.records)
    assert again.to_json() == model.to_json()
    np.testing.assert_array_equal(again.coordinates, model.coordinates)
    assert index_copy.check(deep=True) == []


def test_check_exits_3_naming_a_damaged_topic_file(model, index_copy):
    folder = _default_fit(index_copy)
    _flip(folder / "coordinates.npy")
    result = run_cli("check", "--index", str(index_copy.path))
    assert result.returncode == 3 and "coordinates.npy" in result.stdout + result.stderr, result.stderr
