"""The folder a reader of the README and docs/ is assumed to stand in, made from the bundled abstracts: every file
and index their command lines name (``papers.jsonl``, ``indexes/mine``, ``archives/``, ``scores`` of area
chairs, a BibTeX library, a small BEIR set at ``../shared/eval/scifact``), and how one of those lines is run
there as a shell would run it (``tests/project/test_docs_run.py``)."""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
from bad_input import write_jsonl

REPO = Path(__file__).resolve().parent.parent
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
ENV_PREFIX = re.compile(r"^(?:[A-Z_]+=(?:\$\([^)]*\)|\S+)\s+)*embedsearch ")


def command_lines(page: Path) -> list[tuple[int, str]]:
    """Each ``embedsearch ...`` line of the page's shell blocks (continuations joined, an environment variable
    set before it kept), with its line number."""
    out, shell, fenced, joined, start = [], False, False, "", 0
    for number, line in enumerate(page.read_text().splitlines(), start=1):
        if line.startswith("```"):
            fenced = not fenced
            shell = fenced and line[3:].strip() in ("", "bash", "sh", "console")
            continue
        if not shell:
            continue
        start = start if joined else number
        joined += line.rstrip("\\").strip() + " "
        if line.rstrip().endswith("\\"):
            continue
        if ENV_PREFIX.match(joined):
            out.append((start, joined.strip()))
        joined = ""
    return out


def words(line: str) -> list[str]:
    """The line's arguments after ``embedsearch``, up to a comment or an output redirection."""
    parts = shlex.split(line, comments=True)
    parts = parts[parts.index("embedsearch") + 1:]
    return parts[:parts.index(">")] if ">" in parts else parts


VENUES = ("NeurIPS", "ICML", "ICLR")
REVIEWERS = [f"~Reviewer_{name}1" for name in ("Ada", "Bo", "Cy", "Dee", "Eli", "Fay", "Gus", "Hal")]


def papers(documents) -> list[dict]:
    """The bundled abstracts as a user's corpus: arXiv-style ids, titles, authors, years 2019-2026, venues."""
    rows = []
    for i, doc in enumerate(documents):
        authors = ["Yann LeCun"] if i % 9 == 0 else [f"Author {i % 7}", f"Author {i % 5 + 7}"]
        rows.append({"id": f"2401.{i + 1:05d}", "title": doc.first_sentence(120), "abstract": doc.text,
                     "authors": authors, "year": 2019 + i % 8, "venue": VENUES[i % 3]})
    return rows


def write_csv(path: Path, header: list[str], rows) -> None:
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows)


def write_parquet(path: Path, rows: list[dict]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path)


def reworded(text: str) -> str:
    """The same submission reworded: sentences reversed, a few words swapped."""
    sentences = re.split(r"(?<=[.!?])\s+", text.strip())
    return " ".join(reversed(sentences)).replace("We ", "In this work we ").replace(" and ", " as well as ")


