"""The web page and the served topic map in real Chromium against a running server: search as you type,
open a result and follow "similar", a filter, the duplicate checker, keyboard and phone width, and the
map's meaning search. Every request is checked to stay on 127.0.0.1."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from serve_helpers import Server
from test_serve import CTMC, REWORDED


@pytest.fixture(scope="module")
def server(metadata_index):
    running = Server(metadata_index.path)  # topics on: the map needs them
    yield running
    running.stop()


@pytest.fixture()
def page(browser, server):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.outside, page.errors = [], []
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(server.url)
               else (page.outside.append(route.request.url), route.abort()))
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.on("console", lambda m: page.errors.append(m.text) if m.type == "error" else None)
    yield page
    assert page.outside == [] and page.errors == []  # offline: nothing left the machine, no script errors
    context.close()


def test_typing_a_query_shows_the_expected_paper_and_similar_papers_follow(page, server, metadata_index):
    page.goto(server.url + "/")
    page.wait_for_function("document.getElementById('about').textContent.includes('57 papers')")
    page.locator("#q").press_sequentially("discrete diffusion with continuous-time Markov chains", delay=5)
    first = page.locator("#results > li").first
    # results follow the typing: wait for those of the whole query (a prefix's results may show first)
    page.wait_for_function("(id) => (document.querySelector('#results > li') || {}).innerText?.includes(id)",
                           arg=CTMC)
    assert CTMC in first.inner_text()
    shots = os.environ.get("EMBEDSEARCH_SCREENSHOT_DIR")
    first.locator("button.toggle").click()
    detail = first.locator(".detail")
    assert "Neural CTMC" in detail.locator(".abstract").inner_text()
    detail.get_by_role("button", name="Similar papers").click()
    similar = detail.locator(".similar > li")
    similar.first.wait_for()
    expected = [h.id for h in metadata_index.similar(CTMC, 5)]
    assert [similar.nth(i).locator(".id").inner_text() for i in range(similar.count())] == expected
    from urllib.parse import quote

    assert detail.get_by_role("link", name="Show on the topic map").get_attribute("href") == f"/map?focus={quote(CTMC, safe='')}"
    if shots:
        page.screenshot(path=str(Path(shots) / "serve-page.png"))


def test_a_filter_narrows_the_results(page, server):
    page.goto(server.url + "/?q=learning")
    page.locator("#results > li").first.wait_for()
    page.wait_for_function("document.getElementById('status').textContent.includes('results')")
    page.fill("#k", "57")
    page.locator("#k").dispatch_event("change")
    page.wait_for_function("document.querySelectorAll('#results > li').length > 20")
    everything = page.locator("#results > li").count()
    page.select_option("#filters select", "A")
    page.wait_for_function(f"document.querySelectorAll('#results > li').length < {everything}")
    narrowed = page.locator("#results > li").count()
    assert 0 < narrowed < everything


def test_a_pasted_near_duplicate_is_flagged_with_its_shared_passages_highlighted(page, server):
    held = []
    page.route("**/info", lambda route: held.append(route))  # a slow server: the form is used before /info has answered
    page.goto(server.url + "/")
    page.fill("#dup-text", REWORDED)
    page.get_by_role("button", name="Check for duplicates").click()
    page.wait_for_function("document.getElementById('dup-status').textContent.startsWith('Flagged')", timeout=20_000)
    assert not page.url.endswith("?")  # no native form submit (a reload that loses the pasted text)
    for route in held:
        route.continue_()
    page.wait_for_function("document.getElementById('about').textContent.includes('papers')")
    match = page.locator(".match").first
    assert CTMC in match.inner_text() and match.locator(".verdict").inner_text() in ("near-identical", "reworded")
    marks = match.locator("mark")
    assert marks.count() >= 2 and all(len(marks.nth(i).inner_text()) > 30 for i in range(marks.count()))


def test_keyboard_only_and_phone_width(browser, server):
    context = browser.new_context(viewport={"width": 375, "height": 740})
    page = context.new_page()
    page.goto(server.url + "/")
    page.wait_for_function("document.getElementById('about').textContent.includes('papers')")
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "q"
    page.keyboard.type("robot world models")
    page.keyboard.press("Enter")
    page.locator("#results > li").first.wait_for()
    for _ in range(8):  # mode, the filters, k, then the first result's button
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.classList.contains('toggle')"):
            break
    assert page.evaluate("document.activeElement.classList.contains('toggle')")
    page.keyboard.press("Enter")
    assert page.locator("#results > li").first.locator("button.toggle").get_attribute("aria-expanded") == "true"
    assert page.evaluate("document.documentElement.scrollWidth") <= 375  # no sideways scrolling on a phone
    context.close()


def test_served_map_rings_meaning_search_hits_and_keeps_the_legend_clear_of_the_toolbar(page, server):
    server.wait_for_topics()
    page.goto(server.url + f"/map?focus={CTMC}")
    page.wait_for_selector(".scatterlayer .point")
    assert "Neural CTMC" in page.locator("#paper p").inner_text()
    page.fill("#search", "how robots learn from video")
    page.wait_for_function("document.getElementById('count').textContent.includes('ringed')")
    ringed = page.evaluate("() => { const d = document.getElementById('plotly-map').data; "
                           "return d[d.length - 1].text; }")
    assert "000_bb58e7a7d5c95935:11" in ringed  # by meaning: no abstract holds the phrase, word search rings none
    page.hover("#plotly-map")
    toolbar, legend = page.locator(".modebar").bounding_box(), page.locator(".legend").bounding_box()
    assert toolbar["y"] + toolbar["height"] <= legend["y"] or toolbar["x"] + toolbar["width"] <= legend["x"]


def test_the_api_docs_render_offline(page, server):
    page.goto(server.url + "/docs")
    page.wait_for_selector(".swagger-ui .opblock")
    paths = page.locator(".opblock-summary-path").all_inner_texts()
    listed = {p.replace("\u200b", "") for p in paths}
    assert {"/search", "/duplicates/check", "/documents/{doc_id}"} <= listed  # this server is read-only:
    assert "/compact" not in listed  # its description lists no write endpoint
