"""The web page and the served topic map in real Chromium against a running server: search as you type,
open a result and follow "similar", a filter, the duplicate checker, keyboard and phone width, and the
map's meaning search. Every request is checked to stay on 127.0.0.1."""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import quote

import pytest
from serve_helpers import Server
from test_serve import CTMC, REWORDED, SAME_TOPIC


@pytest.fixture(scope="module")
def server(metadata_index):
    running = Server(metadata_index.path)  # topics on: the map needs them
    yield running
    running.stop()


@pytest.fixture()
def page(browser, server):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(90_000)  # an answer, not its speed: two cores may be busy with the Ray tests
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


def test_a_query_of_no_free_words_lists_every_match_by_date_and_says_how_many(page, server, metadata_index):
    expected = sum(1 for d in metadata_index.documents if d.metadata["year"] == 2025)
    page.goto(server.url + "/?q=" + quote("year:2025 -zzzz"))
    page.wait_for_function("document.getElementById('status').textContent.includes('match every term')")
    assert page.locator("#status").inner_text().startswith(f"{expected} papers match every term")
    badges = page.locator("#results > li .score")
    assert badges.count() == 10 and {badges.nth(i).inner_text() for i in range(10)} == {"2025"}
    assert page.locator("#score-note").inner_text() == ""


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
    assert match.locator(".verdict").inner_text() in ("near-identical", "reworded")
    said = match.locator("p").first.inner_text()  # the verdict as a sentence, the match named by its first sentence
    assert "of the wording in common" in said and "Discrete diffusion models" in said and CTMC not in said
    marks = match.locator("mark")
    assert marks.count() >= 2 and all(len(marks.nth(i).inner_text()) > 30 for i in range(marks.count()))
    sides = match.locator(".side-by-side > div")
    assert sides.count() == 2 and "Your abstract" in sides.nth(0).inner_text()
    assert sides.nth(1).locator("mark").count() >= 2  # the indexed text is highlighted too, side by side
    assert "\\textbf" not in sides.nth(1).inner_text() and "Neural CTMC" in sides.nth(1).inner_text()
    assert match.locator(f"a[href='/paper/{quote(CTMC, safe='')}']").count() >= 1
    shots = os.environ.get("EMBEDSEARCH_SCREENSHOT_DIR")
    if shots:
        match.screenshot(path=str(Path(shots) / "serve-duplicate.png"))


def test_no_duplicate_shows_the_nearest_papers_and_an_abstract_finds_papers_like_it(page, server):
    page.goto(server.url + "/")
    page.fill("#dup-text", "Coral reefs bleach when ocean water warms; we count bleached colonies on three reefs.")
    page.get_by_role("button", name="Check for duplicates").click()
    page.wait_for_function("document.getElementById('dup-status').textContent.startsWith('No duplicates')")
    assert page.locator("#dup-results li").count() == 3
    assert page.locator("#dup-results li .score").first.inner_text().startswith("distant")
    page.fill("#dup-text", SAME_TOPIC)
    page.get_by_role("button", name="Papers like this abstract").click()
    page.wait_for_function("document.getElementById('dup-status').textContent.includes('like this abstract')")
    assert page.locator("#dup-results li").count() == 10


