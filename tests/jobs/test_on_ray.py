"""The Ray engine on a local Ray cluster: same vectors as the local path, clear errors."""

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
from conftest import clustered, run_cli

from embedsearch import Document, EmbedsearchError, Index, InputError, MissingDependencyError
from embedsearch.embedding.embed import Embedder
from embedsearch.embedding.settings import EmbedSettings
from embedsearch.store.settings import VectorSettings

# One local Ray cluster per worker process is plenty for two cores: under pytest-xdist these run on one worker.
pytestmark = pytest.mark.xdist_group("ray")




def test_ray_embeddings_equal_the_local_path(local_ray, bundled_docs, tmp_path):
    from embedsearch.jobs.on_ray import ray_encoder
    from embedsearch.jobs.settings import RaySettings

    texts = [d.embed_text for d in bundled_docs[:12]]
    local = Embedder(cache_dir=tmp_path / "local").embed(texts)
    remote_embedder = Embedder(cache_dir=tmp_path / "ray")
    # one actor loads the real model; two actors share the work in the hashing-encoder test below
    remote = remote_embedder.embed(texts, encode=ray_encoder(remote_embedder.settings, RaySettings(workers=1)))
    assert remote_embedder.computed == 12
    np.testing.assert_allclose(remote, local, atol=1e-5)


HASHING = EmbedSettings(model="hashing-384")  # the build plumbing on Ray, no neural model to load per actor


@pytest.fixture(scope="module")
def hashing_index(bundled_docs, tmp_path_factory):
    return Index.build(bundled_docs, tmp_path_factory.mktemp("hashing") / "idx", embed=HASHING)


def test_index_built_on_ray_answers_like_a_local_one(local_ray, bundled_docs, hashing_index, tmp_path, monkeypatch):
    """Two encoder actors on Ray (the hashing encoder runs there too, so a broken actor shows here)."""
    from embedsearch.jobs.settings import RaySettings

    monkeypatch.setenv("EMBEDSEARCH_CACHE_DIR", str(tmp_path / "fresh-cache"))
    on_ray = Index.build(bundled_docs, tmp_path / "ray-idx", embed=HASHING, ray=RaySettings(workers=2))
    np.testing.assert_allclose(on_ray.embeddings, hashing_index.embeddings, atol=1e-5)
    query = "vision-language-action robot policies"
    assert [h.id for h in on_ray.search(query, 5)] == [h.id for h in hashing_index.search(query, 5)]


def test_workers_read_the_source_files_and_write_the_segments(local_ray, bundled_docs, hashing_index, tmp_path):
    from embedsearch.jobs.settings import RaySettings

    files = []
    for number, part in enumerate((bundled_docs[:30], bundled_docs[30:])):
        files.append(tmp_path / f"part{number}.jsonl")
        files[-1].write_text("".join(json.dumps({"id": d.id, "text": d.text}) + "\n" for d in part))
    on_ray = Index.from_sources(files, tmp_path / "ray-idx", embed=HASHING, ray=RaySettings(workers=2))
    assert [s.rows for s in on_ray.snapshot.segments] == [30, 27]  # one task per file, its documents in order
    assert on_ray.documents.ids == [d.id for d in bundled_docs]
    np.testing.assert_allclose(np.asarray(on_ray.embeddings), np.asarray(hashing_index.embeddings), atol=1e-5)
    query = "vision-language-action robot policies"
    assert [h.id for h in on_ray.search(query, 5)] == [h.id for h in hashing_index.search(query, 5)]
    assert on_ray.check(deep=True) == []
    files[1].write_text(files[1].read_text() + json.dumps({"id": bundled_docs[0].id, "text": "again"}) + "\n")
    with pytest.raises(InputError, match=f"part1.jsonl: duplicate id '{bundled_docs[0].id}' .*part0.jsonl"):
        Index.from_sources(files, tmp_path / "dup-idx", embed=HASHING, ray=RaySettings(workers=2))
    assert not (tmp_path / "dup-idx").exists()


def test_missing_ray_gives_the_install_hint(monkeypatch):
    from embedsearch.jobs.on_ray import connect
    from embedsearch.jobs.settings import RaySettings

    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'embedsearch\[ray\]'"):
        connect(RaySettings())


def test_unreachable_cluster_and_bad_flags(tmp_path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"id": "a", "text": "An abstract."}\n')
    bad = run_cli("build", str(corpus), "--index", str(tmp_path / "i"), "--engine", "ray", "--ray-address",
                  "127.0.0.1:1", "--model", str(tmp_path / "no-model"))  # the cluster is tried before the model
    assert bad.returncode == 2 and "cannot reach a Ray cluster at '127.0.0.1:1'" in bad.stderr
    assert not (tmp_path / "i").exists()
    usage = run_cli("build", str(corpus), "--index", str(tmp_path / "i"), "--workers", "2")
    assert usage.returncode == 2 and "--workers need --engine ray" in usage.stderr
    for command in ("topics", "dedup", "map"):
        usage = run_cli(command, "--ray-address", "auto")
        assert usage.returncode == 2 and "--ray-address and --workers need --engine ray" in usage.stderr
    engine = run_cli("dedup", "--engine", "spark")
    assert engine.returncode == 2 and "unknown engine 'spark'; choose local or ray" in engine.stderr
    with pytest.raises(InputError, match="at least 1"):
        from embedsearch.jobs.settings import RaySettings

        RaySettings(workers=0)


