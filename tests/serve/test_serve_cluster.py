"""The cluster on Ray Serve (real replica processes on a local Ray cluster): the ingress answers like one
index; a SIGKILLed replica loses no request; a shard with no replica that answers makes answers partial,
naming it, until it is back; writes sent to the ingress reach the owning shard."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time

import httpx
import pytest
from test_shards import same

from embedsearch import Document, Index
from embedsearch.store.cluster import owner

pytestmark = pytest.mark.xdist_group("ray")


TOKEN = "cluster-write-token"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def served(single, tmp_path_factory):
    """``embedsearch serve --index CLUSTER --engine ray`` in its own process (its own local Ray): Ray Serve changes the process
    that drives it (print, stdout, the event loop), which the tests after these on this worker must not see."""
    if os.environ.get("EMBEDSEARCH_REQUIRE_RAY"):
        import ray.serve  # noqa: F401  (CI installs the extra: a missing Ray must fail there, not skip)
    else:
        pytest.importorskip("ray.serve", reason="pip install 'embedsearch[cluster]' to run the Ray Serve tests")
    folder = tmp_path_factory.mktemp("cluster")
    cluster = single.split(folder / "c", 2)
    port = free_port()
    log = (folder / "serve.log").open("w")
    server = subprocess.Popen([sys.executable, "-m", "embedsearch", "serve", "--index", str(cluster.path), "--engine", "ray",
                               "--port", str(port), "--shard-timeout", "3", "--writable"],  # default replicas and CPUs
                              stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                              env={**two_cpus(), "EMBEDSEARCH_TOKEN": TOKEN})
    SERVER["session"], SERVER["log"] = server.pid, folder / "serve.log"  # the server leads a session of its own
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
            deadline = time.time() + 360
            while not ready(client):
                assert time.time() < deadline and server.poll() is None, (folder / "serve.log").read_text()[-3000:]
                time.sleep(1)
            yield client, cluster
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(30)
        for pid in session_pids():  # what its Ray left behind (workers have process groups of their own)
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        log.close()


def two_cpus() -> dict[str, str]:
    """The environment of a server whose own local Ray has 2 CPUs, whatever this machine has (not this worker's Ray)."""
    return {**{k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}, "RAY_OVERRIDE_RESOURCES": '{"CPU": 2}'}


def ready(client: httpx.Client) -> bool:
    """The ingress answers and both replicas of each shard are up."""
    try:
        healthy = client.get("/health").status_code == 200
        return healthy and all(len(replica_pids(s)) == 2 for s in ("shard-000", "shard-001"))
    except httpx.HTTPError:
        return False


SERVER: dict = {"session": -1}  # the server process's session: its Ray's processes, and no one else's


def session_pids(marker: bytes = b"") -> list[int]:
    """Processes of the server's session whose command line holds ``marker``."""
    found = []
    for proc in os.listdir("/proc"):
        if proc.isdigit():
            try:
                with open(f"/proc/{proc}/stat", "rb") as fh:
                    session = int(fh.read().rsplit(b")", 1)[1].split()[3])
                with open(f"/proc/{proc}/cmdline", "rb") as fh:
                    if session == SERVER["session"] and marker in fh.read():
                        found.append(int(proc))
            except (OSError, ValueError, IndexError):
                continue
    return sorted(found)


def replica_pids(shard: str) -> list[int]:
    """The process ids of a shard's replicas (Ray names a replica's process after its deployment), counting
    only this server's: a Ray left over from an earlier server on this machine is not it."""
    return session_pids(f"ServeReplica:embedsearch:{shard}".encode())


class Answer:
    def __init__(self, payload):
        from embedsearch.retrieval.answer import Hit

        self.hits = [Hit(h["rank"], h["id"], h["score"], h["title"], h["text"], h["metadata"], h["cosine"], h["bm25"],
                         h["match"]) for h in payload["hits"]]


def test_the_defaults_on_two_cpus_fit_themselves_and_say_so(served):
    """2 shards x 2 replicas + the ingress at 1 CPU each would wait forever on 2 CPUs: each reserves 0.4."""
    deadline = time.time() + 30  # the line follows Ray Serve's own word that the application runs
    while "5 replicas at 0.4 CPU each" not in (said := SERVER["log"].read_text()) and time.time() < deadline:
        time.sleep(0.5)
    assert "Ray has 2 CPUs" in said and "each reserves 0.4 CPU" in said, said[-2000:]
    assert "serving" in said and "5 replicas at 0.4 CPU each" in said, said[-2000:]


@pytest.mark.parametrize("flags, phrases", [
    (["--cpus", "1"], ["need 5 CPUs", "has 2", "--cpus 0.4 or less", "--replicas"]),
    (["--start-timeout", "0.5"], ["not running after 0.5 s", "shard-000", "--start-timeout"]),
])
def test_a_reservation_that_cannot_fit_or_never_runs_ends_the_server_exit_2(served, flags, phrases):
    _, cluster = served
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "embedsearch", "serve", "--index", str(cluster.path), "--engine",
                             "ray", "--port", str(free_port()), *flags], capture_output=True, text=True,
                            env=two_cpus(), timeout=240, start_new_session=True)
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert result.returncode == 2 and len(errors) == 1, result.stderr[-3000:]
    assert all(p in errors[0] for p in phrases), errors[0]
    assert time.monotonic() - started < 120