def test_a_batch_file_is_checked_and_its_report_downloads(page, server, tmp_path):
    batch = tmp_path / "submissions.jsonl"
    hostile = '=HYPERLINK("http://evil.test","x")'  # a title a spreadsheet would run: the download keeps it text
    batch.write_text(json.dumps({"id": "sub-1", "abstract": REWORDED}) + "\n"
                     + json.dumps({"id": "sub-2", "title": hostile, "abstract": SAME_TOPIC}) + "\n")
    page.goto(server.url + "/")
    page.fill("#dup-text", REWORDED)  # a single check first: the batch's answer replaces it
    page.get_by_role("button", name="Check for duplicates").click()
    page.wait_for_function("document.getElementById('dup-status').textContent.startsWith('Flagged')")
    page.set_input_files("#batch-file", str(batch))
    page.get_by_role("button", name="Check the batch").click()
    page.wait_for_function("document.getElementById('batch-status').textContent.includes('checked')")
    assert page.locator("#batch-status").inner_text() == "2 submissions checked: 1 flagged, 1 with no duplicate."
    assert page.locator("#dup-results .match").count() == 0 and page.locator("#dup-status").inner_text() == ""
    rows = page.locator("table.batch tbody tr")
    assert rows.count() == 2
    first, second = rows.nth(0).locator("td").all_inner_texts(), rows.nth(1).locator("td").all_inner_texts()
    assert first[0].startswith("sub-1") and first[1] in ("reworded", "near-identical")
    assert first[2].startswith("Discrete diffusion models") and rows.nth(0).locator(
        f"a[href='/paper/{quote(CTMC, safe='')}']").count() == 1 and first[4].endswith("%")
    assert second[0].startswith("sub-2") and second[1] == "no duplicate" and second[2] == ""
    if os.environ.get("EMBEDSEARCH_SCREENSHOT_DIR"):
        page.screenshot(path=str(Path(os.environ["EMBEDSEARCH_SCREENSHOT_DIR"]) / "serve-batch.png"), full_page=True)
    with page.expect_download() as download:
        page.locator("#batch-download").click()
    import csv as csvmodule

    table = list(csvmodule.reader(Path(download.value.path()).read_text().splitlines()))
    assert table[0] == ["submission", "title", "verdict", "matched paper", "matched title", "cosine",
                        "wording shared (%)"]
    from embedsearch import Document

    assert table[1][:4] == ["sub-1", Document("s", REWORDED).first_sentence(), first[1], CTMC]
    assert table[1][4].startswith("Discrete diffusion models") and 0 < int(table[1][6]) <= 100
    assert table[2][:3] == ["sub-2", f"'{hostile}", "no duplicate"]
    assert table[2][3:] == [""] * 4
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "abstract": "fine"}\n{"id": broken\n')
    page.set_input_files("#batch-file", str(bad))
    page.get_by_role("button", name="Check the batch").click()
    page.wait_for_function("document.getElementById('batch-status').textContent.includes('bad.jsonl:2')")
    expected_failures(page, 400)


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
    for _ in range(10):  # the search button, mode, the filters, k, then the first result's button
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.classList.contains('toggle')"):
            break
    assert page.evaluate("document.activeElement.classList.contains('toggle')")
    page.keyboard.press("Enter")
    assert page.locator("#results > li").first.locator("button.toggle").get_attribute("aria-expanded") == "true"
    assert page.evaluate("document.documentElement.scrollWidth") <= 375  # no sideways scrolling on a phone
    if os.environ.get("EMBEDSEARCH_SCREENSHOT_DIR"):
        page.screenshot(path=str(Path(os.environ["EMBEDSEARCH_SCREENSHOT_DIR"]) / "serve-page-phone.png"))
    context.close()


def test_served_map_rings_meaning_search_hits_and_reads_abstracts_from_the_api(page, server):
    server.wait_for_topics()
    page.goto(server.url + f"/map?focus={CTMC}")
    page.wait_for_function("window.embedsearchMap && embedsearchMap.ready", timeout=60_000)
    page.wait_for_function("document.querySelector('#paper p').textContent.includes('Neural CTMC')")
    assert "\\textbf" not in page.locator("#paper p").inner_text()  # the abstract comes rendered from the API
    assert page.locator("#paper p .katex").count() >= 1 and "$16.36$" not in page.locator("#paper p").inner_text()
    page.fill("#search", "how robots learn from video")
    page.wait_for_function("document.getElementById('count').textContent.includes('ringed')")
    ringed = page.evaluate("embedsearchMap.ringed().map(i => embedsearchMap.id(i))")
    assert "000_bb58e7a7d5c95935:11" in ringed  # by meaning: no abstract holds the phrase, word search rings none
    assert len(ringed) <= 10  # the best few, not half the map
    listed = page.locator("#found li button")  # and listed beside the map, by title or first words
    assert listed.count() == len(ringed) and all(len(t) > 20 for t in listed.all_inner_texts())
    robots = ringed.index("000_bb58e7a7d5c95935:11")
    page.fill("#search", "zzzqqq xyzzy")
    page.wait_for_function("document.getElementById('count').textContent.startsWith('No close match')")
    assert page.evaluate("embedsearchMap.ringed().length") == 0
    assert page.locator("h2").inner_text().startswith("corpus: 57 papers")  # the corpus's name, not the folder's
    assert page.get_by_role("link", name="← Search the papers").get_attribute("href").startswith("/")
    assert page.locator(f"#paper a[href='/paper/{quote(CTMC, safe='')}']").count() == 1
    page.fill("#search", "how robots learn from video")
    page.wait_for_function("document.querySelectorAll('#found li').length > 0")
    page.locator("#found li button").nth(robots).click()  # a listed paper opens beside the map
    page.wait_for_function("document.querySelector('#paper .topic').textContent.startsWith('000_bb58e7a7d5c95935:11')")
    shots = os.environ.get("EMBEDSEARCH_SCREENSHOT_DIR")
    if shots:
        page.fill("#search", "how robots learn from video")
        page.wait_for_function("document.getElementById('count').textContent.includes('ringed')")
        page.screenshot(path=str(Path(shots) / "serve-map.png"))
    assert page.evaluate("embedsearchMap.drawn") == 57


def test_the_served_map_charts_topics_over_time(page, server):
    server.wait_for_topics()
    page.goto(server.url + "/map")
    page.wait_for_function("window.embedsearchMap && embedsearchMap.ready", timeout=60_000)
    page.get_by_role("button", name="Topics over time").click()
    page.wait_for_function("document.querySelectorAll('#over-time-plot .scatterlayer .trace').length > 0")
    periods = page.evaluate("() => document.getElementById('over-time-plot').data[0].x")
    assert periods == ["2025", "2026"]
    hover = page.evaluate("() => document.getElementById('over-time-plot').data[0].text[0]")
    assert "papers (" in hover and "2025" in hover
    shots = os.environ.get("EMBEDSEARCH_SCREENSHOT_DIR")
    if shots:
        page.screenshot(path=str(Path(shots) / "serve-over-time.png"))
    page.get_by_role("button", name="Close").click()
    assert page.locator("#over-time").is_hidden()


def test_the_api_docs_render_offline(page, server):
    page.goto(server.url + "/docs")
    page.wait_for_selector(".swagger-ui .opblock")
    paths = page.locator(".opblock-summary-path").all_inner_texts()
    listed = {p.replace("\u200b", "") for p in paths}
    assert {"/search", "/duplicates/check", "/documents/{doc_id}"} <= listed  # this server is read-only:
    assert "/compact" not in listed  # its description lists no write endpoint


def test_the_url_holds_the_search_and_back_restores_it(page, server):
    server.wait_for_topics()  # the map is one of the pages visited
    page.goto(server.url + "/")
    page.wait_for_function("document.getElementById('about').textContent.includes('papers')")
    page.fill("#q", "robot world models")
    page.press("#q", "Enter")
    page.select_option("#mode", "dense")
    page.locator("#results > li").first.wait_for()
    page.wait_for_function("location.search.includes('mode=dense')")
    assert "q=robot+world+models" in page.url
    first = page.locator("#results > li .id").first.inner_text()
    page.locator("#results > li button.toggle").first.click()
    page.get_by_role("link", name="Show on the topic map").first.click()
    page.wait_for_url("**/map?focus=*")
    page.go_back()
    page.locator("#results > li").first.wait_for()
    assert page.input_value("#q") == "robot world models" and page.input_value("#mode") == "dense"
    assert page.locator("#results > li .id").first.inner_text() == first
    page.go_back()  # the query before the mode changed
    page.wait_for_function("document.getElementById('mode').value === 'hybrid'")
    shared = page.context.new_page()  # a link someone was sent opens the same search, filter included
    shared.goto(server.url + "/?q=learning&filter=track%3DA&k=3")
    shared.locator("#results > li").first.wait_for()
    assert shared.input_value("#filters select") == "A" and shared.locator("#results > li").count() <= 3
    shared.close()


def test_results_show_rendered_text_and_honest_scores(page, server):
    page.goto(server.url + "/?q=zzzqqq+xyzzy")
    page.wait_for_function("document.getElementById('status').textContent.startsWith('No close match')")
    assert all(b.startswith("distant") for b in page.locator("#results .score").all_inner_texts())
    assert "cosine" in page.locator("#results .score").first.get_attribute("title")
    page.goto(server.url + "/?q=discrete+diffusion+with+continuous-time+Markov+chains")
    page.locator("#results > li").first.wait_for()
    assert page.locator("#status").inner_text().endswith("results")
    assert page.locator("#results .score").first.inner_text().split()[0] in ("close", "related")
    page.locator("#results > li button.toggle").first.click()
    text = page.locator("#results .abstract").first.inner_text()
    assert "Neural CTMC" in text and "\\textbf" not in text and "---" not in text and "—" in text


def test_a_whole_abstract_pasted_into_search_is_sent_by_post(page, server, metadata_index):
    posts = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    page.goto(server.url + "/")
    abstract = metadata_index.documents.get([metadata_index.documents.row_of[CTMC]])[0].text
    page.fill("#q", abstract + " " + abstract)  # over 2,000 characters: too long for a URL
    page.press("#q", "Enter")
    page.locator("#results > li").first.wait_for()
    assert page.locator("#results > li .id").first.inner_text() == CTMC
    assert any(url.endswith("/search") for url in posts) and "q=" not in page.url


def test_api_failures_read_as_sentences_not_api_messages(page, server):
    page.route("**/search?*", lambda route: route.fulfill(
        status=422, content_type="application/json",
        body=json.dumps({"error": "k: Input should be less than or equal to 100", "status": 422})))
    page.goto(server.url + "/?q=robots")
    page.wait_for_function("document.getElementById('status').textContent.startsWith('The request')")
    assert "Input should be" not in page.locator("#status").inner_text()
    page.unroute("**/search?*")
    page.route("**/search?*", lambda route: route.fulfill(status=503, content_type="application/json",
                                                          body=json.dumps({"error": "busy", "status": 503})))
    page.fill("#q", "robots again")
    page.press("#q", "Enter")
    page.wait_for_function("document.getElementById('status').textContent.includes('busy. Try again')")
    expected_failures(page, 422, 503)


def test_a_page_per_paper_with_similar_papers_and_near_duplicates(page, server, metadata_index):
    server.wait_for_topics()
    page.goto(server.url + f"/paper/{quote(CTMC, safe='')}")
    page.wait_for_function("document.querySelectorAll('#paper .similar > li .id').length === 5")
    assert "Neural CTMC" in page.locator("#paper .abstract").inner_text()
    assert "\\textbf" not in page.locator("#paper").inner_text()
    ids = page.locator("#paper .similar > li .id").all_inner_texts()
    assert ids == [h.id for h in metadata_index.similar(CTMC, 5)]
    page.wait_for_function("document.querySelector('#paper .paper-duplicates').textContent.startsWith('None')")
    topic = page.evaluate(f"fetch('/documents/{quote(CTMC, safe='')}').then(r => r.json()).then(d => d.topic)")
    parts = page.locator("#paper .meta").inner_text().split(" · ")
    assert topic["name"] != topic["label"] and f"topic: {topic['name']}" in parts  # the map's name, not keywords
    shots = os.environ.get("EMBEDSEARCH_SCREENSHOT_DIR")
    if shots:
        page.screenshot(path=str(Path(shots) / "serve-paper.png"), full_page=True)
    button = page.get_by_role("button", name="Hide similar papers")
    button.click()  # collapses, and keyboard focus stays where it was
    assert page.locator("#paper .similar").is_hidden()
    assert page.evaluate("document.activeElement.textContent") == "Similar papers"
    page.goto(server.url + "/paper/no-such-paper")
    page.wait_for_function("document.getElementById('paper').textContent.includes('not in the index')")
    expected_failures(page, 404)


def expected_failures(page, *statuses: int) -> None:
    """Chromium logs every failed request as a console error: drop those a test caused on purpose."""
    page.errors[:] = [e for e in page.errors if not any(f"status of {s} " in e for s in statuses)]


def test_the_map_at_phone_width(browser, server):
    server.wait_for_topics()
    context = browser.new_context(viewport={"width": 375, "height": 740}, is_mobile=True, has_touch=True)
    page = context.new_page()  # a phone: without a viewport tag it would lay the page out at 980 px
    page.goto(server.url + "/map")
    page.wait_for_function("window.embedsearchMap && embedsearchMap.ready", timeout=60_000)
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    box = page.locator("#map").bounding_box()
    assert box["width"] <= 375 and box["height"] > 300
    shots = os.environ.get("EMBEDSEARCH_SCREENSHOT_DIR")
    if shots:
        page.screenshot(path=str(Path(shots) / "serve-map-phone.png"))
    context.close()


def test_math_is_typeset_by_the_shipped_katex_and_never_dropped(page, server, metadata_index):
    """A paper's ``$...$`` are typeset offline (KaTeX from /static), braces and all; a macro KaTeX cannot
    read stays on the page as its source; text around the math reads as plain text."""
    paper = next(d for d in metadata_index.documents if "U_{\\mathrm{ale}}" in d.text)
    page.goto(server.url + f"/paper/{quote(paper.id, safe='')}")
    abstract = page.locator("#paper .abstract")
    abstract.locator(".katex").first.wait_for()
    sources = abstract.locator("annotation").all_text_contents()
    assert "w_\\lambda(x)=1+U_{\\mathrm{ale}}(x)+\\lambda\\,U_{\\mathrm{epi}}(x)" in sources
    assert abstract.locator(".katex-error").count() == 0 and "$w_" not in abstract.inner_text()
    page.goto(server.url + "/?q=uncertainty+weighted+question+answering&mode=lexical")
    page.locator("#results > li").first.wait_for()
    shown = page.evaluate("""async () => {
        const {mathText} = await import('/static/page/text.js');  // the page's own module
        const p = mathText('p', {}, 'the field $\\\\Q(\\\\sqrt{5})$ and $S_{\\\\lambda+1/2}$ for $5 or $10');
        return {seen: [...p.querySelectorAll('.katex-html')].map((e) => e.textContent),
                sources: [...p.querySelectorAll('annotation')].map((e) => e.textContent), text: p.textContent};
    }""")
    assert shown["sources"] == ["\\Q(\\sqrt{5})", "S_{\\lambda+1/2}"]
    assert shown["seen"][0].startswith("\\Q(5")  # the unknown macro shown as its source, the root typeset
    assert "λ+1/2" in shown["seen"][1] and "for $5 or $10" in shown["text"]  # prices are not math


def test_the_numbers_beside_results_follow_their_order_and_a_line_says_what_they_are(page, server):
    page.goto(server.url + "/?q=spiking+neural+networks&mode=hybrid&k=500")
    page.wait_for_function("document.querySelectorAll('#results > li').length === 57")
    badges = page.locator("#results .score")
    assert all(len(t.split()) == 1 for t in badges.all_inner_texts())  # a band word: no fused score beside it
    numbers = [float(badges.nth(i).get_attribute("title").split()[2]) for i in range(badges.count())]
    assert numbers == sorted(numbers, reverse=True) and badges.first.get_attribute("title").startswith("fused score")
    assert page.locator("#score-note").inner_text().startswith("Ordered by the fused score")
    assert page.locator("#k").input_value() == "100" and "at most 100" in page.locator("#status").inner_text()
    page.locator("#mode").select_option("lexical")
    page.wait_for_function("document.getElementById('score-note').textContent.includes('BM25')")
    page.locator("#mode").select_option("dense")
    page.wait_for_function("document.getElementById('score-note').textContent.includes('cosine similarity')")
    shown = [t.split() for t in page.locator("#results .score").all_inner_texts()]
    cosines = [float(n) for _, n in shown]  # here the cosine orders the list and gives the band: it is shown
    assert cosines == sorted(cosines, reverse=True)
    assert all(band == ("close" if c >= 0.5 else "related" if c >= 0.3 else "distant") for (band, _), c
               in zip(shown, cosines) if abs(c - 0.5) > 0.006 and abs(c - 0.3) > 0.006)


def test_more_results_come_a_page_at_a_time_in_rank_order(page, server, metadata_index):
    """"More results" asks for the next page and adds it below: the ranking runs on without a repeat, the
    button goes once nothing is left, and the exports hold every result shown."""
    page.goto(server.url + "/?q=spiking+neural+networks&mode=hybrid&k=20")
    page.wait_for_function("document.querySelectorAll('#results > li').length === 20")
    more = page.get_by_role("button", name="More results")
    for shown in (40, 57):
        more.click()
        page.wait_for_function(f"document.querySelectorAll('#results > li').length === {shown}")
    assert more.is_hidden() and "57 results" in page.locator("#status").inner_text()
    expected = [h.id for h in metadata_index.search("spiking neural networks", 57, mode="hybrid")]
    assert page.locator("#results .id").all_inner_texts() == expected
    with page.expect_download() as exported:
        page.locator("#export-json").click()
    assert [h["id"] for h in json.loads(Path(exported.value.path()).read_text())["hits"]] == expected
    page.fill("#q", "robot world models")
    page.get_by_role("button", name="Search", exact=True).click()
    page.wait_for_function("document.querySelectorAll('#results > li').length === 20")
    assert more.is_visible()


def test_search_controls_people_expect(page, server, metadata_index):
    """Readable field names, a searchable box for a field of many values, a search button, a line on the
    modes, export of the results as CSV and JSON, and an abstract pasted into the search box shown whole
    with "papers like this abstract" one click away."""
    import csv as csvmodule

    def with_many_values(route):
        info = route.fetch().json()
        info["fields"].append({"name": "primary_category", "kind": "text", "distinct": 125,
                               "values": [{"value": f"cat.{n:03d}", "count": 1} for n in range(40)]})
        route.fulfill(json=info)

    page.route("**/info", with_many_values)
    searched = []
    page.on("request", lambda r: searched.append(r.url) if "/search?" in r.url else None)
    page.goto(server.url + "/")
    page.wait_for_function("document.querySelectorAll('#filters [data-field]').length >= 4")
    labels = page.locator("#filters label").all_inner_texts()
    assert any(t.startswith("Track") for t in labels) and any(t.startswith("Year from") for t in labels)
    assert any(t.startswith("Primary category") for t in labels) and not any("_" in t for t in labels)
    box = page.locator("#filters input.values")
    assert box.get_attribute("list") and page.locator(f"datalist#{box.get_attribute('list')} option").count() == 40
    assert "Hybrid ranks by meaning and words" in page.locator("#modes-note").inner_text()
    page.fill("#q", "discrete diffusion with continuous-time Markov chains")
    page.get_by_role("button", name="Search").click()
    page.wait_for_function("(id) => (document.querySelector('#results > li') || {}).innerText?.includes(id)",
                           arg=CTMC)
    box.fill("cat.007")
    box.dispatch_event("change")
    page.wait_for_function("document.getElementById('status').textContent.includes('filter')")
    assert any("filter=primary_category%3Dcat.007" in u for u in searched)  # the value became a filter
    box.fill("")
    box.dispatch_event("change")
    page.locator("#results > li").first.wait_for()
    with page.expect_download() as csv_file:
        page.locator("#export-csv").click()
    rows = list(csvmodule.reader(Path(csv_file.value.path()).read_text().splitlines()))
    assert rows[0] == ["rank", "id", "title", "score", "cosine", "bm25", "match"] and rows[1][1] == CTMC
    assert len(rows) - 1 == page.locator("#results > li").count()
    with page.expect_download() as json_file:
        page.locator("#export-json").click()
    exported = json.loads(Path(json_file.value.path()).read_text())
    assert exported["hits"][0]["id"] == CTMC and exported["query"].startswith("discrete diffusion")
    abstract = metadata_index.documents.get([metadata_index.documents.row_of[CTMC]])[0].text
    page.fill("#q", abstract)
    height = page.locator("#q").bounding_box()["height"]
    assert height > 100  # the pasted abstract shows, not just its tail on one line
    page.get_by_role("button", name="Papers like this abstract").first.wait_for()
    page.locator("#like-abstract").click()
    page.wait_for_function("document.getElementById('status').textContent.includes('like this abstract')")
    assert page.locator("#results > li .id").first.inner_text() == CTMC
    expected_failures(page, 400)  # the filter on a field this index lacks, answered as a sentence


# ---- the researcher's desk (web/page/marks.js, recommend.js) ---------------------------------------
def _marked_search(page, server, query="discrete diffusion"):
    page.goto(server.url + "/?q=" + quote(query))
    page.wait_for_function("document.querySelectorAll('#results > li').length >= 5")
    page.wait_for_function("!['', 'Searching…'].includes(document.getElementById('status').textContent)")
    items = page.locator("#results > li")
    ids = [items.nth(i).locator(".id").first.inner_text() for i in range(3)]
    items.nth(0).locator("button.mark.like").click()
    items.nth(1).locator("button.mark.like").click()
    items.nth(2).locator("button.mark.unlike").click()
    return ids


@pytest.mark.parametrize("device", ["desktop", "phone"])
def test_marked_results_stay_in_the_url_and_recommend_papers_like_them(browser, server, device):
    size = {"width": 1280, "height": 900} if device == "desktop" else {"width": 390, "height": 844}
    context = browser.new_context(viewport=size, is_mobile=device == "phone", has_touch=device == "phone")
    context.set_default_timeout(90_000)
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    liked_a, liked_b, unliked = _marked_search(page, server)
    params = page.evaluate("new URLSearchParams(location.search).getAll('like').join(' ')")
    assert params == f"{liked_a} {liked_b}"
    assert page.evaluate("new URLSearchParams(location.search).get('unlike')") == unliked
    shared = page.url
    page.goto(shared)  # a shared link: the marks come back
    page.locator("#results > li").first.wait_for()
    page.wait_for_function("!document.getElementById('recommend').hidden")
    assert page.locator("#recommend").inner_text() == "Recommend from these (2 liked, 1 not for me)"
    assert page.locator("button.mark.like[aria-pressed=true]").count() == 2
    page.locator("#recommend").click()
    page.wait_for_function("document.getElementById('status').textContent.includes('like your')")
    got = [page.locator("#results > li").nth(i).locator(".id").first.inner_text()
           for i in range(page.locator("#results > li").count())]
    assert got and not {liked_a, liked_b, unliked} & set(got)
    assert page.locator("#results > li .closest").first.inner_text().startswith("closest to ")
    assert page.evaluate("document.documentElement.scrollWidth") <= size["width"]
    if os.environ.get("EMBEDSEARCH_SCREENSHOT_DIR"):
        page.screenshot(path=str(Path(os.environ["EMBEDSEARCH_SCREENSHOT_DIR"]) / f"serve-recommend-{device}.png"))
    assert errors == []
    context.close()


def test_evidence_is_marked_and_the_closest_sentence_underlined(page, server):
    page.goto(server.url + "/?q=" + quote("discrete diffusion continuous-time Markov chains"))
    first = page.locator("#results > li").first
    first.wait_for()
    assert first.locator("mark.word").count() >= 1
    first.locator("button.toggle").click()
    underlined = first.locator(".abstract .evidence-sentence")
    underlined.wait_for()
    assert "continuous-time Markov chains" in underlined.inner_text()
    assert {m.lower() for m in first.locator(".abstract mark.word").all_inner_texts()} >= {"discrete", "diffusion"}


def test_the_list_exports_for_a_reference_manager_and_a_library_file_recommends(page, server, tmp_path):
    from embedsearch.corpus.bibtex import rows

    page.goto(server.url + "/?q=" + quote("discrete diffusion") + "&k=3")
    page.wait_for_function("document.querySelectorAll('#results > li').length === 3")
    shown = [page.locator("#results > li").nth(i).locator(".id").first.inner_text() for i in range(3)]
    with page.expect_download() as download:
        page.locator("#export-bibtex").click()
    file = tmp_path / "results.bib"
    download.value.save_as(file)
    assert [r["index_id"] for _, r in rows(file)] == shown
    page.locator("#library-file").set_input_files(str(file))
    page.wait_for_function("document.getElementById('status').textContent.includes('library: 3 matched')")
    got = [page.locator("#results > li").nth(i).locator(".id").first.inner_text()
           for i in range(page.locator("#results > li").count())]
    assert got and not set(shown) & set(got)


def test_saved_watches_are_listed_read_only(page, server, metadata_index):
    from embedsearch import Index
    from embedsearch.watch import Watch, add, remove

    index = Index.load(metadata_index.path)
    add(index, Watch("diffusion-digest", "discrete diffusion"))
    try:
        page.goto(server.url + "/")
        page.locator("#watches").wait_for()
        assert "diffusion-digest: discrete diffusion" in page.locator("#watch-list").inner_text()
        assert page.locator("#watches button, #watches input").count() == 0
    finally:
        remove(index.path, "diffusion-digest")
