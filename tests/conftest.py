"""Shared fixtures. Anything that embeds is session-scoped: embedding is slow on CPU."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

# One temporary root per test run. pytest-xdist workers inherit it from the controller and take a folder
# each for vector caches and the default index; numba's compiled umap/hdbscan code is shared by all of them
# (compiled once per run rather than once per worker: it is the same machine code whoever compiles it).
if "EMBEDSEARCH_TEST_ROOT" not in os.environ:
    os.environ["EMBEDSEARCH_TEST_ROOT"] = tempfile.mkdtemp(prefix="embedsearch-tests-")
_ROOT = Path(os.environ["EMBEDSEARCH_TEST_ROOT"])
_SESSION_DIR = _ROOT / os.environ.get("PYTEST_XDIST_WORKER", "main")
os.environ["EMBEDSEARCH_CACHE_DIR"] = str(_SESSION_DIR / "cache")
os.environ["EMBEDSEARCH_HOME"] = str(_SESSION_DIR / "home")
os.environ["NUMBA_CACHE_DIR"] = str(_ROOT / "numba")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
# The commands the tests run in subprocesses start as an installed package does, from bytecode caches: a shell
# that sets PYTHONDONTWRITEBYTECODE (this machine's does) has every one compile the package from source.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"


def pytest_xdist_auto_num_workers(config):
    """``-n auto``: a worker per core, at least two (many tests wait on processes and sockets) and at most
    four (each worker loads the model and builds the bundled index once)."""
    return max(2, min(4, os.cpu_count() or 1))


# The second tier: tests that need Ray, Chromium, Schemathesis, processes killed with SIGKILL or the second CPU code
# path. `make quick` runs the rest (`-m "not system"`); `make test` (what `.ci/run` calls) runs everything.
SYSTEM_FILES = {"test_serve_fuzz.py", "test_ray_fit.py"}
SYSTEM_FIXTURES = {"browser", "local_ray"}
SYSTEM_WORDS = ("sigkill", "killed", "two_cpu_code_paths")


def pytest_configure(config):
    config.addinivalue_line("markers", "system: needs Ray, Chromium, Schemathesis, SIGKILL or a second CPU code path "
                                       "(left out by `make quick`)")


def pytest_collection_modifyitems(config, items):
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        on_ray = any(m.args[:1] == ("ray",) for m in item.iter_markers("xdist_group"))  # whatever its file is named
        if Path(str(item.fspath)).name in SYSTEM_FILES or fixtures & SYSTEM_FIXTURES or on_ray or \
                any(word in item.name.lower() for word in SYSTEM_WORDS) or \
                "SIGKILL" in (getattr(item.function, "__doc__", None) or ""):
            item.add_marker(pytest.mark.system)


def pytest_sessionfinish(session, exitstatus):
    is_worker = hasattr(session.config, "workerinput")
    shutil.rmtree(_SESSION_DIR if is_worker else _ROOT, ignore_errors=True)


@pytest.fixture(scope="session")
def bundled_docs():
    from embedsearch.corpus import bundled_sources, read_sources

    return read_sources(bundled_sources()).documents


@pytest.fixture(scope="session")
def bundled_index(tmp_path_factory, bundled_docs):
    """The bundled corpus indexed once; tests that change an index copy it first."""
    from embedsearch import Index

    return Index.build(bundled_docs, tmp_path_factory.mktemp("bundled") / "idx")


@pytest.fixture()
def index_copy(bundled_index, tmp_path):
    """A private, writable copy of the bundled index (no re-embedding)."""
    from embedsearch import Index

    target = tmp_path / "copy"
    shutil.copytree(bundled_index.path, target)
    return Index.load(target)


@pytest.fixture(scope="session")
def model():
    from embedsearch.embedding.embed import load_model
    from embedsearch.embedding.settings import DEFAULT_MODEL

    return load_model(DEFAULT_MODEL)


def clustered(n: int, d: int = 64, centres: int = 40, spread: float = 0.6, seed: int = 0):
    """Unit vectors around random centres: small synthetic data every ANN index can be judged on."""
    import numpy as np

    rng = np.random.default_rng(seed)
    x = rng.normal(size=(centres, d))[rng.integers(0, centres, n)] + spread * rng.normal(size=(n, d))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def run_cli(*args: str, input: str | None = None, check: bool = False) -> subprocess.CompletedProcess:
    """Run the real command in a subprocess, as a user would."""
    result = subprocess.run([sys.executable, "-m", "embedsearch", *args], capture_output=True, text=True,
                            input=input, env=os.environ.copy(), cwd=REPO)
    if check and result.returncode != 0:
        raise AssertionError(f"embedsearch {' '.join(args)} failed:\n{result.stderr}")
    return result


@pytest.fixture(scope="session")
def latent_topics(tmp_path_factory, bundled_index):
    """1,500 documents in 10 planted topics that overlap as real ones do: an 8-d latent mixture in 384-d,
    with topic words as text. Returns the index and the planted labels."""
    import numpy as np

    from embedsearch import Document, Index

    rng = np.random.default_rng(5)
    sizes = np.round(rng.dirichlet(np.full(10, 3.0)) * 1500).astype(int)
    labels = np.repeat(np.arange(10), sizes)[:1500]
    labels = np.concatenate([labels, rng.integers(0, 10, 1500 - len(labels))])
    latent = 2.2 * rng.normal(size=(10, 8))[labels] + rng.normal(size=(1500, 8))
    basis = np.linalg.qr(rng.normal(size=(384, 384)))[0][:, :8]
    x = 3 * np.ones(384) / np.sqrt(384) + latent @ basis.T + 0.05 * rng.normal(size=(1500, 384))
    x = (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)
    words = [[f"topic{t}word{i}" for i in range(30)] for t in range(10)]
    docs = [Document(f"d{i}", " ".join(rng.choice(words[labels[i]], 20))) for i in range(1500)]
    index = Index.from_embeddings(docs, x, tmp_path_factory.mktemp("latent") / "idx", bundled_index.manifest.model)
    return index, labels


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
BROWSER_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--enable-unsafe-swiftshader"]  # WebGL (the map) on the CPU: SwiftShader, no GPU needed


def _sentences(text):
    import re

    return re.split(r"(?<=[.!?])\s+", text)


@pytest.fixture(scope="session")
def planted(tmp_path_factory, bundled_docs):
    """The bundled corpus plus planted duplicates of three of its papers."""
    import re

    from embedsearch import Document, Index

    base = {d.id: d for d in bundled_docs}
    a, b, c = bundled_docs[3], bundled_docs[20], bundled_docs[40]
    shouty = " ".join(w.upper() if i % 3 == 0 else w for i, w in enumerate(a.text.split()))
    variants = [
        Document("dup-exact", shouty.replace(",", " ,").replace(". ", ".\n  ")),
        Document("dup-numbers", re.sub(r"\d+(\.\d+)?", lambda m: str(int(float(m.group()) * 3 + 7)), b.text)),
        Document("dup-drop", " ".join(s for i, s in enumerate(_sentences(b.text)) if i != 2)),
        Document("dup-reworded", " ".join(reversed(_sentences(c.text))).replace("We ", "In this work we ")
                 .replace(" the ", " this ").replace(" and ", " as well as ")),
    ]
    index = Index.build([*bundled_docs, *variants], tmp_path_factory.mktemp("dedup") / "idx")
    return index, {"a": a.id, "b": b.id, "c": c.id}, base


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium through Playwright (CI installs Debian's chromium; required there). Module-scoped:
    while Playwright's sync API is open, the thread counts as inside a running asyncio loop, and Ray Serve's
    handles (later tests on the same worker) refuse to answer in one."""
    if CHROMIUM is None:
        if os.environ.get("EMBEDSEARCH_REQUIRE_BROWSER"):
            pytest.fail("chromium is not installed (apt-get install chromium)")
        pytest.skip("chromium is not installed here; CI installs it")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=BROWSER_FLAGS)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def metadata_index(tmp_path_factory, bundled_docs, bundled_index):
    """The bundled abstracts with ``track`` and ``year`` fields, indexed (vectors from the cache)."""
    from serve_helpers import corpus_with_metadata

    from embedsearch import Index

    folder = tmp_path_factory.mktemp("served")
    source = corpus_with_metadata(bundled_docs, folder / "corpus.jsonl")
    return Index.from_sources([source], folder / "idx")


