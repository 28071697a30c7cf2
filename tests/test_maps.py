"""The topic map as a person sees it: loaded in headless Chromium, points counted, search and click used."""


import pytest
from conftest import run_cli


@pytest.fixture(scope="module")
def page_file(bundled_index, tmp_path_factory):
    out = tmp_path_factory.mktemp("map") / "map.html"
    run_cli("map", "--index", str(bundled_index.path), "--out", str(out), "--png", check=True)
    return out


def test_page_is_self_contained_and_png_is_written(page_file):
    import re

    page = page_file.read_text()
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=[\"']https?:", page)
    png = page_file.with_suffix(".png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000


def test_map_renders_every_point_search_highlights_and_click_shows_abstract(browser, page_file, bundled_index):
    page = browser.new_page()
    errors = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    outside = []
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:")
               else (outside.append(route.request.url), route.abort()))
    page.goto(page_file.as_uri())
    page.wait_for_selector(".scatterlayer .point")
    traces = page.evaluate("document.getElementById('plotly-map').data.length")
    points = page.evaluate("document.querySelectorAll('.scatterlayer .point').length")  # highlight trace is empty
    assert points == len(bundled_index) and traces >= 7

    page.fill("#search", "continuous-time Markov chains")
    page.wait_for_function("document.getElementById('count').dataset.matches !== undefined")
    highlighted = page.evaluate("() => { const d = document.getElementById('plotly-map').data; "
                                "return d[d.length - 1].customdata.map(c => c[0]); }")
    ids = bundled_index.documents.ids
    assert "001_d172d3709162399d:3" in [ids[i] for i in highlighted]
    assert page.locator("#count").inner_text().startswith(f"{len(highlighted)} matching")

    page.locator(".scatterlayer .trace").first.locator(".point").first.click(force=True)
    page.wait_for_selector("#paper h3")
    assert len(page.locator("#paper p").inner_text()) > 200
    assert errors == [] and outside == []  # works offline: nothing was fetched from the network


def test_large_maps_draw_a_sample_that_keeps_every_topic(latent_topics, tmp_path):
    import json
    import re

    import numpy as np

    from embedsearch.topics.maps import shown_rows, write_html

    index, _ = latent_topics
    model = index.topics()
    assigned = np.asarray(model.assignments[0])
    rows = shown_rows(assigned, 300, seed=model.settings["seed"])
    assert np.array_equal(rows, shown_rows(assigned, 300, seed=model.settings["seed"])) and 290 <= len(rows) <= 300 + 5 * 11
    assert set(assigned[rows]) == set(assigned)
    share = {t: np.mean(assigned == t) for t in set(assigned)}
    assert all(abs(np.mean(assigned[rows] == t) - s) < 0.03 for t, s in share.items())
    page = write_html(model, index.documents, tmp_path / "map.html", "sample", max_points=300).read_text()
    docs = json.loads(re.search(r"const DOCS = (\[.*?\]);\n", page).group(1).replace("<\\/", "</"))
    assert len(docs) == len(rows) and [d["id"] for d in docs] == [index.documents.ids[r] for r in rows]
    assert f"{len(rows):,} of {len(index):,} papers shown" in page
    everything = write_html(model, index.documents, tmp_path / "all.html", "all").read_text()
    assert f"{len(index):,} papers, {len(model.topics())} topics" in everything
