"""Shards searched as one: on SciFact queries, three shards answer exactly as one index over the same
documents in every mode (global BM25 statistics, fusion over the merged candidates); writes go to the
owning shard and readers see one cut across shards."""

from __future__ import annotations

import json

import numpy as np
import pytest

from embedsearch import Document, Index, InputError
from embedsearch.errors import UnknownIdError
from embedsearch.retrieval.dense import dense
from embedsearch.store.cluster import owner

pytestmark = pytest.mark.xdist_group("scifact")  # one worker embeds the SciFact sample (400 abstracts), not each


@pytest.fixture()
def cluster(single, tmp_path):
    return single.split(tmp_path / "cluster", 3)


def same(answer, hits) -> bool:
    """The same ranking: scores equal (to the 6 decimals JSON carries), and the same ids at each score (exact ties
    may be ordered either way)."""
    got, want = answer.hits, hits
    if len(got) != len(want) or not np.allclose([h.score for h in got], [h.score for h in want], rtol=1e-6, atol=1e-6):
        return False
    groups: dict[float, tuple[set, set]] = {}
    for g, w in zip(got, want):
        key = round(w.score, 5)
        groups.setdefault(key, (set(), set()))[0].add(g.id)
        groups[key][1].add(w.id)
    return all(a == b for a, b in groups.values())


@pytest.mark.parametrize("mode", ["hybrid", "dense", "lexical"])
def test_three_shards_answer_like_one_index_on_scifact_queries(single, cluster, scifact_sample, mode):
    _, queries = scifact_sample
    assert sorted(len(s) for s in cluster.shards) != [0, 0, 400] and len(cluster) == len(single)
    for query in queries:
        answer = cluster.search(query, 10, mode=mode)
        expected = single.search(query, 10, mode=mode)
        assert same(answer, expected), (mode, query, [h.id for h in answer.hits], [h.id for h in expected])
        assert [h.cosine for h in answer.hits] == pytest.approx([h.cosine for h in expected], abs=1e-6)
        assert not answer.partial
    for query in queries[:5]:  # deep enough that every candidate of the fusion counts
        assert same(cluster.search(query, 80, mode=mode), single.search(query, 80, mode=mode)), (mode, query)


def test_similar_papers_across_shards_are_those_of_one_index(single, cluster, scifact_sample, tmp_path):
    docs, _ = scifact_sample
    whole = single.split(tmp_path / "one", 1)  # the paper's own shard holds all its neighbours
    assert same(whole.similar(docs[0].id, 10), single.similar(docs[0].id, 10))
    owners = set()
    for doc in docs[:30]:
        answer = cluster.similar(doc.id, 10)
        assert same(answer, single.similar(doc.id, 10)) and doc.id not in {h.id for h in answer.hits}, doc.id
        assert [h.match for h in answer.hits] == [h.match for h in single.similar(doc.id, 10)]
        owners.add(owner(doc.id, 3))
    assert owners == {0, 1, 2}
    text = docs[5].text[:400]
    assert same(cluster.similar_to_text(text, 8), single.similar_to_text(text, 8))
    assert cluster.document(docs[7].id) == single.documents.get([single.documents.row_of[docs[7].id]])[0]
    with pytest.raises(UnknownIdError, match="no document with id 'nope'"):
        cluster.similar("nope")
    with pytest.raises(UnknownIdError):
        cluster.document("nope")


class Silent:
    """Parts of which one never answers (a shard with no live replica): the round leaves it out."""

    def __init__(self, parts, silent: int):
        self.parts, self.names, self.sizes, self.silent = parts, parts.names, parts.sizes, silent

    def round(self, method, args):
        return self.parts.round(method, {p: a for p, a in args.items() if p != self.silent})


