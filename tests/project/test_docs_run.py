"""Every `embedsearch` line of the README and docs/ run as a reader would (issue 65): pasted into bash, page by
page and in the page's order, in a folder that holds what the lines name (``docs_world``: the bundled abstracts
as ``papers.jsonl`` with ids, authors, years and venues, indexes, reviewers' archives, a BibTeX library, a
small BEIR set). Each line must end with 0, without a traceback, and write the files it names; a ``serve``
line must answer ``/health`` (and on Ray end with 0 when stopped by SIGTERM). Lines with ``--engine ray`` run
on the Ray tests' worker, against its cluster."""

from __future__ import annotations

import os
import shlex
import shutil
import time
from pathlib import Path

import pytest
from docs_world import PAGES, command_lines, make_world, serve, shell, words
from serve_helpers import free_port

pytestmark = pytest.mark.system  # some eighty commands end to end: `make quick` keeps test_docs.py's parse

OUTPUTS = {"--out", "--csv", "--bibtex", "--plot", "--atom", "--marginals", "--write-kept", ">"}


def on_ray(line: str) -> bool:
    return "--engine ray" in line


@pytest.fixture(scope="module")
def world(tmp_path_factory, bundled_docs) -> Path:
    root = tmp_path_factory.mktemp("reader")
    make_world(root, bundled_docs)
    return root


def outputs(line: str) -> list[str]:
    """The files a line says it writes (the value after --out, --csv, ..., or a shell redirection)."""
    parts = shlex.split(line, comments=True)
    return [parts[i + 1] for i, part in enumerate(parts[:-1]) if part in OUTPUTS]


def run_page(page: Path, world: Path, folder: Path, env: dict, keep=lambda line: True) -> list[str]:
    """Run the page's lines that ``keep`` accepts, in order, in a copy of the reader's folder: what failed."""
    shutil.copytree(world, folder)
    cwd, failures = folder / "work", []
    for number, line in command_lines(page):
        if not keep(line):
            continue
        line = line.replace(" /shared/", f" {folder}/shared/")  # a cluster's shared disk
        where = f"{page.name}:{number}: {line}"
        if words(line)[0] == "serve":
            status, code, output = serve(line, cwd, env, free_port(), timeout=300 if on_ray(line) else 120)
            if status != 200 or (on_ray(line) and code != 0):  # on Ray, a stop that is not clean leaves the app
                failures.append(f"{where}\n  /health answered {status}; stopped, it exited {code}:\n{output[-1500:]}")
            continue
        result = shell(line, cwd, env)
        missing = [name for name in outputs(line) if not (cwd / name).exists()]
        if result.returncode or "Traceback" in result.stderr or missing:
            failures.append(f"{where}\n  exit {result.returncode}, missing {missing}:\n{result.stderr[-1500:]}")
    return failures


RUN = [page for page in PAGES if any(not on_ray(line) for _, line in command_lines(page))]


@pytest.mark.xdist_group("docs")
@pytest.mark.parametrize("page", RUN, ids=[page.name for page in RUN])
def test_every_command_line_of_the_page_runs(page, world, tmp_path):
    failures = run_page(page, world, tmp_path / "reader", os.environ.copy(), keep=lambda line: not on_ray(line))
    assert not failures, "\n\n".join(failures)


@pytest.mark.xdist_group("ray")
def test_the_ray_lines_run_against_a_ray_cluster_and_a_stopped_service_leaves_it_free(local_ray, world, tmp_path):
    """The scale page in order, its Ray lines joining this worker's Ray (``--ray-address auto`` reads
    RAY_ADDRESS); once ``serve --engine ray`` is stopped, its application is off the cluster and no replica holds
    the cluster's CPUs (the Ray tests after this one need them)."""
    page = next(page for page in PAGES if page.name == "scale.md")
    assert sum(on_ray(line) for _, line in command_lines(page)) == 4
    env = {**os.environ, "RAY_ADDRESS": local_ray.get_runtime_context().gcs_address}
    failures = run_page(page, world, tmp_path / "reader", env)
    assert not failures, "\n\n".join(failures)
    total, deadline = local_ray.cluster_resources()["CPU"], time.time() + 10
    while local_ray.available_resources().get("CPU", 0) < total and time.time() < deadline:
        time.sleep(1)
    assert local_ray.available_resources().get("CPU", 0) == total, "the stopped service still holds the cluster's CPUs"
