"""The cluster on Ray Serve (real replica processes on a local Ray cluster): the ingress answers like one
index; a SIGKILLed replica loses no request; a shard with no replica that answers makes answers partial,
naming it, until it is back."""

from __future__ import annotations

import builtins
import os
import signal
import socket
import sys
import threading
import time

import httpx
import pytest
from test_shards import same

from embedsearch.shards import Cluster

pytestmark = pytest.mark.xdist_group("ray")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def served(local_ray, single, tmp_path_factory):
    from ray import serve

    from embedsearch.serve.cluster import ClusterSettings, application

    cluster = Cluster.split(single, tmp_path_factory.mktemp("cluster") / "c", 2)
    port = free_port()
    serve.start(http_options={"host": "127.0.0.1", "port": port})
    serve.run(application(cluster.root, ClusterSettings(replicas=2, cpus=0.25, shard_timeout_s=3.0)), name="embedsearch",
              route_prefix="/")
    saved = builtins.print, sys.stdout, sys.stderr
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
            yield client, cluster
    finally:
        serve.shutdown()
        # Ray Serve's shutdown redirects print, stdout and stderr in the calling process, and numba cannot
        # compile code that calls a Python-level print (later topic fits on this worker would fail)
        builtins.print, sys.stdout, sys.stderr = saved


def replica_pids(shard: str, replicas: int = 2) -> list[int]:
    """The process ids of a shard's replicas, asked of the replicas themselves through its handle."""
    from ray import serve

    handle = serve.get_deployment_handle(shard, app_name="embedsearch")
    seen: set[int] = set()
    for _ in range(200):
        seen.add(handle.pid.remote().result(timeout_s=30))
        if len(seen) == replicas:
            break
    return sorted(seen)


class Answer:
    def __init__(self, payload):
        from embedsearch.retrieval.search import Hit

        self.hits = [Hit(h["rank"], h["id"], h["score"], h["title"], h["text"], h["metadata"], h["cosine"], h["bm25"],
                         h["match"]) for h in payload["hits"]]


@pytest.mark.parametrize("mode", ["hybrid", "dense", "lexical"])
def test_the_ingress_answers_like_one_index(served, single, scifact_sample, mode):
    client, _ = served
    for query in scifact_sample[1][:6]:
        got = client.get("/search", params={"q": query, "k": 10, "mode": mode})
        assert got.status_code == 200, got.text
        assert got.json()["partial"] is False and got.json()["missing"] == []
        assert same(Answer(got.json()), single.search(query, 10, mode=mode)), (mode, query)
    assert client.get("/search", params={"q": "  ", "k": 10}).status_code == 400


def test_similar_papers_and_documents_come_from_every_shard(served, single, scifact_sample):
    client, _ = served
    docs, _ = scifact_sample
    for doc in docs[:6]:
        got = client.get(f"/similar/{doc.id}", params={"k": 10})
        assert got.status_code == 200 and got.json()["partial"] is False, got.text
        assert same(Answer(got.json()), single.similar(doc.id, 10)), doc.id
    text = docs[3].text[:300]
    got = client.post("/similar", json={"text": text, "k": 5}).json()
    assert same(Answer(got), single.similar_to_text(text, 5))
    paper = client.get(f"/documents/{docs[9].id}").json()
    assert paper["id"] == docs[9].id and paper["text"] == docs[9].text
    assert client.get("/similar/nope").status_code == 404 and client.get("/documents/nope").status_code == 404
    assert "no document with id 'nope'" in client.get("/documents/nope").json()["error"]


def test_a_killed_replica_loses_no_request(served, single, scifact_sample):
    """Four clients keep requests in flight on both replicas of shard-000 while one of them is SIGKILLed."""
    client, _ = served
    pids = replica_pids("shard-000")
    assert len(pids) == 2, pids
    query = scifact_sample[1][7]
    expected = [h.id for h in single.search(query, 100)]
    answers: list = []

    def load() -> None:
        for _ in range(25):
            answers.append(client.get("/search", params={"q": query, "k": 100}))

    workers = [threading.Thread(target=load) for _ in range(4)]
    for worker in workers:
        worker.start()
    while len(answers) < 12:
        time.sleep(0.01)
    os.kill(pids[0], signal.SIGKILL)
    for worker in workers:
        worker.join(180)
    assert len(answers) == 100 and [a.status_code for a in answers] == [200] * 100
    assert [a.json()["missing"] for a in answers] == [[]] * 100
    assert all([h["id"] for h in a.json()["hits"]] == expected for a in answers)
    assert pids[0] not in replica_pids("shard-000")


def test_a_shard_with_no_replica_that_answers_is_named_until_it_is_back(served, single, scifact_sample):
    client, cluster = served
    folder = cluster.root / "shards" / "shard-001"
    hidden = folder.with_name("shard-001.away")
    query = scifact_sample[1][8]
    folder.rename(hidden)
    try:
        for pid in replica_pids("shard-001"):
            os.kill(pid, signal.SIGKILL)
        answer = client.get("/search", params={"q": query, "k": 10}).json()
        assert answer["partial"] is True and answer["missing"] == ["shard-001"]
        assert answer["hits"] and {h["id"] for h in answer["hits"]} <= set(cluster.shards[0].index.documents.ids)
    finally:
        hidden.rename(folder)
    deadline = time.time() + 90
    while time.time() < deadline:
        answer = client.get("/search", params={"q": query, "k": 10}).json()
        if not answer["partial"]:
            break
        time.sleep(1)
    assert answer["partial"] is False
    assert [h["id"] for h in answer["hits"]] == [h.id for h in single.search(query, 10)]