@pytest.mark.parametrize("mode", ["hybrid", "dense", "lexical"])
def test_the_fanout_over_the_shards_answers_as_one_index_and_names_a_silent_shard(single, cluster, scifact_sample,
                                                                                 mode, tmp_path):
    """The plan the Ray Serve ingress runs (statistics, candidates, merge), over parts read in process: one
    index's answer, with filters and for similar papers; a shard that does not answer is named in ``missing``
    and the hits are those of the shards that did."""
    from embedsearch.retrieval.parts import Fanout, LocalParts

    docs, queries = scifact_sample
    snapshot = cluster.snapshot
    local = LocalParts(list(snapshot.parts.values()), list(snapshot.parts))
    fanout = Fanout(snapshot, cluster.search_settings, local)
    for query in queries[:8]:
        answer = fanout.search(query, 10, mode)
        assert same(answer, single.search(query, 10, mode=mode)) and not answer.partial, (mode, query)
        assert answer.version == cluster.generation
    dated = [Document(d.id, d.text, d.title, {"year": 2000 + i % 4}) for i, d in enumerate(docs)]
    filtered = Index.from_embeddings(dated, np.asarray(single.embeddings), tmp_path / "dated",
                                     single.manifest.model)
    split = filtered.split(tmp_path / "dated-cluster", 3).snapshot
    dated_fanout = Fanout(split, cluster.search_settings, LocalParts(list(split.parts.values()), list(split.parts)))
    for query in queries[:4]:
        got = dated_fanout.search(query, 10, mode, ["year>=2002"])
        assert same(got, filtered.search(query, 10, mode=mode, filters=["year>=2002"])), (mode, query)
        assert got.hits and all(h.metadata["year"] >= 2002 for h in got)
    for doc in docs[:10]:
        got = fanout.similar(doc.id, 10)
        assert same(got, single.similar(doc.id, 10)) and doc.id not in {h.id for h in got}
    silent = Fanout(snapshot, cluster.search_settings, Silent(local, 1)).search(queries[0], 10, mode)
    held = set(cluster.shards[1].documents.ids)
    assert silent.partial and silent.missing == ("shard-001",)
    assert silent.hits and not {h.id for h in silent} & held
    if mode == "dense":  # BM25 statistics and fused scores are those of the shards that answered
        assert [h.id for h in silent] == [h.id for h in single.search(queries[0], 60, mode=mode)
                                          if h.id not in held][:10]


def test_shard_local_bm25_would_not_be_equal(single, cluster, scifact_sample):
    """Why the statistics round exists: each shard's own BM25 ranks differently from the whole corpus's."""
    _, queries = scifact_sample
    differs = 0
    for query in queries[:10]:
        local = max((h for s in cluster.shards for h in s.search(query, 1, mode="lexical")), key=lambda h: h.score)
        differs += not np.isclose(local.score, single.search(query, 1, mode="lexical")[0].score, rtol=1e-6)
    assert differs >= 8


def test_writes_go_to_the_owning_shard_and_each_commit_is_a_new_cut(cluster, single, scifact_sample):
    new = Document("new-1", "Vitamin D supplementation lowers the risk of fractures in elderly women.")
    before = cluster.generation
    generations = [s.generation for s in cluster.shards]
    reader = Index.load(cluster.path)
    cluster.add([new])
    home = owner("new-1", 3)
    assert cluster.generation == before + 1
    assert [s.generation != g for s, g in zip(cluster.shards, generations)] == [s == home for s in range(3)]
    assert cluster.search("vitamin D fractures elderly women", 1, mode="lexical").hits[0].id == "new-1"
    assert "new-1" not in {h.id for h in reader.search("vitamin D fractures elderly women", 5).hits}  # its cut
    with pytest.raises(InputError, match="already in"):
        cluster.add([new])
    victim = scifact_sample[0][0].id
    with pytest.raises(UnknownIdError, match="nothing was removed"):
        cluster.remove([victim, "new-1", "nope-2"])  # all or nothing: "nope-2" routes to the last shard
    assert cluster.generation == before + 1 and len(Index.load(cluster.path)) == len(single) + 1
    cluster.remove([victim, "new-1"])
    assert cluster.generation == before + 2 and len(cluster) == len(single) - 1
    assert victim not in {h.id for h in cluster.search(scifact_sample[1][0], 50).hits}
    latest = json.loads((cluster.path / "cuts" / f"{cluster.generation}.json").read_text())
    assert latest["generations"] == [s.generation for s in Index.load(cluster.path).shards]


def test_compacting_a_cluster_merges_every_shard_as_one_new_cut(cluster, single, scifact_sample):
    """After adds and removes, ``compact`` leaves one segment and no deleted rows in each shard, publishes one
    cut naming them, and answers as before; the CLI does the same."""
    from conftest import run_cli

    docs, queries = scifact_sample
    cluster.add([Document("new-1", "Vitamin D supplementation lowers the risk of fractures in elderly women.")])
    cluster.remove([docs[0].id, docs[1].id, docs[2].id])
    before = cluster.generation
    answers = {mode: cluster.search(queries[4], 10, mode=mode).hits for mode in ("hybrid", "dense", "lexical")}
    assert any(len(s.snapshot.segments) > 1 for s in cluster.shards)
    cluster.compact()
    assert cluster.generation == before + 1 and len(cluster) == len(single) - 2
    for shard in cluster.shards:
        assert len(shard.snapshot.segments) == 1 and all(m is None for m in shard.snapshot.live)
    assert list(json.loads((cluster.path / "cuts" / f"{cluster.generation}.json").read_text())["generations"]) == \
        [s.generation for s in cluster.shards]
    for mode, hits in answers.items():
        assert same(cluster.search(queries[4], 10, mode=mode), hits), mode
    cluster.add([Document("new-2", "Statins lower cholesterol in adults with diabetes.")])
    done = run_cli("compact", "--index", str(cluster.path), check=True)
    assert f"(cut {before + 3})" in done.stderr and Index.load(cluster.path).generation == before + 3
    again = run_cli("compact", "--index", str(cluster.path), check=True)
    assert "already compact" in again.stderr and Index.load(cluster.path).generation == before + 3