@pytest.mark.parametrize("mode", ["hybrid", "dense", "lexical"])
def test_the_ingress_answers_like_one_index(served, single, scifact_sample, mode):
    client, _ = served
    for query in scifact_sample[1][:6]:
        got = client.get("/search", params={"q": query, "k": 10, "mode": mode})
        assert got.status_code == 200, got.text
        assert got.json()["partial"] is False and got.json()["missing"] == []
        assert same(Answer(got.json()), single.search(query, 10, mode=mode)), (mode, query)
    assert client.get("/search", params={"q": "  ", "k": 10}).status_code == 400


def test_similar_papers_documents_batches_and_info_come_from_every_shard(served, single, scifact_sample):
    client, cluster = served
    docs, queries = scifact_sample
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
    batch = client.post("/search", json={"queries": queries[:3], "k": 5, "mode": "lexical", "display": True}).json()
    assert [r["query"] for r in batch["results"]] == queries[:3]
    for result, query in zip(batch["results"], queries[:3]):
        assert same(Answer(result), single.search(query, 5, mode="lexical")) and not result["partial"]
        assert all(h["display"]["text"] for h in result["hits"])
    phrase = " ".join(re.findall(r"[A-Za-z]{4,}", docs[5].text)[2:4])  # fielded terms: exact on every shard
    got = client.get("/search", params={"q": f'"{phrase}" -zzqq', "k": 50}).json()
    assert {h["id"] for h in got["hits"]} == {h.id for h in single.find(f'"{phrase}" -zzqq', 50)} != set()
    listed = client.get("/search", params={"q": "-zzqq", "k": 5}).json()
    assert listed["total"] == len(single)  # undated papers list in the cluster's own row order
    assert [h["id"] for h in listed["hits"]] == [h.id for h in cluster.find("-zzqq", 5)]
    info = client.get("/info").json()
    assert info["documents"] == len(single) and info["generation"] == cluster.generation
    assert info["shards"] == {s.path.name: len(s) for s in cluster.shards} and info["bands"]["close"] > 0


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
    folder = cluster.path / "shards" / "shard-001"
    hidden = folder.with_name("shard-001.away")
    query = scifact_sample[1][8]
    first = set(Index.load(cluster.path).shards[0].documents.ids)
    folder.rename(hidden)
    try:
        for pid in replica_pids("shard-001"):
            os.kill(pid, signal.SIGKILL)
        answer = client.get("/search", params={"q": query, "k": 10}).json()
        assert answer["partial"] is True and answer["missing"] == ["shard-001"]
        assert answer["hits"] and {h["id"] for h in answer["hits"]} <= first
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


