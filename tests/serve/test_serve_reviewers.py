"""``serve --reviewers``: the best reviewers for a paper of the index or a pasted abstract, over HTTP and on
the paper's page in Chromium; a server without reviewers offers neither."""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import quote

import pytest
from serve_helpers import Server


@pytest.fixture(scope="module")
def reviewers_server(tmp_path_factory, bundled_index, bundled_docs):
    root = tmp_path_factory.mktemp("served-reviewers")
    (root / "archives").mkdir()
    for r, start in (("~Ada_Lovelace1", 0), ("~Bo_Chen1", 10), ("~Cy_Diaz1", 20)):
        papers = [{"id": f"{r}-{i}", "content": {"title": f"{r[1:-1]} paper {i}: {d.first_sentence(60)}",
                                                 "abstract": d.text, "authors": [r[1:-1].replace("_", " ")]}}
                  for i, d in enumerate(bundled_docs[start + 1:start + 4])]
        (root / "archives" / f"{r}.jsonl").write_text("".join(json.dumps(p) + "\n" for p in papers))
    running = Server(bundled_index.path, "--no-topics", "--reviewers", str(root / "archives"), token=None)
    yield running, bundled_docs
    running.stop()


def test_the_best_reviewers_for_a_paper_and_for_an_abstract(reviewers_server):
    server, docs = reviewers_server
    with server.client() as http:
        answer = http.get(f"/reviewers/for/{quote(docs[11].id, safe='')}", params={"k": 2}).json()
        assert answer["id"] == docs[11].id and len(answer["reviewers"]) == 2
        best = answer["reviewers"][0]
        assert best["reviewer"] == "~Bo_Chen1" and best["conflict"] is None
        assert best["evidence"][0]["title"].startswith("Bo_Chen paper") and best["evidence"][0]["similarity"] > 0.9
        pasted = http.post("/reviewers/for", json={"text": docs[21].text, "k": 3}).json()
        assert pasted["reviewers"][0]["reviewer"] == "~Cy_Diaz1" and pasted["reviewers"][0]["evidence"][0]["similarity"] > 0.95
        assert http.get("/reviewers/for/no-such-paper").status_code == 404
        assert http.get(f"/reviewers/for/{quote(docs[0].id, safe='')}", params={"k": 0}).status_code == 422
        assert http.post("/reviewers/for", json={"text": "x", "extra": 1}).status_code == 422
        assert http.get("/info").json()["reviewers"] is True


def test_a_paper_page_shows_who_could_review_it(reviewers_server, browser):
    server, docs = reviewers_server
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(90_000)
    page.goto(server.url + f"/paper/{quote(docs[1].id, safe='')}")
    page.wait_for_function("document.querySelectorAll('#paper .reviewers > li').length === 3")
    first = page.locator("#paper .reviewers > li").first.inner_text()
    assert first.startswith("~Ada_Lovelace1") and "Ada_Lovelace paper" in first and "cosine" in first
    shots = os.environ.get("EMBEDSEARCH_SCREENSHOT_DIR")
    if shots:
        page.screenshot(path=str(Path(shots) / "serve-paper-reviewers.png"), full_page=True)
    page.close()


def test_a_server_without_reviewers_offers_none(bundled_index):
    server = Server(bundled_index.path, "--no-topics", token=None)
    try:
        with server.client() as http:
            assert http.get("/info").json()["reviewers"] is False
            assert http.post("/reviewers/for", json={"text": "an abstract"}).status_code == 404
    finally:
        server.stop()