def test_a_cut_naming_a_generation_its_shard_collected_is_removed_and_the_newest_stays(single, tmp_path):
    """With no grace period each write collects the generation it superseded, so the cuts naming it go; with
    the default grace every cut stays readable."""
    from embedsearch.store.settings import StoreSettings

    rows = list(range(60))
    small = Index.from_embeddings(list(single.documents)[:60], np.asarray(single.embeddings[rows]), tmp_path / "i",
                                  single.manifest.model, storage=StoreSettings(grace_seconds=0))
    cluster = small.split(tmp_path / "c", 2)
    cluster.add([Document("new-1", "Vitamin D supplementation lowers the risk of fractures in elderly women.")])
    cluster.remove(["new-1"])
    assert sorted(int(p.stem) for p in (tmp_path / "c" / "cuts").glob("*.json")) == [cluster.generation] == [3]
    assert len(Index.load(tmp_path / "c")) == 60
    graced = single.split(tmp_path / "g", 2)
    graced.add([Document("new-1", "Vitamin D supplementation lowers the risk of fractures in elderly women.")])
    assert sorted(int(p.stem) for p in (tmp_path / "g" / "cuts").glob("*.json")) == [1, 2]
    assert len(Index.load(tmp_path / "g", generation=1)) == len(single)


def test_a_shard_is_written_only_through_its_cluster(cluster, single, scifact_sample):
    """The library refuses a write to a shard's folder that bypasses the cluster (add, remove, compact, a build
    over it), naming the cluster; the cluster's own writes to the same shard go through."""
    shard = cluster.shards[0].path
    before = Index.load(shard).generation
    victim = next(i for i in Index.load(shard).documents.ids)
    new = Document("direct-1", "Written to a shard behind the cluster's back.")
    for write in (lambda: Index.load(shard).add([new]), lambda: Index.load(shard).remove([victim]),
                  lambda: Index.load(shard).compact(),
                  lambda: Index.from_embeddings([new], np.asarray(single.embeddings[[0]]), shard, single.manifest.model)):
        with pytest.raises(InputError, match=f"of the cluster {cluster.path.resolve()}; write through the cluster"):
            write()
    assert Index.load(shard).generation == before and len(Index.load(cluster.path)) == len(single)
    cluster.remove([victim])
    assert Index.load(shard).generation == before + 1 and victim not in Index.load(shard).documents.row_of


def test_a_cluster_split_before_shards_were_marked_is_guarded_from_its_first_write(single, tmp_path):
    older = single.split(tmp_path / "old", 2)
    for shard in older.shards:
        (shard.path / "shard.json").unlink()  # as clusters were split before the marker
    shard = older.shards[1].path
    Index.load(shard).remove([Index.load(shard).documents.ids[0]])  # unguarded: goes through
    older.remove([Index.load(shard).documents.ids[0]])
    with pytest.raises(InputError, match="write through the cluster"):
        Index.load(shard).remove([Index.load(shard).documents.ids[0]])


def test_too_many_shards_and_an_existing_folder_are_refused(single, tmp_path):
    small = Index.from_embeddings(list(single.documents)[:2], np.asarray(single.embeddings[[0, 1]]),
                                  tmp_path / "two", single.manifest.model)
    with pytest.raises(InputError, match="empty; use fewer shards"):
        small.split(tmp_path / "c", 8)
    (tmp_path / "taken").mkdir()
    with pytest.raises(InputError, match="already exists"):
        single.split(tmp_path / "taken", 2)