def test_topics_and_the_map_cover_every_shard_once_fitted_in_the_background(served, single):
    """Topics are fitted from the start in the background (``/topics`` answers 503 with Retry-After until
    then: the fit may have read shard-001 while the test before hid it, and is then tried again); then every
    document of every shard is in a topic or unassigned, a paper's record names its topic, and the map draws
    papers of both shards."""
    client, cluster = served
    got = client.get("/topics")
    deadline = time.time() + 300
    while got.status_code == 503:
        assert got.headers.get("Retry-After") and ("being computed" in got.text or "trying again" in got.text), got.text
        assert time.time() < deadline, got.text
        time.sleep(2)
        got = client.get("/topics")
    body = got.json()
    assert got.status_code == 200 and body["generation"] == cluster.generation, got.text
    members = [m for t in body["topics"] for m in t["members"]] + body["unassigned"]
    assert sorted(members) == sorted(single.documents.ids) and len(body["topics"]) >= 2
    shard_of = {i: s.path.name for s in cluster.shards for i in s.documents.ids}
    assert any(len({shard_of[m] for m in t["members"]}) == 2 for t in body["topics"])
    topic = body["topics"][0]
    paper = client.get(f"/documents/{topic['members'][0]}").json()
    assert paper["topic"] == {"id": topic["id"], "name": topic["name"], "label": topic["label"],
                             "size": topic["size"]}
    page = client.get("/map")
    assert page.status_code == 200 and "2 shards" in page.text, page.text[:300]
    import base64, gzip, json, re
    data = json.loads(re.search(r'id="map-data">(.*?)</script>', page.text, re.S).group(1).replace("<\\/", "</"))
    drawn = gzip.decompress(base64.b64decode(data["ids"])).decode().split("\n")
    assert sorted(drawn) == sorted(single.documents.ids)  # every paper of both shards is drawn
    assert {shard_of[m] for m in drawn} == {"shard-000", "shard-001"}
    assert client.get("/map", params={"level": 99}).status_code == 422


def pairs_of(report: dict) -> set[tuple[str, str, str]]:
    return {(p["a"], p["b"], p["verdict"]) for g in report["groups"] for p in g["pairs"]}


def test_duplicate_checks_on_the_ingress_judge_every_shard(served, single, scifact_sample):
    """A copy of a paper of either shard is flagged as the cluster judges it in process (JSON, displayed, and
    CSV for an uploaded file); a paper's own near-duplicates are one index's; an add that checks for
    duplicates is refused (409) and changes nothing."""
    client, cluster = served
    docs, _ = scifact_sample
    by_shard = {owner(d.id, 2): d for d in docs[:20]}
    assert len(by_shard) == 2
    for copied in by_shard.values():
        got = client.post("/duplicates/check", json={"text": copied.text, "display": True})
        assert got.status_code == 200, got.text
        body = got.json()
        expected = Index.load(cluster.path).check_duplicates([Document("new", copied.text)]).to_json()
        assert pairs_of(body) == pairs_of(expected) and ("new", copied.id) in {(a, b) for a, b, _ in pairs_of(body)}
        assert body["generation"] == Index.load(cluster.path).generation
        assert copied.text[:40] in body["groups"][0]["pairs"][0]["display"]["b"]
    paper = docs[3]
    of = client.get(f"/duplicates/of/{paper.id}")
    assert of.status_code == 200 and pairs_of(of.json()) == pairs_of(single.duplicates(of=[paper.id]).to_json())
    assert client.get("/duplicates/of/nope").status_code == 404
    upload = "\n".join(json.dumps({"id": f"up-{d.id}", "text": d.text}) for d in by_shard.values())
    csv = client.post("/duplicates/check-file", params={"name": "batch.jsonl"}, content=upload)
    assert csv.status_code == 200 and csv.headers["X-Judged"] == "2", csv.text
    assert all(f"up-{d.id}" in csv.text and d.id in csv.text for d in by_shard.values())
    before = client.get("/info").json()
    refused = client.post("/documents", headers={"Authorization": f"Bearer {TOKEN}"},
                          json={"documents": [{"id": "copy-1", "text": paper.text}], "check_duplicates": True})
    assert refused.status_code == 409 and "nothing was added" in refused.text, refused.text
    assert '"on_duplicate": "skip"' in refused.json()["error"] and "--on-duplicate" not in refused.text  # its key
    assert client.get("/info").json()["generation"] == before["generation"]


