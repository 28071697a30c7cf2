"""``embedsearch serve`` as clients see it: a real server process on 127.0.0.1 (two workers), answers equal
to the library's, writes refused without the token, 1,000 hostile requests answered with JSON 4xx, slow
clients, commits from the API and from another process followed by every worker, reads during writes."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from conftest import REPO, run_cli
from serve_helpers import TOKEN, Server

from embedsearch import Index

CTMC = "001_d172d3709162399d:3"
REWORDED = (
    "Discrete diffusion models built on continuous-time Markov chains (CTMCs) perform strongly on language and "
    "discrete data generation, yet existing approaches typically parameterize the reverse rate matrix monolithically "
    "through proxies such as concrete scores or clean-data predictions rather than aligning the parameterization "
    "with the intrinsic CTMC decomposition into jump timing and jump direction. We introduce Neural CTMC, which "
    "exploits the Poisson structure of CTMC dynamics by separately parameterizing the reverse process through an "
    "exit rate (when to jump) and a jump distribution (where to jump) via two dedicated network heads. We show that "
    "the evidence lower bound reduces to a path-space KL divergence between the true and learned reverse processes.")
SAME_TOPIC = (
    "Masked diffusion language models generate text by iteratively unmasking tokens, but their sampling quality "
    "degrades with few steps. We study the choice of unmasking order and propose a learned planner that decides "
    "which positions to reveal next from the denoiser's confidence. On text8 and OpenWebText the planner improves "
    "perplexity at eight to thirty-two steps and transfers to code generation without retraining.")


@pytest.fixture(scope="module")
def server(metadata_index):
    running = Server(metadata_index.path, "--writable", "--workers", "2", "--no-topics")
    yield running
    running.stop()


@pytest.fixture(scope="module")
def client(server):
    with server.client() as c:
        yield c


def test_search_answers_exactly_as_the_library_and_cli_do(client, metadata_index):
    from embedsearch import Index

    index = Index.load(metadata_index.path)
    for query, mode in [("discrete diffusion with continuous-time Markov chains", None),
                        ("vision-language-action robot policies", "dense"), ("privacy", "lexical")]:
        params = {"q": query, "k": 5, **({"mode": mode} if mode else {})}
        body = client.get("/search", params=params).json()
        assert body["hits"] == [h.to_json() for h in index.find(query, 5, mode)]
    assert client.get("/search", params={"q": "discrete diffusion with continuous-time Markov chains"}).json()[
        "hits"][0]["id"] == CTMC
    cli = run_cli("search", "discrete diffusion with continuous-time Markov chains", "-k", "5", "--json",
                  "--index", str(metadata_index.path), check=True)
    assert [json.loads(line) for line in cli.stdout.splitlines()] == client.get(
        "/search", params={"q": "discrete diffusion with continuous-time Markov chains", "k": 5}).json()["hits"]
    batch = client.post("/search", json={"queries": ["robot world models", "privacy"], "k": 3}).json()["results"]
    assert [r["hits"] for r in batch] == [client.get("/search", params={"q": q, "k": 3}).json()["hits"]
                                          for q in ("robot world models", "privacy")]


def test_a_search_comes_a_page_at_a_time(client, metadata_index):
    """``offset`` gives the next page of the same ranking, ranks running on; ``more`` says whether another
    page may follow; the deepest page is refused past ``LIMITS.offset`` (422), never answered wrongly."""
    query = "spiking neural networks"
    whole = [h.to_json() for h in metadata_index.find(query, 57)]
    first = client.get("/search", params={"q": query, "k": 25}).json()
    second = client.get("/search", params={"q": query, "k": 25, "offset": 25}).json()
    last = client.get("/search", params={"q": query, "k": 25, "offset": 50}).json()
    assert first["hits"] + second["hits"] + last["hits"] == whole
    assert [h["rank"] for h in second["hits"]] == list(range(26, 51)) and second["offset"] == 25
    assert (first["more"], second["more"], last["more"]) == (True, True, False)
    batch = client.post("/search", json={"queries": [query], "k": 25, "offset": 25}).json()["results"][0]
    assert batch["hits"] == second["hits"] and batch["more"]
    assert client.get("/search", params={"q": query, "offset": 901}).status_code == 422


def test_scores_say_when_nothing_is_a_close_match(client):
    nonsense = client.get("/search", params={"q": "zzzqqq xyzzy", "k": 10}).json()
    assert nonsense["match"] == "none" and {h["match"] for h in nonsense["hits"]} <= {"distant"}
    assert all(h["cosine"] < 0.3 for h in nonsense["hits"])
    found = client.get("/search", params={"q": "discrete diffusion with continuous-time Markov chains"}).json()
    assert found["match"] != "none" and found["hits"][0]["match"] != "distant"
    for mode in ("dense", "lexical"):
        hit = client.get("/search", params={"q": "continuous-time Markov chains", "mode": mode, "k": 1}).json()["hits"][0]
        assert hit["cosine"] == pytest.approx(found["hits"][0]["cosine"], abs=0.2) and hit["match"] != "distant"
    assert client.post("/similar", json={"text": "A recipe for chocolate cake with fresh strawberries."}).json()[
        "match"] == "none"


def test_display_gives_texts_rendered_for_reading_and_text_stays_as_stored(client):
    plain = client.get(f"/documents/{CTMC}").json()
    shown = client.get(f"/documents/{CTMC}", params={"display": "true"}).json()
    assert "display" not in plain and shown["text"] == plain["text"] and "\\textbf{Neural CTMC}" in plain["text"]
    assert "Neural CTMC" in shown["display"]["text"] and "\\" not in shown["display"]["text"]
    hit = client.get("/search", params={"q": "Neural CTMC exit rate", "k": 1, "display": 1}).json()["hits"][0]
    assert hit["id"] == CTMC and hit["display"]["text"] == shown["display"]["text"]
    check = client.post("/duplicates/check", json={"text": REWORDED, "display": True}).json()
    pair = check["groups"][0]["pairs"][0]
    assert pair["display"]["a"] == REWORDED and pair["display"]["b"] == shown["display"]["text"]
    assert all(p in shown["display"]["text"] or p in REWORDED for p in pair["display"]["passages"])


def test_concurrent_queries_encoded_together_each_get_their_own_answer(server, metadata_index):
    """Many clients at once: the worker encodes their queries in shared model calls, and every answer must
    still be the library's answer to that client's own query."""
    from concurrent.futures import ThreadPoolExecutor

    from embedsearch import Index

    index = Index.load(metadata_index.path)
    words = ["diffusion", "robots", "privacy", "graphs", "language models", "routing", "vision", "proteins",
             "reinforcement learning", "attention", "federated", "speech"]
    queries = [f"{a} and {b}" for a in words for b in words if a != b][:96]
    expected = {q: [h["id"] for h in map(lambda h: h.to_json(), index.search(q, 5, "dense"))] for q in queries}

    def ask(q: str) -> tuple[str, list[str]]:
        with httpx.Client(base_url=server.url, timeout=60) as c:
            return q, [h["id"] for h in c.get("/search", params={"q": q, "k": 5, "mode": "dense"}).json()["hits"]]

    with ThreadPoolExecutor(24) as pool:
        answers = dict(pool.map(ask, queries))
    assert answers == expected


def test_similar_documents_and_unknown_ids(client, metadata_index):
    from embedsearch import Index

    index = Index.load(metadata_index.path)
    assert client.get(f"/similar/{CTMC}", params={"k": 4}).json()["hits"] == [h.to_json() for h in
                                                                              index.similar(CTMC, 4)]
    text = index.documents.get([0])[0].text
    assert client.post("/similar", json={"text": text, "k": 3}).json()["hits"] == [
        h.to_json() for h in index.similar_to_text(text, 3)]
    doc = client.get(f"/documents/{CTMC}").json()
    assert doc["id"] == CTMC and doc["text"].startswith("Discrete diffusion") and set(doc["metadata"]) == {"track", "year"}
    for path in ("/documents/nope", "/similar/nope", "/documents/..%2F..%2Fmanifest.json"):
        response = client.get(path)
        assert response.status_code == 404 and "no document" in response.json()["error"]
    assert client.get("/documents/a%00b").status_code == 400  # no id holds a control character


def test_filters_narrow_results_and_info_lists_the_fields(client):
    fields = {f["name"]: f for f in client.get("/info").json()["fields"]}
    assert [v["value"] for v in fields["track"]["values"]] and (fields["year"]["min"], fields["year"]["max"]) == (2025, 2026)
    query = {"q": "learning", "k": 57}
    everything = client.get("/search", params=query).json()["hits"]
    track_a = client.get("/search", params={**query, "filter": "track=A"}).json()["hits"]
    both = client.get("/search", params=[*query.items(), ("filter", "track=A"), ("filter", "year>=2026")]).json()["hits"]
    assert 0 < len(both) < len(track_a) < len(everything)
    assert all(h["metadata"]["track"] == "A" for h in track_a)
    assert all(h["metadata"]["track"] == "A" and h["metadata"]["year"] == 2026 for h in both)
    bad = client.get("/search", params={**query, "filter": "track>=3"})
    assert bad.status_code == 400 and "holds text" in bad.json()["error"]


def test_duplicate_check_flags_a_rewording_with_passages_and_not_a_topic_neighbour(client, metadata_index):
    from embedsearch import Document, Index

    one = client.post("/duplicates/check", json={"text": REWORDED}).json()
    assert one["judged"] == 1 and len(one["groups"]) == 1
    pair = one["groups"][0]["pairs"][0]
    assert pair["b"] == CTMC and pair["verdict"] in ("near-identical", "reworded") and pair["passages"]
    assert all(p in REWORDED for p in pair["passages"])
    batch = client.post("/duplicates/check", json={"abstracts": [{"id": "sub-1", "text": REWORDED},
                                                                 {"id": "sub-2", "text": SAME_TOPIC}]}).json()
    assert batch["judged"] == 2 and [g["absorbed"] for g in batch["groups"]] == [["sub-1"]]
    expected = Index.load(metadata_index.path).check_duplicates([Document("sub-1", REWORDED),
                                                                 Document("sub-2", SAME_TOPIC)])
    assert {k: v for k, v in batch.items() if k != "generation"} == expected.to_json()
    neither = client.post("/duplicates/check", json={"text": REWORDED, "abstracts": [{"text": SAME_TOPIC}]})
    assert neither.status_code == 422 and "not both" in neither.json()["error"]


def test_writes_are_refused_without_the_token_and_change_nothing(server, client):
    before = client.get("/info").json()
    new = {"documents": [{"id": "intruder", "text": "An abstract that must not be added."}]}
    for headers, status in (({}, 401), ({"Authorization": "Bearer wrong"}, 403), ({"Authorization": TOKEN}, 401),
                            ({"Authorization": "Basic x"}, 401), ({"Authorization": "Bearer"}, 401)):
        for refused in (client.post("/documents", json=new, headers=headers),
                        client.delete(f"/documents/{CTMC}", headers=headers), client.post("/compact", headers=headers)):
            assert refused.status_code == status, (headers, refused.text)
            assert refused.headers["WWW-Authenticate"].startswith("Bearer")  # how to authenticate, either way
    after = client.get("/info").json()
    assert (after["generation"], after["documents"]) == (before["generation"], before["documents"])
    assert client.get("/documents/intruder").status_code == 404
    assert client.get(f"/documents/{CTMC}").status_code == 200


def _hostile_requests() -> list[tuple[str, str, dict]]:
    """1,000 malformed or hostile requests: (method, path, httpx keyword arguments)."""
    import random

    rng = random.Random(7)
    weird = ["\u202eevil", "😀" * 50, "e\u0301" * 30, "\u0000", "\ufeff", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "\\", "%", "'; DROP TABLE x;--",
             "<script>alert(1)</script>", "../../etc/passwd", "..%2f..%2f", " " * 10, "\t\n", "null", "[]", "{}"]
    out: list[tuple[str, str, dict]] = []
    bodies = ["{", "[]", "null", "1", '"x"', '{"queries": "a"}', '{"queries": [1, 2]}', '{"queries": [null]}',
              '{"queries": ["a"], "k": 1e999}', '{"queries": ["a"], "k": -1}', '{"queries": ["a"], "k": "ten"}',
              '{"queries": ["a"], "mode": "magic"}', '{"queries": ["a"], "extra": 1}', '{"queries": ["\\ud800"]}',
              '{"queries": ["a"], "filters": ["year>>1"]}', '{"queries": ' + json.dumps(["q"] * 1000) + "}",
              '{"text": 5}', '{"text": "a", "k": 0}', "\xff\xfe", '{"queries": ["a"]}' + "x"]
    keys = ["q", "k", "mode", "filter"]
    for i in range(1000):
        kind = i % 10
        if kind == 0:
            out.append(("GET", "/search", {"params": {"q": rng.choice(weird + ["a"]), "k": rng.choice(
                ["0", "-5", "1000000000", "1e3", "ten", "", "2.5", "99999999999999999999999"])}}))
        elif kind == 1:
            out.append(("GET", "/search", {"params": {"q": "robots", "mode": rng.choice(["", "magic", "DENSE", "🚀"]),
                                                      rng.choice(["x", "K", "query", "filters"]): "1"}}))
        elif kind == 2:
            out.append(("POST", "/search", {"content": rng.choice(bodies).encode("utf-8", "surrogatepass"),
                                            "headers": {"Content-Type": "application/json"}}))
        elif kind == 3:
            out.append(("POST", rng.choice(["/similar", "/duplicates/check"]),
                        {"content": rng.choice(bodies + ['{"abstracts": []}', '{"abstracts": [{"text": ""}]}',
                                                         '{"abstracts": [{"id": "a", "text": "x", "bogus": 1}]}']),
                         "headers": {"Content-Type": rng.choice(["application/json", "text/plain", "x/y"])}}))
        elif kind == 4:
            trick = rng.choice(["../../../etc/passwd", "%2e%2e%2f%2e%2e%2fmanifest.json", "a%00b", "%ff%fe",
                                "x" * 5000, "..\\..\\windows", "%252e%252e", "\u202e", "😀", "a/b/c", "?", "#"])
            out.append(("GET", rng.choice(["/documents/", "/similar/", "/static/", "/map/"]) + trick, {}))
        elif kind == 5:
            size = rng.choice([10, 10, 10, 10, 5_000_001, -1])
            body = (b"{" * 100_000 for _ in range(45)) if size < 0 else b"{" * size  # -1: chunked, no length
            out.append(("POST", "/search", {"content": body, "headers": {"Content-Type": "application/json"}}))
        elif kind == 6:
            out.append((rng.choice(["PUT", "PATCH", "DELETE", "OPTIONS"]), rng.choice(["/search", "/topics", "/info"]), {}))
        elif kind == 7:
            out.append(("GET", "/search", {"params": {"q": "a" * rng.choice([2001, 20001, 60000])}}))
        elif kind == 8:
            out.append(("GET", "/search", {"params": [("q", "robots")] + [("filter", rng.choice(
                ["year>=", "=x", "year>=nan", "year>=inf", "track>=1", "year=1.5", "a" * 600, "year=>1"]))] *
                rng.choice([1, 17])}))
        else:
            out.append(("GET", rng.choice(["/topics", "/similar/" + CTMC, "/health"]),
                        {"params": {rng.choice(keys + ["level"]): rng.choice(["-1", "abc", "1e9", "99"])}}))
    return out


def test_a_thousand_hostile_requests_get_json_4xx_and_the_server_stays_up(server, client):
    reference = client.get("/search", params={"q": "robot world models", "k": 5}).json()["hits"]
    seen = {}
    for method, path, kwargs in _hostile_requests():
        response = client.request(method, path, **kwargs)
        assert response.status_code < 500, (method, path, response.status_code, response.text[:300])
        seen[response.status_code] = seen.get(response.status_code, 0) + 1
        if response.status_code >= 400:
            assert isinstance(response.json()["error"], str) and "\n" not in response.json()["error"], path
    assert sum(seen.values()) == 1000 and set(seen) - {200} <= {400, 401, 403, 404, 405, 413, 414, 422}
    assert seen.get(200, 0) < 200  # nearly all were refused, not silently answered
    assert server.proc.poll() is None
    assert client.get("/search", params={"q": "robot world models", "k": 5}).json()["hits"] == reference


def test_bodies_past_the_limit_are_refused_before_they_are_read(client):
    from embedsearch.serve import LIMITS

    over = b'{"queries": ["' + b"a" * LIMITS.body_bytes + b'"]}'
    for content in (over, (over[i:i + 65536] for i in range(0, len(over), 65536))):  # declared, then chunked
        response = client.post("/search", content=content, headers={"Content-Type": "application/json"})
        assert response.status_code == 413 and "4,000,000-byte limit" in response.json()["error"]
    under = client.post("/search", json={"queries": ["a" * 19_000], "k": 1})
    assert under.status_code == 200


def test_slow_clients_do_not_hold_up_others(server, client):
    sockets = []
    for n in range(30):
        s = socket.create_connection(("127.0.0.1", server.port))
        s.sendall(b"POST /search HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
                  if n % 2 else b"GET /search?q=rob")
        sockets.append(s)
    try:
        assert client.get("/search", params={"q": "robot world models"}).status_code == 200
        for s in sockets:  # answered while every slow client still holds its half-sent request
            s.setblocking(False)
            with pytest.raises(BlockingIOError):
                s.recv(1)
    finally:
        for s in sockets:
            s.close()
    assert client.get("/health").status_code == 200


@pytest.fixture()
def writable(metadata_index, tmp_path):
    target = tmp_path / "idx"
    shutil.copytree(metadata_index.path, target)
    running = Server(target, "--writable", "--workers", "2", "--no-topics")
    yield running, target
    running.stop()


def _everywhere(client, generation: int, workers: int = 2, hang_guard: float = 120.0) -> None:
    """Wait until every worker (told apart by the pid ``/health`` reports; each request on a new connection,
    so any worker may answer) serves ``generation`` or a newer one. How fast is measured in serve_bench; the
    guard only stops a test that would otherwise hang."""
    start, seen = time.perf_counter(), {}
    while len([g for g in seen.values() if g >= generation]) < workers:
        health = client.get("/health", headers={"Connection": "close"}).json()
        seen[health["worker"]] = health["generation"]
        assert time.perf_counter() - start < hang_guard, f"workers at generations {seen}, expected {generation}"


def test_api_writes_commit_and_every_worker_serves_them(writable):
    server, path = writable
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with server.client() as c:
        new = [{"id": "new/one", "title": "Neural CTMC again", "text": REWORDED, "metadata": {"track": "Z"}},
               {"id": "new-two", "text": SAME_TOPIC}]
        refused = c.post("/documents", json={"documents": new, "check_duplicates": True}, headers=auth)
        assert refused.status_code == 409 and "'new/one'" in refused.json()["error"] and CTMC in refused.json()["error"]
        assert c.get("/health").json()["documents"] == 57 and c.get("/documents/new-two").status_code == 404
        checked = c.post("/duplicates/check", json={"abstracts": new}).json()
        added = c.post("/documents", json={"documents": new, "check_duplicates": True, "on_duplicate": "add"},
                       headers=auth)
        assert added.status_code == 201 and added.json()["documents"] == 59 and added.json()["skipped"] == []
        pairs = [(p["a"], p["b"]) for g in added.json()["duplicates"]["groups"] for p in g["pairs"]]
        assert pairs == [("new/one", CTMC)] == [(p["a"], p["b"]) for g in checked["groups"] for p in g["pairs"]]
        _everywhere(c, added.json()["generation"])
        within = c.get("/duplicates/of/new%2Fone", params={"display": "true"}).json()["groups"]
        assert {p["a"] for g in within for p in g["pairs"]} | {p["b"] for g in within for p in g["pairs"]} == {
            "new/one", CTMC} and "Neural CTMC" in within[0]["pairs"][0]["display"]["b" if within[0]["pairs"][0][
                "b"] == CTMC else "a"]
        _everywhere(c, added.json()["generation"])
        assert all(c.get("/documents/new%2Fone", headers={"Connection": "close"}).status_code == 200
                   for _ in range(10))
        assert c.get("/search", params={"q": "learned unmasking order planner", "k": 1}).json()["hits"][0]["id"] == "new-two"
        clash = c.post("/documents", json={"documents": [{"id": CTMC, "text": "x y"}]}, headers=auth)
        assert clash.status_code == 409 and CTMC in clash.json()["error"]
        removed = c.delete("/documents/new-two", headers=auth)
        assert removed.status_code == 200
        _everywhere(c, removed.json()["generation"])
        assert all(c.get("/documents/new-two", headers={"Connection": "close"}).status_code == 404
                   for _ in range(10))
        assert c.delete("/documents/new-two", headers=auth).status_code == 404
        assert c.post("/compact", headers=auth).json()["segments"] == 1
        assert c.get("/health").json()["documents"] == 58
    from embedsearch import Index

    assert Index.load(path).check(deep=True) == [] and "new/one" in Index.load(path).documents.row_of


def test_a_cli_add_in_another_process_is_served_by_every_worker(writable, tmp_path):
    server, path = writable
    source = tmp_path / "more.jsonl"
    source.write_text(json.dumps({"id": "from-cli", "text": SAME_TOPIC}) + "\n")
    from embedsearch import Index

    run_cli("add", str(source), "--index", str(path), check=True)
    committed = Index.load(path).generation
    with server.client() as c:
        _everywhere(c, committed)
        assert all(c.get("/documents/from-cli", headers={"Connection": "close"}).status_code == 200
                   for _ in range(10))


READER = """
import collections, json, os, sys, time, httpx
url, stop = sys.argv[1], sys.argv[2]
statuses, generations = collections.Counter(), set()
end = time.time() + 180
with httpx.Client(base_url=url, timeout=30) as c:
    while not os.path.exists(stop) and time.time() < end:
        for method, path, kw in [("GET", "/search", {"params": {"q": "discrete diffusion", "k": 5}}),
                                 ("GET", "/similar/001_d172d3709162399d:3", {}),
                                 ("POST", "/duplicates/check", {"json": {"text": sys.argv[3]}})]:
            r = c.request(method, path, **kw)
            statuses[r.status_code] += 1
            if r.status_code == 200:
                generations.add(r.json().get("generation"))