@pytest.fixture(scope="session")
def local_ray():
    """One local Ray cluster for every Ray test (they share one pytest-xdist worker: `xdist_group('ray')`)."""
    if os.environ.get("EMBEDSEARCH_REQUIRE_RAY"):
        import ray  # CI installs the extra: a missing Ray must fail there, not skip
    else:
        ray = pytest.importorskip("ray", reason="pip install 'embedsearch[ray]' to run the Ray tests")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    yield ray
    ray.shutdown()


@pytest.fixture(scope="session")
def scifact_sample():
    """400 SciFact abstracts (every one relevant to the first 40 test queries, then others) and those queries."""
    from embedsearch.retrieval.beir import load_beir

    data = load_beir(SHARED / "eval" / "scifact")
    queries = list(data.queries.items())[:40]
    wanted = {d for q, _ in queries for d in data.qrels[q]}
    docs = [d for d in data.documents if d.id in wanted]
    docs += [d for d in data.documents if d.id not in wanted][:400 - len(docs)]
    return docs, [text for _, text in queries]


@pytest.fixture(scope="session")
def single(scifact_sample, tmp_path_factory):
    """One index over the SciFact sample: what a cluster of its documents must answer like."""
    from embedsearch import Index

    docs, _ = scifact_sample
    return Index.build(docs, tmp_path_factory.mktemp("single") / "idx")


