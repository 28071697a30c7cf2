"""Topics and duplicates across shards: duplicates equal one index's, including pairs the id hash split
over two shards; topics fitted on a sample drawn across the shards and assigned shard by shard."""

from __future__ import annotations

import numpy as np
import pytest

from embedsearch import Index
from embedsearch.store.cluster import owner
from embedsearch.topics import TopicSettings


def holds(cluster: Index, doc_id: str) -> bool:
    from embedsearch.errors import UnknownIdError

    try:
        cluster.document(doc_id)
    except UnknownIdError:
        return False
    return True


def evidence(report) -> dict:
    return {frozenset((p.a, p.b)): (p.verdict, round(p.cosine, 5), round(p.overlap, 5)) for p in report.pairs}


def test_duplicates_across_shards_are_those_of_one_index(planted, tmp_path):
    index, ids, _ = planted
    cluster = index.split(tmp_path / "c", 3)
    expected, got = index.duplicates(), cluster.duplicates()
    assert evidence(got) == evidence(expected) and len(got.pairs) == 5
    split = [p for p in got.pairs if owner(p.a, 3) != owner(p.b, 3)]
    assert len(split) >= 2, "the planted pairs must straddle shards for this test to mean anything"
    assert sorted(sorted(g.members) for g in got.groups) == sorted(sorted(g.members) for g in expected.groups)
    # the candidates examined are each document's nearest neighbours over all shards, as in one index
    assert {frozenset((c.a, c.b)) for c in got.candidates} == {frozenset((c.a, c.b)) for c in expected.candidates}
    assert set(got.ids) == set(expected.ids) and len(got.selected) == len(expected.selected) == len(index) - 4
    assert evidence(cluster.duplicates(threshold=0.8)) == evidence(index.duplicates(threshold=0.8))
    few = {"neighbours": 2, "floor": 0.3}  # where each document's neighbour list, not the floor, decides
    pairs = [{frozenset((c.a, c.b)) for c in r.candidates} for r in (cluster.duplicates(**few), index.duplicates(**few))]
    assert pairs[0] == pairs[1] and len(pairs[0]) > len(index) // 2


def test_one_papers_duplicates_and_new_abstracts_checked_across_shards_are_one_indexs(planted, tmp_path):
    """``duplicates(of=)`` and ``check_duplicates`` over three shards give one index's pairs, with the planted
    copies that the id hash put in other shards than their originals."""
    from embedsearch import Document
    from embedsearch.errors import UnknownIdError

    index, ids, base = planted
    cluster = index.split(tmp_path / "c", 3)
    for of in ([ids["b"]], ["dup-exact"], [ids["c"], bundled := index.documents.ids[7]]):
        expected, got = index.duplicates(of=of), cluster.duplicates(of=of)
        assert evidence(got) == evidence(expected) and set(got.ids) == set(of), of
    assert {frozenset((p.a, p.b)) for p in cluster.duplicates(of=[ids["b"]]).pairs} == \
        {frozenset((ids["b"], "dup-numbers")), frozenset((ids["b"], "dup-drop"))}
    assert not cluster.duplicates(of=[bundled]).pairs
    with pytest.raises(UnknownIdError, match="nope"):
        cluster.duplicates(of=["nope"])
    new = [Document("new-1", base[ids["c"]].text.replace(" the ", " this ")), Document("new-2", base[ids["a"]].text),
           Document("new-3", "An abstract about nothing in this corpus: sourdough starters and their microbes.")]
    expected, got = index.check_duplicates(new), cluster.check_duplicates(new)
    assert evidence(got) == evidence(expected) and len({p.a for p in got.pairs}) == 2
    assert ("new-2", ids["a"]) in {(p.a, p.b) for p in got.pairs}
    straddle = {p.b for p in got.pairs} | {p.a for p in cluster.duplicates(of=[ids["b"]]).pairs}
    assert len({owner(i, 3) for i in straddle}) >= 2, "the pairs must straddle shards for this test to mean anything"


def test_an_add_checked_across_shards_refuses_skips_or_adds_as_one_index(planted, tmp_path):
    """``Index.add_checked`` over a cluster judges each new abstract against every shard as ``check_duplicates`` does: a
    duplicate refuses the whole add (no new cut), is skipped, or is added anyway."""
    from embedsearch import Document
    from embedsearch.errors import DuplicateError

    index, ids, base = planted
    cluster = index.split(tmp_path / "c", 3)
    new = [Document("new-copy", base[ids["c"]].text.replace(" the ", " this ")),
           Document("new-fresh", "An abstract about nothing in this corpus: sourdough starters and their microbes.")]
    judged, cut = cluster.check_duplicates(new), cluster.generation
    with pytest.raises(DuplicateError, match="new-copy"):
        cluster.add_checked(new)
    assert Index.load(tmp_path / "c").generation == cut and len(Index.load(tmp_path / "c")) == len(index)
    report = cluster.add_checked(new, "skip")
    assert evidence(report) == evidence(judged) and {p.a for p in report.pairs} == {"new-copy"}
    assert cluster.generation == cut + 1 and len(cluster) == len(index) + 1
    assert holds(cluster, "new-fresh") and not holds(cluster, "new-copy")
    cluster.add_checked([Document("new-copy-2", new[0].text)], "add")
    assert holds(cluster, "new-copy-2") and len(Index.load(tmp_path / "c")) == len(index) + 2


