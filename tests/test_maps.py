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


def twelve_topics():
    """A map of 12 crowded topics with long labels (as an arXiv map has), and its documents."""
    import numpy as np

    from embedsearch import Document
    from embedsearch.topics.results import Topic, TopicModel

    rng = np.random.default_rng(0)
    centres = rng.uniform(-4, 4, size=(12, 2))
    centres[0], centres[1] = (-7, 0), (7, 5)  # at the left edge and the top right: labels would leave the plot
    assigned = np.repeat(np.arange(12), 25)
    coords = (centres[assigned] + rng.normal(scale=0.5, size=(300, 2))).astype(np.float32)
    ids = tuple(f"p{i}" for i in range(300))
    words = ["neutrino spectrum", "general relativity", "cosmology", "spacetime", "quantum groups", "graphs"]
    topics = tuple(Topic(t, f"{words[t % 6]}, {words[(t + 1) % 6]} and {words[(t + 2) % 6]} {t}", 25, (),
                         (ids[t * 25],), tuple(ids[t * 25:(t + 1) * 25]), None) for t in range(12))
    model = TopicModel((topics,), (tuple(int(a) for a in assigned),), ids, (), {"seed": 0}, coords,
                       (np.zeros((12, 4), dtype=np.float32),))
    docs = [Document(i, f"Paper {i} studies {words[int(a) % 6]} in depth. More text follows here.")
            for i, a in zip(ids, assigned)]
    return model, docs


@pytest.mark.parametrize("width, height", [(390, 844), (1366, 900)])
def test_the_map_fits_a_phone_and_a_desktop_with_labels_inside_that_never_overlap(browser, tmp_path, width,
                                                                                 height):
    """12 topics: on a phone the plot takes the width and the legend folds into the side panel; on either
    screen every label shown lies inside the plot, no two overlap, and most are shown; a search lists what
    it rings, and a listed paper opens on a click."""
    from embedsearch.topics.maps import write_html

    model, docs = twelve_topics()
    path = write_html(model, docs, tmp_path / "map.html", "twelve topics")
    context = browser.new_context(viewport={"width": width, "height": height}, is_mobile=width < 700)
    page = context.new_page()
    page.goto(path.as_uri())
    page.wait_for_selector(".scatterlayer .point")
    page.wait_for_function("document.getElementById('plotly-map').dataset.placed !== undefined")
    plot = page.locator("#plotly-map").bounding_box()
    narrow = width < 700
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert page.evaluate("document.getElementById('plotly-map').layout.showlegend") is (not narrow)
    if narrow:
        assert plot["width"] >= 0.9 * width
        area = page.locator(".nsewdrag").first.bounding_box()
        assert area["width"] >= 0.8 * width  # no legend beside the points
        assert page.locator("#legend-list li").count() == 12 and page.locator("#legend-list").is_visible()
    else:
        assert not page.locator("#legend-list").is_visible()
    boxes = page.evaluate("""() => {
        const area = document.querySelector('.nsewdrag').getBoundingClientRect();
        const shown = [...document.querySelectorAll('.annotation')].filter((a) => a.getAttribute('style') === null
            || !a.getAttribute('style').includes('none')).map((a) => a.querySelector('rect.bg') || a);
        return {area: [area.left, area.top, area.right, area.bottom],
                boxes: shown.map((a) => { const r = a.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; }),
                visible: document.getElementById('plotly-map').layout.annotations.filter((a) => a.visible !== false).length};
    }""")
    left, top, right, bottom = boxes["area"]
    shown = boxes["boxes"]
    assert len(shown) == boxes["visible"] >= (6 if narrow else 9)
    assert all(b[0] >= left - 1 and b[2] <= right + 1 and b[1] >= top - 1 and b[3] <= bottom + 1 for b in shown)
    assert not [(a, b) for n, a in enumerate(shown) for b in shown[n + 1:]
                if a[0] < b[2] - 1 and b[0] < a[2] - 1 and a[1] < b[3] - 1 and b[1] < a[3] - 1]
    page.fill("#search", "cosmology")
    page.wait_for_function("document.querySelectorAll('#found li').length > 0")
    assert page.locator("#found li").count() == page.evaluate(
        "document.getElementById('plotly-map').data.at(-1).x.length")
    page.locator("#found li button").first.click()
    page.wait_for_selector("#paper h3")
    assert "cosmology" in page.locator("#paper p").inner_text()
    context.close()
