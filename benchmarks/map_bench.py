"""The topic map page at 20k, 100k and 1M papers: file size, time to first draw, frame time while panning
and zooming, JS heap, in headless Chromium with WebGL on SwiftShader (software: no GPU). With ``--before
REV`` (default: the last plotly page), that commit's page is built for the sizes up to 100k in its own
process (a git worktree) and measured in the same run.

Positions are synthetic (Gaussian topics, 40 fine under 8 broad), titles are drawn from a word list and ids
look like arXiv ids, so sizes and timings are real and labels are laid out as on a real fit; the labels'
words are not.

    python -m benchmarks.map_bench --sizes 20000,100000,1000000
    python -m benchmarks.map_bench --real 100000                  # a real fit (hashing encoder), `embedsearch map`
    python -m benchmarks.map_bench --probe --sizes 1000,100000    # frame time by viewport: fill or vertex bound
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

WORDS = ("graph neural networks diffusion models sparse attention language agents reinforcement learning "
         "protein structure causal inference optimal transport vision transformers federated privacy robust "
         "bandits kernel methods quantum circuits molecular dynamics spectral clustering theorem bounds").split()
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--enable-unsafe-swiftshader",
         "--enable-precise-memory-info"]
FRAMES = """async (kind) => {  // 40 frames, each moving the camera: rAF-to-rAF times
  const times = []; let last = performance.now();
  const sp = kind === "new" ? embedsearchMap.plot() : null, plot = document.getElementById("plotly-map");
  for (let k = 0; k < 40; k++) {
    if (sp) { const c = sp.get("camera"); sp.zoomToLocation([c.target[0] + 0.01, c.target[1]], c.distance[0] * (k % 2 ? 1.02 : 0.98)); }
    else { const r = plot.layout.xaxis.range; await Plotly.relayout(plot, {"xaxis.range": [r[0] + 0.05, r[1] + 0.05]}); }
    await new Promise(r => requestAnimationFrame(r));
    const now = performance.now(); times.push(now - last); last = now;
  }
  times.sort((a, b) => a - b);
  return times[20];
}"""


def synthetic(n: int, seed: int = 0):
    """A two-level topic model of ``n`` papers and its documents (titles only: the page's payload above 20k)."""
    from dataclasses import fields

    from embedsearch import Document
    from embedsearch.topics.results import Topic, TopicModel

    named = "name" in {f.name for f in fields(Topic)}

    rng = np.random.default_rng(seed)
    centres = rng.uniform(-10, 10, size=(40, 2))
    fine = rng.integers(0, 40, n)
    coords = (centres[fine] + rng.normal(scale=0.8, size=(n, 2))).astype(np.float32)
    ids = tuple(f"arXiv:{2000 + i // 100000:04d}.{i % 100000:05d}" for i in range(n))
    levels = []
    for depth, of in enumerate((fine, fine % 8)):
        count = np.bincount(of)
        levels.append(tuple(Topic(t, f"kw {t}", int(count[t]), (), (), (), t % 8 if depth == 0 else None,
                                  **({"name": f"{WORDS[(3 * t + depth) % len(WORDS)]} {WORDS[(7 * t + 1) % len(WORDS)]}"}
                                     if named else {}))
                            for t in range(len(count))))
    model = TopicModel(tuple(levels), (tuple(fine.tolist()), tuple((fine % 8).tolist())), ids, (), {"seed": 0},
                       coords, (np.zeros((40, 4), np.float32), np.zeros((8, 4), np.float32)))
    words = np.array(WORDS)
    docs = [Document(ids[i], "x", title=" ".join(words[rng.integers(0, len(WORDS), 8)])) for i in range(n)]
    return model, docs


def build(n: int, out: Path, plotly: bool) -> float:
    """Write the page for ``n`` papers to ``out``; seconds taken (the plotly page: all points, no sample)."""
    from embedsearch.topics import maps

    model, docs = synthetic(n)
    start = time.perf_counter()
    if plotly:
        maps.write_html(model, docs, out, f"{n} papers", max_points=n)
    else:
        maps.write_html(model, docs, out, f"{n} papers")
    return time.perf_counter() - start


def measure(page_file: Path, kind: str) -> dict:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=FLAGS)
        page = browser.new_page(viewport={"width": 1366, "height": 900})
        start = time.perf_counter()
        page.goto(page_file.as_uri(), timeout=300_000)
        if kind == "new":
            page.wait_for_function("window.embedsearchMap && embedsearchMap.drawn > 0", timeout=300_000, polling=50)
        else:
            page.wait_for_selector("#plotly-map .main-svg", timeout=300_000)
            page.wait_for_function("document.getElementById('plotly-map')._fullLayout !== undefined", polling=50)
        first = time.perf_counter() - start
        frame = page.evaluate(FRAMES, kind)
        heap = page.evaluate("performance.memory.usedJSHeapSize") / 2 ** 20
        browser.close()
    return {"first_draw_s": first, "frame_ms": frame, "heap_mb": heap}