ADD_ONE = """
import sys, time
from pathlib import Path
from embedsearch import Document
from embedsearch.errors import DuplicateError
from embedsearch import Index
cluster = Index.load(sys.argv[1])
cluster.encode(["warm the encoder"])
go = Path(sys.argv[2])
while not go.exists():
    time.sleep(0.01)
try:
    cluster.add_checked([Document(sys.argv[3], sys.argv[4])])
    print("added")
except DuplicateError:
    print("refused")
"""


def test_two_processes_adding_one_abstract_with_a_check_cannot_both_pass(planted, tmp_path):
    """The check and the write hold one lock: of two processes adding the same new abstract under two ids
    at once, one adds it and the other is refused as its duplicate."""
    import subprocess
    import sys

    index, _, _ = planted
    index.split(tmp_path / "c", 2)
    text = "Sourdough starters host stable communities of lactic acid bacteria and yeasts across bakeries."
    go = tmp_path / "go"
    runs = [subprocess.Popen([sys.executable, "-c", ADD_ONE, str(tmp_path / "c"), str(go), f"twin-{n}", text],
                             stdout=subprocess.PIPE, text=True) for n in range(2)]
    import time
    time.sleep(6)  # both have opened the cluster and warmed the encoder, then wait for the file
    go.touch()
    outcomes = sorted(r.communicate(timeout=120)[0].strip().splitlines()[-1] for r in runs)
    cluster = Index.load(tmp_path / "c")
    assert outcomes == ["added", "refused"], outcomes
    assert len(cluster) == len(index) + 1 and sum(holds(cluster, f"twin-{n}") for n in range(2)) == 1


def test_topics_are_fitted_on_a_sample_across_shards_and_assigned_in_each(latent_topics, tmp_path):
    """600 of 1,500 planted-topic documents in three shards (the cluster's rows, shard after shard, sampled
    as one index's): every document gets a topic, and they match the planted topics as a one-index sample
    fit does (measured there: ARI 0.80-0.88 with seeds 7 / 42)."""
    from sklearn.metrics import adjusted_rand_score

    index, planted = latent_topics
    cluster = index.split(tmp_path / "c", 3)
    model = cluster.topics(TopicSettings(sample=600))
    assert sorted(model.ids) == sorted(index.documents.ids) and model.coordinates.shape == (1500, 2)
    label_of = dict(zip(model.ids, model.assignments[0]))
    labels = np.array([label_of[i] for i in index.documents.ids])
    assert (labels < 0).mean() <= 0.05
    assert adjusted_rand_score(planted, labels) >= 0.75
    assert all(t.label and t.members for t in model.topics())
    again = cluster.topics(TopicSettings(sample=600))
    assert again.assignments == model.assignments and again.ids == model.ids


def test_a_later_cut_carries_the_topics_over_as_one_index_does(latent_topics, tmp_path):
    """After adds and a remove, the cluster's topics keep their ids, labels and keywords; each new paper takes
    the topic its nearest placed papers over every shard hold, as ``extend`` places it in one index holding
    the same documents; ``refit`` fits again."""
    from embedsearch import Index
    from embedsearch.topics.extend import extend

    index, _ = latent_topics
    ids, vectors = index.documents.ids, np.asarray(index.embeddings, dtype=np.float32)
    documents = index.snapshot.documents.get(list(range(len(ids))))
    held = np.arange(len(ids)) % 50 == 7  # 30 papers the first fit does not see
    start = Index.from_embeddings([d for d, h in zip(documents, held) if not h], vectors[~held],
                                  tmp_path / "start", index.manifest.model)
    cluster = start.split(tmp_path / "c", 2)
    settings = TopicSettings(sample=600, runs=5)
    before = cluster.topics(settings)
    cluster.add_embedded([d for d, h in zip(documents, held) if h], vectors[held])
    cluster.remove([start.documents.ids[0]])
    after = cluster.topics(settings)
    assert after.settings["corpus_version"] == cluster.generation and after.settings["changed"] == 31
    assert [[(t.id, t.label, t.keywords) for t in level] for level in after.levels] == \
        [[(t.id, t.label, t.keywords) for t in level] for level in before.levels]
    assert set(after.ids) == set(ids) - {start.documents.ids[0]}
    final = [d for d in documents if d.id != start.documents.ids[0]]
    one = Index.from_embeddings(final, vectors[[ids.index(d.id) for d in final]], tmp_path / "one",
                                index.manifest.model)
    expected = extend(before, one.snapshot)
    topic = {doc_id: t for doc_id, t in zip(expected.ids, expected.assignments[0])}
    new = [d.id for d, h in zip(documents, held) if h]
    assert [after.assignments[0][after.ids.index(i)] for i in new] == [topic[i] for i in new]
    assert sum(topic[i] >= 0 for i in new) >= 25
    refitted = cluster.topics(settings, refit=True)
    assert "changed" not in refitted.settings and len(refitted.ids) == len(after.ids)


def test_the_cli_reports_duplicates_and_topics_of_a_cluster(planted, tmp_path):
    import json

    from conftest import run_cli

    index, ids, _ = planted
    index.split(tmp_path / "c", 2)
    report = json.loads(run_cli("dedup", "--index", str(tmp_path / "c"), "--json", check=True).stdout)
    assert sorted(sorted(g["members"]) for g in report["groups"]) == \
        sorted(sorted(g.members) for g in index.duplicates().groups)
    text = run_cli("topics", "--index", str(tmp_path / "c"), check=True).stdout
    assert f"of {len(index)} papers" in text and text.count("\ntopic ") >= 2
    missing = run_cli("dedup", "--index", str(tmp_path / "nowhere"))
    assert missing.returncode != 0 and "nowhere" in missing.stderr and "Traceback" not in missing.stderr