def test_writes_through_the_ingress_go_to_the_owning_shard_as_new_cuts(served):
    """Last here: the cluster ends with the documents it started with, compacted."""
    client, cluster = served
    new = {"id": "http-new-1", "text": "Zebrafish fin regeneration needs osteoblast dedifferentiation signals."}
    auth = {"Authorization": f"Bearer {TOKEN}"}
    query = {"q": "zebrafish fin regeneration osteoblast", "k": 3, "mode": "lexical"}
    assert client.post("/documents", json={"documents": [new]}).status_code == 401
    before = client.get("/info").json()
    added = client.post("/documents", json={"documents": [new]}, headers=auth)
    assert added.status_code == 201, added.text
    assert added.json()["generation"] == before["generation"] + 1
    assert added.json()["documents"] == before["documents"] + 1
    generations = [json.loads((cluster.path / "cuts" / f"{n}.json").read_text())["generations"]
                   for n in (before["generation"], before["generation"] + 1)]
    home = owner(new["id"], 2)
    assert [a != b for a, b in zip(*generations)] == [s == home for s in range(2)]
    assert client.get("/search", params=query).json()["hits"][0]["id"] == new["id"]
    assert client.get(f"/documents/{new['id']}").json()["text"] == new["text"]
    again = client.post("/documents", json={"documents": [new]}, headers=auth)
    assert again.status_code == 409 and "already in the index" in again.text, again.text
    removed = client.delete(f"/documents/{new['id']}", headers=auth)
    assert removed.status_code == 200 and removed.json()["documents"] == before["documents"], removed.text
    assert new["id"] not in {h["id"] for h in client.get("/search", params=query).json()["hits"]}
    assert client.delete(f"/documents/{new['id']}", headers=auth).status_code == 404
    assert client.post("/compact").status_code == 401
    compacted = client.post("/compact", headers=auth)
    assert compacted.status_code == 200, compacted.text
    assert compacted.json() == {"generation": before["generation"] + 2, "documents": before["documents"],
                                "segments": 2}  # one per shard
    assert same(Answer(client.get("/search", params={**query, "mode": "hybrid"}).json()),
                Index.load(cluster.path).search(query["q"], 3, mode="hybrid").hits)


def test_the_web_page_searches_the_cluster_and_shows_a_paper_with_its_similar_papers(served, single, scifact_sample,
                                                                                        browser):
    """The single-index page on the ingress: a search lists the cluster's answer; a paper's own page shows it,
    its similar papers from every shard, and its near-duplicates over every shard (none here)."""
    from urllib.parse import quote

    client, cluster = served
    url = str(client.base_url).rstrip("/")
    docs, queries = scifact_sample
    page = browser.new_page()
    try:
        page.goto(url + "/")
        page.wait_for_function(f"document.getElementById('about').textContent.includes('{len(single)} papers')")
        page.locator("#mode").select_option("lexical")
        page.locator("#q").fill(queries[2])
        page.locator("#q").press("Enter")
        expected = [h.id for h in single.search(queries[2], 10, mode="lexical")]
        page.wait_for_function("(n) => document.querySelectorAll('#results > li').length === n", arg=len(expected))
        assert expected[0] in page.locator("#results > li").first.inner_text()
        paper = docs[3]
        page.goto(url + f"/paper/{quote(paper.id, safe='')}")
        page.wait_for_function("document.querySelectorAll('#paper .similar > li .id').length === 5")
        assert page.locator("#paper .similar > li .id").all_inner_texts() == [h.id for h in single.similar(paper.id, 5)]
        page.wait_for_function("document.querySelector('#paper .paper-duplicates').textContent.includes('None: no other')")
        assert not single.duplicates(of=[paper.id]).pairs
        assert paper.text[:60] in page.locator("#paper .abstract").inner_text()
    finally:
        page.close()