IDLE = """async () => {  // rAF-to-rAF with the camera still
  const times = []; let last = performance.now();
  for (let k = 0; k < 40; k++) { await new Promise(r => requestAnimationFrame(r)); const now = performance.now(); times.push(now - last); last = now; }
  times.sort((a, b) => a - b);
  return times[20];
}"""


def probe(sizes: list[int]) -> list[list]:
    """Frame time of this page by viewport size: what a software rasteriser's fill and vertex work cost."""
    from playwright.sync_api import sync_playwright

    rows = []
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=FLAGS)
        for n in sizes:
            out = Path(tmp) / f"{n}.html"
            build(n, out, False)
            row = [f"{n:,}"]
            for w, h in ((1366, 900), (683, 450), (342, 225)):
                page = browser.new_page(viewport={"width": w, "height": h})
                page.goto(out.as_uri(), timeout=300_000)
                page.wait_for_function("window.embedsearchMap && embedsearchMap.drawn > 0", timeout=300_000, polling=50)
                row.append(page.evaluate(FRAMES, "new"))
                idle = page.evaluate(IDLE)
                page.close()
            rows.append(row + [idle])
        browser.close()
    return rows


def real(n: int) -> list:
    """A real fit of ``n`` synthetic abstracts (the hashing test encoder: 40 topics of their own words), then
    ``embedsearch map`` from the CLI: fit and map times, the file, and its measurement."""
    from embedsearch import Document, Index

    rng = np.random.default_rng(1)
    vocab = [f"{a}{b}" for a in ("neu", "gra", "spa", "cau", "qua", "mol", "ker", "ban") for b in
             ("ral", "ph", "rse", "sal", "ntum", "ecule", "nel", "dit", "tron", "gen")]
    topic = rng.integers(0, 40, n)
    docs = [Document(f"p{i}", " ".join(rng.choice(vocab[2 * (t % 40):2 * (t % 40) + 6], 12).tolist()
                                       + rng.choice(vocab, 6).tolist()),
                     title=" ".join(rng.choice(WORDS, 8).tolist())) for i, t in enumerate(topic)]
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        Index.build(docs, Path(tmp) / "ix", model="hashing-384")
        built = time.perf_counter() - start
        out = Path(tmp) / "map.html"
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "embedsearch", "map", "--index", str(Path(tmp) / "ix"), "--out", str(out)],
                       check=True)
        mapped = time.perf_counter() - start
        got = measure(out, "new")
        return [f"{n:,}", built, mapped, out.stat().st_size / 2 ** 20, got["first_draw_s"], got["frame_ms"], got["heap_mb"]]


def main() -> None:
    from benchmarks.common import ROOT, save, table, worktree

    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="20000,100000,1000000")
    parser.add_argument("--before", default="1d45e5dad193fc4e8d3321486dd59d63386ad102")
    parser.add_argument("--baseline-up-to", type=int, default=100_000)
    parser.add_argument("--real", type=int, help="instead: a real fit of this many papers (hashing encoder), CLI map")
    parser.add_argument("--probe", action="store_true", help="frame time by viewport size instead (this page only)")
    args = parser.parse_args()
    if args.real:
        row = real(args.real)
        save("map_bench_real", {"row": row})
        print(table(["papers", "index s", "topics + map s", "file MB", "first draw s", "frame ms", "JS heap MB"], [row]))
        return
    if args.probe:
        rows = probe([int(n) for n in args.sizes.split(",")])
        save("map_bench_probe", {"rows": rows})
        print(table(["papers", "1366x900 ms", "683x450 ms", "342x225 ms", "still ms"], rows))
        return
    rows, results = [], []
    with tempfile.TemporaryDirectory() as tmp, worktree(args.before, Path(tmp) / "before") as before:
        for n in map(int, args.sizes.split(",")):
            for kind in ("new", "plotly"):
                if kind == "plotly" and n > args.baseline_up_to:
                    continue
                out = Path(tmp) / f"{kind}-{n}.html"
                tree = before if kind == "plotly" else ROOT
                built = float(subprocess.run([sys.executable, __file__, "--build", str(n), str(out), kind], check=True,
                                             env={**os.environ, "PYTHONPATH": str(tree)}, cwd=tree, capture_output=True,
                                             text=True).stdout.strip().splitlines()[-1])
                got = {"papers": n, "page": kind, "mb": out.stat().st_size / 2 ** 20, "build_s": built,
                       **measure(out, kind)}
                results.append(got)
                rows.append([f"{n:,}", "regl-scatterplot (this)" if kind == "new" else "plotly (before)", got["mb"],
                             got["build_s"], got["first_draw_s"], got["frame_ms"], got["heap_mb"]])
                print(table(["papers", "page", "file MB", "build s", "first draw s", "frame ms (median)", "JS heap MB"],
                            rows[-1:]), flush=True)
    save("map_bench", {"results": results})
    print(table(["papers", "page", "file MB", "build s", "first draw s", "frame ms (median)", "JS heap MB"], rows))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--build"]:  # one page, in a process that imports only that tree's embedsearch
        print(build(int(sys.argv[2]), Path(sys.argv[3]), sys.argv[4] == "plotly"))
    else:
        main()