def make_world(root: Path, documents) -> Path:
    """Write the reader's folder under ``root / "work"`` (and ``root / "shared"`` beside it); return the folder.
    Indexes are built with the default model: texts already embedded come from the cache."""
    from embedsearch import Index

    work = root / "work"
    rows = papers(documents)
    write_jsonl(work / "papers.jsonl", rows[:48])
    fresh = rows[48:]  # abstracts no index holds yet: what `add` and `build ... more.csv` bring
    write_csv(work / "more.csv", ["id", "title", "abstract", "year", "venue"],
              [(r["id"], r["title"], r["abstract"], r["year"], r["venue"]) for r in fresh[:3]])
    write_parquet(work / "new.parquet", fresh[3:6])
    write_jsonl(work / "one.jsonl", fresh[6:7])
    for n, part in enumerate((rows[:30], rows[30:])):
        write_parquet(work / "papers" / f"part-{n}.parquet", part)
    (work / "topics.txt").write_text("diffusion language models\nrobot manipulation policies\nspiking neurons\n")
    (work / "my_abstract.txt").write_text(documents[5].text)
    (work / "mine.bib").write_text("\n".join(
        f"@article{{paper{i},\n  title = {{{r['title']}}},\n  author = {{{' and '.join(r['authors'])}}},\n"
        f"  year = {{{r['year']}}},\n  abstract = {{{r['abstract']}}}\n}}\n" for i, r in enumerate(rows[10:13])))

    mine = Index.from_sources([work / "papers.jsonl"], work / "indexes" / "mine").path
    for copy in ("indexes/papers", "indexes/last-year", "my-index"):
        shutil.copytree(mine, work / copy)
    write_jsonl(root / "new.jsonl", [*fresh, {**rows[3], "id": "2501.00003", "abstract": reworded(rows[3]["abstract"])}])
    Index.from_sources([root / "new.jsonl"], work / "indexes" / "new")

    submissions = [{"id": f"sub{k}", "title": r["title"], "abstract": r["abstract"], "authors": [f"Submitter {k}"]}
                   for k, r in enumerate(fresh[:8])]
    submissions[1]["authors"].append("Reviewer Bo")
    write_jsonl(work / "submissions.jsonl", submissions)
    (work / "submissions.json").write_text(json.dumps({s["id"]: {"id": s["id"], "content": {
        "title": s["title"], "abstract": s["abstract"], "authors": s["authors"]}} for s in submissions}))
    Index.from_sources([work / "submissions.jsonl"], work / "indexes" / "chairs")
    publications = []
    for j, reviewer in enumerate(REVIEWERS):
        name = reviewer[1:-1].replace("_", " ")
        own = [{"id": f"{reviewer}-{i}", "content": {"title": r["title"], "abstract": r["abstract"],
                                                      "authors": [name], "year": r["year"]}}
               for i, r in enumerate(rows[j * 5:j * 5 + 3])]
        write_jsonl(work / "archives" / f"{reviewer}.jsonl", own)
        publications += [{"reviewer": reviewer, "id": p["id"], **p["content"], "authors": name} for p in own]
    write_parquet(work / "pubs.parquet", publications)
    write_csv(work / "coi.csv", ["submission", "reviewer"], [("sub0", REVIEWERS[0]), ("sub2", REVIEWERS[3])])
    write_csv(work / "bids.csv", ["submission", "reviewer", "bid"],
              [("sub0", REVIEWERS[1], "Very High"), ("sub3", REVIEWERS[2], "Very Low")])
    write_csv(work / "people.csv", ["reviewer", "seniority", "institution"],
              [(r, "senior" if j % 3 == 0 else "junior", f"u{j % 6}") for j, r in enumerate(REVIEWERS)])
    acs, sacs = [f"ac{j}" for j in range(4)], [f"sac{j}" for j in range(2)]
    papers_ids = [f"p{i}" for i in range(24)]
    write_csv(work / "ac_scores.csv", ["submission", "reviewer", "score"],
              [(p, a, round((i * 7 + j * 3) % 10 / 10, 2)) for i, p in enumerate(papers_ids) for j, a in enumerate(acs)])
    write_csv(work / "sac_scores.csv", ["submission", "reviewer", "score"],
              [(p, s, round((i + j * 5) % 10 / 10, 2)) for i, p in enumerate(papers_ids) for j, s in enumerate(sacs)])

    beir = root / "shared" / "eval" / "scifact"
    write_jsonl(beir / "corpus.jsonl", [{"_id": r["id"], "title": r["title"], "text": r["abstract"]} for r in rows[:48]])
    write_jsonl(beir / "queries.jsonl", [{"_id": f"q{i}", "text": rows[i]["title"]} for i in range(0, 40, 8)])
    (beir / "qrels").mkdir()
    (beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(
        f"q{i}\t{rows[i]['id']}\t1\n" for i in range(0, 40, 8)))
    return work


def reader_env(env: dict) -> dict:
    """``env`` with this interpreter's ``bin`` first on the PATH: ``embedsearch`` is the installed command."""
    return {**env, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"}


def shell(line: str, cwd: Path, env: dict, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run ``line`` with bash in ``cwd``, as a reader pasting it would."""
    return subprocess.run(["bash", "-c", line], cwd=cwd, env=reader_env(env), capture_output=True, text=True,
                          timeout=timeout)


def serve(line: str, cwd: Path, env: dict, port: int, timeout: float = 120) -> tuple[int, int | None, str]:
    """Start a ``serve`` line on ``port``, wait until ``/health`` answers, then stop it with SIGTERM as a
    service manager would: (the status ``/health`` gave, the exit code, its output)."""
    line = re.sub(r"--port \d+", "", line).split("#")[0].rstrip() + f" --port {port}"
    log = cwd / f".serve-{port}.log"
    with log.open("w") as out:
        proc = subprocess.Popen(["bash", "-c", line], cwd=cwd, env=reader_env(env), stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
        status, deadline = 0, time.time() + timeout
        try:
            while time.time() < deadline and proc.poll() is None:
                try:
                    status = httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code
                    if status == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.3)
        finally:
            code = proc.poll()
            if code is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    code = proc.wait(30)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
    return status, code, log.read_text()