def test_the_cli_splits_an_index_and_searches_the_shards_as_one(single, scifact_sample, tmp_path):
    from conftest import run_cli

    made = run_cli("shard", "--index", str(single.path), "--out", str(tmp_path / "c"), "--shards", "2", check=True)
    assert "into 2 shard(s)" in made.stdout
    query = scifact_sample[1][3]
    found = run_cli("search", query, "--index", str(tmp_path / "c"), "-k", "5", "--json", check=True)
    assert [json.loads(line)["id"] for line in found.stdout.splitlines()] == [h.id for h in single.search(query, 5)]
    again = run_cli("shard", "--index", str(single.path), "--out", str(tmp_path / "c"), "--shards", "2")
    assert again.returncode == 2 and "already exists" in again.stderr
    shard = tmp_path / "c" / "shards" / "shard-000"
    before = Index.load(shard).generation
    extra = tmp_path / "extra.jsonl"
    extra.write_text(json.dumps({"id": "direct-1", "text": "Written to a shard behind the cluster's back."}) + "\n")
    for command in (["add", str(extra)], ["remove", scifact_sample[0][0].id], ["compact"], ["build", str(extra)]):
        direct = run_cli(*command, "--index", str(shard))
        assert direct.returncode == 2 and "is shard-000 of the cluster" in direct.stderr, (command, direct.stderr)
    assert Index.load(shard).generation == before and "direct-1" not in Index.load(shard).documents.row_of


def test_shards_of_an_ivf_index_share_its_quantizer_and_answer_as_it_does(tmp_path, bundled_index):
    """Split from an IVF index of several segments, every shard keeps its kind and its trained quantizer (not
    one trained per shard), and the approximate shortlists are cut over all shards as over all segments, so a
    dense search over the shards gives exactly the index's answer, not most of it."""
    import faiss
    from segment_worker import make_docs

    from embedsearch.retrieval.parts import candidates, merge
    from embedsearch.store.files import VECTORS
    from embedsearch.store.settings import VectorSettings

    docs, vectors = make_docs(0, 3_000)
    index = Index.from_batches([(docs[i:i + 1_000], vectors[i:i + 1_000]) for i in range(0, 3_000, 1_000)],
                               tmp_path / "idx", bundled_index.manifest.model, 3_000,
                               VectorSettings(index_type="ivfpq", ivf_lists=8, nprobe=8, ivf_codec="pq",
                                              pq_bytes=8))  # coarse codes: shortlists that miss
    cluster = index.split(tmp_path / "c", 2)

    def centroids(segment):
        read = faiss.read_index(str(segment.folder / VECTORS), faiss.IO_FLAG_SKIP_IVF_DATA)
        ivf = faiss.extract_index_ivf(read)
        return segment.index_type, ivf.quantizer.reconstruct_n(0, ivf.nlist).copy()

    assert len(index.snapshot.segments) == 3
    kind, expected = centroids(index.snapshot.segments[0])
    for shard in cluster.shards:
        for segment in shard.snapshot.segments:
            got_kind, got = centroids(segment)
            assert got_kind == kind == "ivfpq" and np.array_equal(got, expected), shard.path.name
    rng = np.random.default_rng(3)
    queries = vectors[:40] + 2 * rng.normal(size=vectors[:40].shape).astype(np.float32)  # rankings PQ blurs
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    for query in queries:
        offered = [candidates(s.snapshot, query, "", None, 10, "dense") for s in cluster.shards]
        got = [(cluster.shards[p].documents.ids[r.row], r.cosine)
               for p, r in merge(offered, 10, "dense", index.search_settings)]
        want = [(index.documents.ids[r], c) for r, c in dense(index.snapshot, query[None], 10)[0]]
        assert [i for i, _ in got] == [i for i, _ in want]
        assert [c for _, c in got] == pytest.approx([c for _, c in want], abs=1e-6)
    for doc in docs[:300:10]:
        assert same(cluster.similar(doc.id, 10), index.similar(doc.id, 10)), doc.id
    for text in ("p7 " + docs[7].text, docs[500].text[5:60]):
        for mode in ("dense", "hybrid"):
            assert same(cluster.search(text, 10, mode=mode), index.search(text, 10, mode=mode)), (mode, text)


def test_a_new_field_has_one_kind_across_every_shard(tmp_path):
    docs = [Document(f"p{i}", f"abstract {i} on graphs", metadata={"year": 2020 + i % 3}) for i in range(12)]
    cluster = Index.build(docs, tmp_path / "one", model="hashing-384").split(tmp_path / "cluster", 2)
    first = next(f"n{i}" for i in range(100) if owner(f"n{i}", 2) == 1)
    other = next(f"n{i}" for i in range(100) if owner(f"n{i}", 2) == 0)
    cluster.add([Document(first, "a new abstract", metadata={"score": 5})])
    with pytest.raises(InputError, match="field 'score' holds numbers in this index"):
        cluster.add([Document(other, "another new abstract", metadata={"score": "high"})])
    assert len(Index.load(cluster.path)) == 13
    assert [h.id for h in cluster.search("new abstract", 5, mode="dense", filters=["score>=1"]).hits] == [first]