print(json.dumps({"statuses": statuses, "generations": sorted(g for g in generations if g)}))
"""


def test_reads_never_fail_while_writers_commit(writable, tmp_path):
    server, _ = writable
    stop = tmp_path / "stop"
    readers = [subprocess.Popen([sys.executable, "-c", READER, server.url, str(stop), REWORDED], stdout=subprocess.PIPE,
                                text=True, cwd=REPO) for _ in range(3)]
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with server.client() as c:
        for batch in range(5):
            docs = [{"id": f"w{batch}-{i}", "text": f"{SAME_TOPIC} Variant {batch} {i}."} for i in range(20)]
            assert c.post("/documents", json={"documents": docs}, headers=auth).status_code == 201
            time.sleep(0.5)
    stop.touch()  # readers run until every commit is done, however slow a loaded machine makes the commits
    results = [json.loads(r.communicate(timeout=60)[0]) for r in readers]
    for result in results:
        assert set(result["statuses"]) == {"200"}, result
    assert max(len(r["generations"]) for r in results) >= 3


def test_workers_listen_on_a_socket_that_gets_tcp_nodelay():
    """uvicorn binds the --workers socket with proto 0, so asyncio leaves Nagle on (+40 ms per keep-alive
    request); ours reports TCP, so every accepted connection gets TCP_NODELAY."""
    from embedsearch.serve.run import _Config

    config = _Config("x:y", host="127.0.0.1", port=0, workers=2)
    listener = config.bind_socket()
    try:
        assert listener.proto == socket.IPPROTO_TCP
    finally:
        listener.close()


def test_start_errors_are_one_line_with_exit_2(metadata_index, tmp_path):
    missing = run_cli("serve", "--index", str(tmp_path / "nothing"))
    assert missing.returncode == 2 and len(missing.stderr.strip().splitlines()) == 1
    broken = tmp_path / "broken"
    shutil.copytree(metadata_index.path, broken)
    next((broken / "segments").glob("*/embeddings.npy")).write_bytes(b"garbage")
    damaged = run_cli("serve", "--index", str(broken))
    assert damaged.returncode == 2 and "damaged" in damaged.stderr and len(damaged.stderr.strip().splitlines()) == 1
    no_token = run_cli("serve", "--index", str(metadata_index.path), "--writable")
    assert no_token.returncode == 2 and "EMBEDSEARCH_TOKEN" in no_token.stderr
    assert "--token " not in run_cli("serve", "--help").stdout


def test_the_token_never_appears_on_the_process_list(tmp_path, metadata_index):
    token_file = tmp_path / "token"
    token_file.write_text("file-token-1234\n")
    server = Server(metadata_index.path, "--writable", "--token-file", str(token_file), "--no-topics", token=None)
    try:
        from pathlib import Path

        listing = [p.read_bytes() for p in Path("/proc").glob("[0-9]*/cmdline") if p.exists()]
        assert len(listing) > 3 and not any(b"file-token-1234" in args for args in listing)
        with server.client() as c:
            refused = c.post("/compact", headers={"Authorization": f"Bearer {TOKEN}"})
            assert refused.status_code == 403
            assert c.post("/compact", headers={"Authorization": "Bearer file-token-1234"}).status_code == 200
    finally:
        server.stop()


def test_an_id_in_a_path_is_taken_exactly_or_refused(client):
    """A route pattern stops at a line break: /documents/ID%0A used to act on ID (a DELETE removed it)."""
    from urllib.parse import quote

    assert client.get(f"/documents/{quote(CTMC, safe='')}").status_code == 200
    for suffix in ("%0A", "%0D", "%00"):
        response = client.get(f"/documents/{quote(CTMC, safe='')}{suffix}")
        assert response.status_code == 400 and "control character" in response.json()["error"]
    assert client.delete(f"/documents/{quote(CTMC, safe='')}%0A").status_code == 400  # refused before any write


def test_a_405_lists_every_method_the_path_serves(client):
    response = client.request("OPTIONS", "/search")
    assert response.status_code == 405
    assert {m.strip() for m in response.headers["allow"].split(",")} >= {"GET", "POST"}


def test_a_busy_port_is_one_line_before_anything_says_serving(metadata_index):
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        result = run_cli("serve", "--index", str(metadata_index.path), "--port", str(port))
    assert result.returncode == 2 and "serving" not in result.stderr, result.stderr
    assert result.stderr.strip().splitlines() == [line for line in result.stderr.strip().splitlines()
                                                  if line.startswith("error: cannot listen on 127.0.0.1")]


def test_the_first_topic_fit_runs_outside_the_worker_and_a_failed_one_is_tried_again(metadata_index, tmp_path):
    """UMAP, HDBSCAN and numba stay loaded in any process that fitted once (about 150 MB): the worker leaves
    the first fit to a child process and reads the saved result. A fit that fails (here: a file stands where
    the topics folder goes) says why and when it is tried again, and is, without a restart or a commit."""
    shutil.copytree(metadata_index.path, tmp_path / "idx", ignore=shutil.ignore_patterns("topics"))
    blocker = tmp_path / "idx" / "topics"
    blocker.write_text("in the way")
    running = Server(tmp_path / "idx", "--topics-retry", "2")
    try:
        deadline = time.time() + 60
        while "could not be computed" not in (failed := httpx.get(running.url + "/topics", timeout=10)).text:
            assert time.time() < deadline and failed.status_code == 503, failed.text
            time.sleep(0.2)
        assert failed.status_code == 503 and "trying again in" in failed.text and failed.headers["Retry-After"]
        page = httpx.get(running.url + "/map", timeout=10)
        assert page.status_code == 503 and "not ready" in page.text and str(blocker) in page.text
        blocker.unlink()
        while "not ready" in (preparing := httpx.get(running.url + "/map", timeout=10)).text:
            assert time.time() < deadline, preparing.text
            time.sleep(0.2)
        assert preparing.status_code == 200 and "being prepared" in preparing.text  # a page that says so, not an error
        assert '<meta http-equiv="refresh"' in preparing.text
        assert running.wait_for_topics()["topics"]
        maps = Path(f"/proc/{running.proc.pid}/maps").read_text()
        assert "llvmlite" not in maps and "hdbscan" not in maps
        with running.client() as c:
            assert c.get("/map").status_code == 200
            check_topics_over_time(c)
    finally:
        running.stop()


def fitting_children(pid: int) -> list[int]:
    """The topic-fitting processes ``pid`` started (its process pool's workers), alive and not zombies."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            stat = (proc / "stat").read_text().rsplit(")", 1)[1].split()
            if int(stat[1]) == pid and stat[0] != "Z" and b"spawn_main" in (proc / "cmdline").read_bytes():
                found.append(int(proc.name))
        except (OSError, ValueError, IndexError):
            continue
    return found


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def test_a_server_killed_while_it_fits_topics_leaves_no_fitting_process(metadata_index, tmp_path):
    """The first fit runs in a child process; a server killed (SIGKILL) mid-fit takes that child with it, where
    it would otherwise finish the fit and then wait for work forever, holding its memory (about 1 GB)."""
    shutil.copytree(metadata_index.path, tmp_path / "idx", ignore=shutil.ignore_patterns("topics"))
    running = Server(tmp_path / "idx")
    try:
        deadline = time.time() + 60
        while not (children := fitting_children(running.proc.pid)):
            assert time.time() < deadline and running.proc.poll() is None, running.output()
            time.sleep(0.05)
        running.proc.kill()
        running.proc.wait(10)
        deadline = time.time() + 20
        while any(alive(c) for c in children):
            assert time.time() < deadline, f"the fitting process {children} outlived its server"
            time.sleep(0.2)
    finally:
        running.stop()


def check_topics_over_time(c) -> None:
    """``/topics/over-time`` answers as ``topics --over-time`` does, on the saved fit."""
    body = c.get("/topics/over-time", params={"field": "year"}).json()
    assert body["by"] == "time" and body["periods"] == sorted(body["periods"]) and body["rows"]
    for period in body["periods"]:
        assert sum(r["share"] for r in body["rows"] if r["period"] == period) == pytest.approx(1, abs=1e-4)
    topics = c.get("/topics").json()
    assert sum(r["count"] for r in body["rows"] if r["topic"] >= 0) == sum(t["size"] for t in topics["topics"])
    by_track = c.get("/topics/over-time", params={"by": "track"}).json()
    assert by_track["by"] == "class" and by_track["periods"]
    missing = c.get("/topics/over-time", params={"field": "yaer"})
    assert missing.status_code == 400 and "its fields:" in missing.json()["error"], missing.text
    assert c.get("/topics/over-time").status_code == 422


def test_a_cluster_is_served_in_process_by_the_same_routes_as_one_index(metadata_index, tmp_path):
    """``serve --index CLUSTER``: the one index's routes, answers and errors, over every shard; an add goes to
    the shard its id routes to as the next cut."""
    from embedsearch.store.cluster import owner

    cluster = metadata_index.split(tmp_path / "cluster", 2)
    running = Server(cluster.path, "--writable", "--no-topics")
    try:
        with running.client() as c:
            for query, mode in (("discrete diffusion language models", "hybrid"), ("graph neural networks", "lexical")):
                got = c.get("/search", params={"q": query, "k": 8, "mode": mode, "filter": "year>=2025"}).json()
                want = metadata_index.search(query, 8, mode=mode, filters=["year>=2025"])
                assert [h["id"] for h in got["hits"]] == [h.id for h in want] and got["partial"] is False
                assert got["generation"] == cluster.generation
            assert [h["id"] for h in c.get(f"/similar/{CTMC}", params={"k": 5}).json()["hits"]] == \
                [h.id for h in metadata_index.similar(CTMC, 5)]
            assert c.get("/similar/nope").status_code == 404 and c.get("/search", params={"q": "x", "k": 500}).status_code == 422
            info = c.get("/info").json()
            assert info["shards"] == {s.path.name: len(s) for s in cluster.shards}
            new = {"id": "cluster-new-1", "text": "Zebrafish fin regeneration needs osteoblast dedifferentiation."}
            added = c.post("/documents", json={"documents": [new]}, headers={"Authorization": f"Bearer {TOKEN}"})
            assert added.status_code == 201 and added.json()["generation"] == cluster.generation + 1, added.text
            assert new["id"] in Index.load(cluster.path).shards[owner(new["id"], 2)].documents.ids
            assert c.get(f"/documents/{new['id']}").json()["text"] == new["text"]
    finally:
        running.stop()


def test_a_batch_file_is_answered_one_row_per_submission_in_csv_or_json(client):
    hostile = '=HYPERLINK("http://evil.test","x")'  # a title a spreadsheet would run: written as text
    upload = "\n".join(json.dumps({"id": i, "abstract": t, **({"title": hostile} if i == "sub-2" else {})})
                       for i, t in (("sub-1", REWORDED), ("sub-2", SAME_TOPIC)))
    as_json = client.post("/duplicates/check-file", params={"name": "b.jsonl", "format": "json"}, content=upload)
    rows = as_json.json()["submissions"]
    assert [(r["id"], r["match"]) for r in rows] == [("sub-1", CTMC), ("sub-2", None)]
    assert rows[0]["verdict"] in ("reworded", "near-identical") and rows[1]["verdict"] == "no duplicate"
    assert rows[0]["match_title"].startswith("Discrete diffusion models") and 0 < rows[0]["overlap"] <= 1
    as_csv = client.post("/duplicates/check-file", params={"name": "b.jsonl"}, content=upload)
    import csv

    table = list(csv.reader(as_csv.text.splitlines()))
    assert as_csv.headers["X-Judged"] == "2" and table[0][:4] == ["submission", "title", "verdict", "matched paper"]
    assert [r[0] for r in table[1:]] == ["sub-1", "sub-2"] and table[1][3] == CTMC and table[2][2] == "no duplicate"
    assert table[1][6] == f"{100 * rows[0]['overlap']:.0f}"
    assert table[2][1] == f"'{hostile}" and rows[1]["title"] == hostile


def test_recommendations_answer_as_the_library_does_with_their_evidence(client, metadata_index):
    from embedsearch import Index

    index = Index.load(metadata_index.path)
    like = [CTMC, "000_bb58e7a7d5c95935:21"]
    body = client.post("/recommend", json={"like": like, "k": 5})
    assert body.status_code == 200, body.text
    got = body.json()
    assert got["method"] == "svm" and got["like"] == like
    assert got["hits"] == [h.to_json() for h in index.recommend(like, k=5).answer]
    assert not set(like) & {h["id"] for h in got["hits"]}
    assert all(h["evidence"]["closest_seeds"][0]["seed"] in like for h in got["hits"])
    missing = client.post("/recommend", json={"like": ["nope"]})
    assert missing.status_code == 404 and "nope" in missing.json()["error"]
    assert client.post("/recommend", json={"like": [], "unlike": [CTMC]}).status_code == 400


def test_a_library_sent_as_text_is_matched_and_every_answer_exports(client):
    from embedsearch.corpus.library import read_library

    exported = client.get("/search", params={"q": "discrete diffusion", "k": 3, "format": "bibtex"})
    assert exported.status_code == 200 and exported.headers["content-type"].startswith("application/x-bibtex")
    library = {"kind": "bibtex", "text": exported.text}
    got = client.post("/recommend", json={"library": library, "k": 3}).json()
    assert len(got["library"]["matched"]) == 3 and {m["how"] for m in got["library"]["matched"]} == {"index id"}
    for kind, suffix in (("ris", ".ris"), ("csl-json", ".json")):
        answer = client.post("/recommend", json={"like": [CTMC, "000_bb58e7a7d5c95935:21"], "k": 4, "format": kind})
        assert answer.status_code == 200, answer.text
        import tempfile
        from pathlib import Path

        with tempfile.TemporaryDirectory() as folder:
            file = Path(folder) / f"out{suffix}"
            file.write_text(answer.text)
            assert len(read_library(file)) == 4
    similar = client.get(f"/similar/{CTMC}", params={"k": 2, "format": "ris"})
    assert similar.status_code == 200 and similar.text.count("ER  -") == 2


def test_search_takes_the_grammar_and_sorts(client):
    newest = client.get("/search", params={"q": "diffusion", "k": 40, "sort": "newest"}).json()["hits"]
    years = [h["metadata"]["year"] for h in newest]
    assert years == sorted(years, reverse=True) and len(set(years)) == 2
    years_only = client.get("/search", params={"q": "diffusion year:2026", "k": 10}).json()["hits"]
    assert years_only and {h["metadata"]["year"] for h in years_only} == {2026}
    phrase = client.get("/search", params={"q": '"continuous-time markov"', "k": 10}).json()["hits"]
    assert phrase and all("continuous-time markov" in h["text"].lower() for h in phrase)
    bad = client.get("/search", params={"q": "diffusion year:abc"})
    assert bad.status_code == 400 and "'year:abc'" in bad.json()["error"]
    assert all(h["evidence"]["words"] for h in phrase)