def test_ivf_shards_filled_as_ray_tasks_match_a_monolithic_index(local_ray, tmp_path):
    from embedsearch.jobs.on_ray import RayMap
    from embedsearch.store import vectors as vec
    from embedsearch.store.vectors import ivf

    x = clustered(4000)
    settings = VectorSettings(index_type="ivfpq", ivf_lists=32, nprobe=8, shard_size=1000)
    mapper = RayMap()
    trained = ivf.write_sharded(tmp_path, "vectors.faiss", x, settings, map_shards=mapper)
    assert sum(mapper.nodes.values()) == 4
    monolithic = ivf.deserialize(ivf.serialize(trained))
    monolithic.add(x)
    np.testing.assert_array_equal(vec.read(tmp_path / "vectors.faiss").search(x[:100], 10)[1],
                                  monolithic.search(x[:100], 10)[1])


def test_failing_ray_task_is_one_clear_error_and_writes_nothing(local_ray, tmp_path):
    from embedsearch.jobs.on_ray import RayMap
    from embedsearch.store.vectors import ivf

    def explode(trained, vectors, start):  # nested, so Ray ships it by value
        raise ValueError(f"bad shard at row {start}")

    x = np.random.default_rng(0).normal(size=(2000, 16)).astype(np.float32)
    with pytest.raises(EmbedsearchError, match=r"a Ray task failed after retries \(ValueError: bad shard at row"):
        ivf.write_sharded(tmp_path, "vectors.faiss", x, VectorSettings(ivf_lists=8, shard_size=500),
                          map_shards=lambda fn, jobs: RayMap()(explode, jobs))
    assert list(tmp_path.iterdir()) == []


TWO_NODES = """
import json, sys, numpy as np, ray
from ray.cluster_utils import Cluster
from embedsearch.store import vectors as vec
from embedsearch.store.vectors import ivf
from embedsearch.store.settings import VectorSettings
from embedsearch.jobs.on_ray import RayMap
from embedsearch.jobs.settings import RaySettings

cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 2})
cluster.add_node(num_cpus=2)
cluster.wait_for_nodes()
try:
    x = np.random.default_rng(0).normal(size=(8000, 32)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    mapper = RayMap(RaySettings(address=cluster.address))
    ivf.write_sharded(__import__("pathlib").Path(sys.argv[1]), "vectors.faiss", x,
                      VectorSettings(ivf_lists=16, shard_size=500), map_shards=mapper)
    print(json.dumps({"nodes": len(ray.nodes()), "used": len(mapper.nodes), "shards": sum(mapper.nodes.values()),
                      "ntotal": vec.read(__import__("pathlib").Path(sys.argv[1]) / "vectors.faiss").ntotal}))
finally:
    ray.shutdown()
    cluster.shutdown()
"""