@pytest.fixture(scope="session")
def papers(tmp_path_factory):
    """240 real papers with titles: 40 arXiv abstracts from each of astro-ph, math and cond-mat (``eprint``,
    ``label``) and 120 of the reviewer data set's (``authors``, ``year``), three given a DOI; built from JSONL
    with the real model (through the cache)."""
    import json

    from embedsearch import Index

    rows, taken = [], {"astro-ph": 0, "math": 0, "cond-mat": 0}
    for line in (SHARED / "eval" / "arxiv" / "arxiv_kaggle_0704_2000.jsonl").open():
        r = json.loads(line)
        if taken.get(r["label"], 40) < 40:
            taken[r["label"]] += 1
            rows.append({"id": f"arxiv-{r['id']}", "title": r["title"], "abstract": r["abstract"], "eprint": r["id"],
                         "label": r["label"], "year": 2007})
    for n, line in enumerate((SHARED / "eval" / "reviewer_match" / "papers.jsonl").open()):
        if n == 120:
            break
        r = json.loads(line)
        if r.get("abstract"):
            rows.append({"id": f"rm-{n}", "title": r["title"], "abstract": r["abstract"], "authors": r["authors"],
                         "year": r["year"], "label": "reviewers", **({"doi": f"10.5555/test.{n}"} if n < 3 else {})})
    folder = tmp_path_factory.mktemp("papers")
    source = folder / "papers.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return Index.from_sources([source], folder / "idx"), {r["id"]: r for r in rows}


def write_sealed(file: Path, payload: dict) -> None:
    """Write a record (manifest, generation) as a hand edit that keeps its seal valid: the test is about what the
    edit says, not about the checksum that catches any edit."""
    from embedsearch.disk.durable import sealed, unsealed

    file.write_text(json.dumps(sealed(unsealed(payload)[0])))


@pytest.fixture(scope="session")
def every_kind(bundled_index, tmp_path_factory) -> Path:
    """The bundled index grown into one of every kind of file: a second segment added from a recorded source
    file (real model, so sentences keep word pieces), a removal, saved topics and a watch that has run."""
    from embedsearch import Document, Index
    from embedsearch.watch import Watch
    from embedsearch.watch import add as add_watch
    from embedsearch.watch import run as run_watch

    root = tmp_path_factory.mktemp("every-kind") / "idx"
    shutil.copytree(bundled_index.path, root, ignore=shutil.ignore_patterns("topics", "watches", "sources"))
    index = Index.load(root)
    source = root.parent / "more.jsonl"
    more = [Document(f"more-{n}", f"Paper {n} on graph neural networks for molecules. It studies {n} bonds.",
                     f"Molecules {n}", {"authors": ["A. Chemist"], "year": 2024}) for n in range(4)]
    source.write_text("".join(json.dumps(d.to_record()) + "\n" for d in more))
    index.add(more, sources=[source])
    index.remove([index.documents.ids[3], "more-1"])
    index.topics()
    add_watch(index, Watch("graphs", query="graph neural networks"))
    run_watch(index, "graphs")
    return root


# The bad-input tests' corpora (tests/bad_input.py; one hashing-model index a module). Imported here, below
# run_cli, which bad_input imports from this module.
from bad_input import ROWS, YEARS, write_jsonl  # noqa: E402


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("bad-input")
    corpus = write_jsonl(root / "papers.jsonl", ROWS)
    run_cli("build", str(corpus), "--index", str(root / "idx"), "--model", "hashing-384", check=True)
    return root / "idx"


@pytest.fixture()
def copy(built, tmp_path) -> Path:
    shutil.copytree(built, tmp_path / "idx")
    return tmp_path / "idx"


@pytest.fixture()
def corpus(tmp_path) -> Path:
    return write_jsonl(tmp_path / "papers.jsonl", ROWS[:2])


@pytest.fixture(scope="module")
def years(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("years")
    run_cli("build", str(write_jsonl(root / "years.jsonl", YEARS)), "--index", str(root / "idx"), "--model",
            "hashing-384", check=True)
    return root / "idx"