def test_two_node_cluster_fills_shards_on_both_nodes(tmp_path):
    """A separate process: its own two-node Ray cluster, each node with 2 logical CPUs."""
    import json

    if not os.environ.get("EMBEDSEARCH_REQUIRE_RAY"):
        pytest.importorskip("ray")
    done = subprocess.run([sys.executable, "-c", TWO_NODES, str(tmp_path)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report == {"nodes": 2, "used": 2, "shards": 16, "ntotal": 8000}


def test_topic_assignment_and_duplicate_search_on_ray_match_the_local_path(local_ray, latent_topics, index_copy):
    from embedsearch.jobs.settings import RaySettings
    from embedsearch.topics import TopicSettings

    index, _ = latent_topics
    settings = TopicSettings(sample=600, seed=3, runs=5)  # the assignment is under test, not the consensus
    local = index.topics(settings)
    shutil.rmtree(index.path / "topics")
    on_ray = index.topics(settings, ray=RaySettings())
    assert on_ray.assignments == local.assignments
    np.testing.assert_allclose(on_ray.coordinates, local.coordinates, atol=1e-4)

    index_copy.add([Document("again", index_copy.documents.get([0])[0].text + " Reworded slightly.")])
    report = index_copy.duplicates(rows_per_job=20, ray=RaySettings())
    assert report.to_json() == index_copy.duplicates(rows_per_job=20).to_json()
    assert any("again" in g.members for g in report.groups)


def test_a_worker_dying_mid_job_is_retried(local_ray, tmp_path):
    from embedsearch.jobs.on_ray import RayMap

    def die_once(marker, value):  # nested, so Ray ships it by value
        from pathlib import Path

        if not Path(marker).exists():
            Path(marker).touch()
            os._exit(1)
        return value

    marker = tmp_path / "died-once"
    assert list(RayMap()(die_once, [(str(marker), 1), (str(marker), 2)])) == [1, 2]
    assert marker.exists()


def test_the_local_engine_never_imports_ray(tmp_path):
    code = ("import sys, numpy as np\n"
            "from embedsearch import Document, EmbedSettings, Index, ModelEntry, VectorSettings\n"
            "x = np.random.default_rng(0).normal(size=(2000, 16)).astype('float32')\n"
            "x /= np.linalg.norm(x, axis=1, keepdims=True)\n"
            "docs = [Document(f'd{i}', f'abstract {i}') for i in range(2000)]\n"
            "model = ModelEntry('m', 16, 'f', EmbedSettings(model='m'))\n"
            f"index = Index.from_embeddings(docs, x, {str(tmp_path / 'i')!r}, model, VectorSettings(index_type='ivfpq'))\n"
            "index.duplicates()\n"
            "assert 'ray' not in sys.modules, 'ray was imported'\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-1500:]


def test_ray_built_ivf_segments_share_one_quantizer_trained_across_files(local_ray, bundled_docs, tmp_path):
    """The corpus's size picks IVF for every segment, small ones too, and all are filled from one quantizer
    trained on a sample drawn across the files; answers equal a local build's (candidates re-scored exactly)."""
    from embedsearch.jobs.settings import RaySettings
    from embedsearch.store.settings import StoreSettings, VectorSettings
    from embedsearch.store.vectors import ivf

    files = []
    for number, part in enumerate((bundled_docs[:25], bundled_docs[25:45], bundled_docs[45:])):
        files.append(tmp_path / f"part{number}.jsonl")
        files[-1].write_text("".join(json.dumps({"id": d.id, "text": d.text}) + "\n" for d in part))
    options = {"embed": HASHING, "vectors": VectorSettings(exact_below=10, compress_above=20),
               "storage": StoreSettings(segment_rows=40)}
    on_ray = Index.from_sources(files, tmp_path / "ray-idx", ray=RaySettings(workers=2), **options)
    local = Index.from_sources(files, tmp_path / "local-idx", **options)
    assert [s.rows for s in on_ray.snapshot.segments] == [25, 20, 12]
    assert {s.index_type for s in on_ray.snapshot.segments} == {"ivfpq"} == \
        {s.index_type for s in local.snapshot.segments}
    centroids = [ivf.centroids(ivf.read_trained(s.folder / "vectors.faiss")) for s in on_ray.snapshot.segments]
    assert all(np.array_equal(c, centroids[0]) for c in centroids[1:])
    for query in ("vision-language-action robot policies", "diffusion language models"):
        assert [h.id for h in on_ray.search(query, 10, mode="dense")] == \
            [h.id for h in local.search(query, 10, mode="dense")]
    assert on_ray.check(deep=True) == []


def test_duplicates_across_shards_as_ray_tasks_equal_the_local_ones(local_ray, planted, tmp_path):
    """Jobs of 8 rows of one shard each, run as Ray tasks that open the shard folders themselves: the same pairs,
    and the planted ones straddle shards; ``cluster-dedup --engine ray`` gives the same groups."""
    from test_shards_analysis import evidence

    from embedsearch.jobs.on_ray import RayMap
    from embedsearch.store.cluster import owner

    index, _, _ = planted
    cluster = index.split(tmp_path / "c", 3)
    mapper = RayMap()
    got, expected = cluster.duplicates(ray=mapper, rows_per_job=8), cluster.duplicates(rows_per_job=8)
    assert evidence(got) == evidence(expected) and len(got.pairs) == 5
    assert any(owner(p.a, 3) != owner(p.b, 3) for p in got.pairs)
    assert sum(mapper.nodes.values()) == -(-len(cluster) // 8)  # jobs of 8 of the cluster's rows
    address = local_ray.get_runtime_context().gcs_address  # this worker's Ray, never another on the machine
    report = json.loads(run_cli("dedup", "--index", str(cluster.path), "--json", "--engine", "ray",
                                "--ray-address", address, check=True).stdout)
    assert sorted(sorted(g["members"]) for g in report["groups"]) == sorted(sorted(g.members) for g in expected.groups)


def test_cluster_topics_assigned_as_ray_tasks_that_read_the_shards_equal_the_local_ones(local_ray, latent_topics,
                                                                                         tmp_path):
    """The documents outside the sample are assigned in one Ray task per shard (20,000 rows a job), each opening
    its shard's folder: the same topics and map positions as in this process."""
    from embedsearch.jobs.on_ray import RayMap
    from embedsearch.topics import TopicSettings

    index, _ = latent_topics
    settings = TopicSettings(sample=600, seed=3, runs=5)
    local = index.split(tmp_path / "local", 2).topics(settings)
    mapper = RayMap()
    on_ray = index.split(tmp_path / "ray", 2).topics(settings, mapper)
    assert on_ray.assignments == local.assignments and sum(mapper.nodes.values()) >= 1
    np.testing.assert_allclose(on_ray.coordinates, local.coordinates, atol=1e-4)
