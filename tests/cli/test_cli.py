"""The command as a user runs it: a real subprocess, real exit codes, real output."""

import json
import subprocess
import sys

import pytest
from conftest import REPO, run_cli


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("cli")
    corpus = root / "papers.jsonl"
    corpus.write_text("\n".join(json.dumps(r) for r in [
        {"id": "a", "title": "Spiking nets", "abstract": "Spiking neural networks with time-to-first-spike coding."},
        {"id": "b", "title": "Diffusion LMs", "abstract": "Discrete diffusion language models for text generation."},
        {"id": "c", "title": "Robot VLA", "abstract": "Vision-language-action policies for robot manipulation."},
    ]) + "\n")
    index = root / "idx"
    run_cli("build", str(corpus), "--index", str(index), "--model", "hashing-384", check=True)  # CLI plumbing only
    return root, index


def test_search_json_lines_have_the_contract_fields(built):
    _, index = built
    out = run_cli("search", "robot arm policies", "--index", str(index), "-k", "2", "--json", check=True).stdout
    hits = [json.loads(line) for line in out.splitlines()]
    assert [set(h) for h in hits] == [{"rank", "id", "score", "title", "text", "cosine", "bm25", "match", "metadata",
                                       "evidence"}] * 2
    assert hits[0]["id"] == "c" and hits[0]["rank"] == 1 and hits[0]["title"] == "Robot VLA"
    assert -1 <= hits[0]["cosine"] <= 1 and hits[0]["bm25"] > 0 and isinstance(hits[0]["metadata"], dict)
    dense = json.loads(run_cli("search", "robot arm policies", "--index", str(index), "-k", "1", "--json", "--mode",
                               "dense", check=True).stdout)
    assert dense["score"] == dense["cosine"] and dense["bm25"] is None


def test_human_table_and_batch_queries(built, tmp_path):
    _, index = built
    table = run_cli("search", "spikes", "--index", str(index), "-k", "1", check=True).stdout
    assert "Spiking nets" in table and table.splitlines()[1].strip().startswith("1")
    queries = tmp_path / "q.txt"
    queries.write_text('robot manipulation\n\ntext generation\n"no paper holds this phrase"\ntext generation\n')
    out = run_cli("search", "--queries", str(queries), "--index", str(index), "-k", "1", "--json", check=True).stdout
    rows = [json.loads(line) for line in out.splitlines()]  # one row an input, in input order, a miss included
    assert [(r["line"], r["query"], r.get("id"), r.get("hits")) for r in rows] == [
        (1, "robot manipulation", "c", None), (3, "text generation", "b", None),
        (4, '"no paper holds this phrase"', None, 0), (5, "text generation", "b", None)]
    table = run_cli("search", "--queries", str(queries), "--index", str(index), "-k", "1", check=True).stdout
    assert '# line 4: "no paper holds this phrase"\nno results' in table


def test_similar_by_id_text_and_file(built, tmp_path):
    _, index = built
    by_id = run_cli("similar", "a", "--index", str(index), "--json", check=True).stdout
    assert "a" not in [json.loads(l)["id"] for l in by_id.splitlines()]
    by_text = run_cli("similar", "--text", "language models that denoise discrete tokens", "--index", str(index),
                      "-k", "1", "--json", check=True).stdout
    assert json.loads(by_text)["id"] == "b"
    abstract = tmp_path / "abs.txt"
    abstract.write_text("A manipulation policy for robots conditioned on vision and language.")
    by_file = run_cli("similar", "--file", str(abstract), "--index", str(index), "-k", "1", "--json", check=True)
    assert json.loads(by_file.stdout)["id"] == "c"


def test_info_add_remove(built, tmp_path):
    root, index = built
    extra = tmp_path / "more.csv"
    extra.write_text("id,abstract\nd,Graph neural networks for protein folding.\n")
    run_cli("add", str(extra), "--index", str(index), check=True)
    info = json.loads(run_cli("info", "--index", str(index), "--json", check=True).stdout)
    assert info["documents"] == 4 and info["model"] == "hashing-384" and info["index_type"] == "flat"
    assert info["size_bytes"] > 0 and info["built_at"]
    run_cli("remove", "d", "--index", str(index), check=True)
    assert json.loads(run_cli("info", "--index", str(index), "--json").stdout)["documents"] == 3


def test_default_index_is_the_bundled_corpus(bundled_index):
    """The first command without --index builds the bundled corpus (from the vectors the fixture cached)."""
    out = run_cli("search", "continuous-time Markov chain diffusion", "-k", "1", "--json", check=True)
    assert json.loads(out.stdout)["id"] == "001_d172d3709162399d:3"


def test_the_numbers_beside_results_follow_their_order_and_are_named(bundled_index):
    """In hybrid mode the table shows the fused score that orders the results (the cosine would not follow
    the order), the band as a label, and one line saying what the number is."""
    table = run_cli("search", "spiking neural networks", "-k", "10", "--mode", "hybrid", check=True).stdout
    rows = [line.split() for line in table.splitlines() if line[:3].strip().isdigit()]
    scores = [float(r[1]) for r in rows]
    assert len(rows) == 10 and scores == sorted(scores, reverse=True)
    hits = bundled_index.search("spiking neural networks", 10, mode="hybrid")
    assert scores == [round(h.score, 3) for h in hits] and [r[2] for r in rows] == [h.match for h in hits]
    assert [h.cosine for h in hits] != sorted((h.cosine for h in hits), reverse=True)  # why not the cosine
    assert [float(r[3]) for r in rows] == [round(h.cosine, 3) for h in hits]  # the band's own number beside it
    assert table.splitlines()[0].split()[:5] == ["#", "score", "band", "cosine", "id"]  # each number named
    assert table.strip().splitlines()[-1].startswith("score: the fused score")
    lexical = run_cli("search", "spiking neural networks", "-k", "3", "--mode", "lexical", check=True).stdout
    assert lexical.strip().splitlines()[-1].startswith("score: the BM25 score")


def test_search_shows_cosines_with_bands_and_says_when_nothing_is_close(bundled_index):
    found = run_cli("search", "continuous-time Markov chain diffusion", "-k", "2", check=True).stdout
    assert found.splitlines()[1].split()[2] in ("close", "related") and "no close match" not in found
    nothing = run_cli("search", "chocolate cake recipe with strawberries", "-k", "3", check=True).stdout
    assert "no close match" in nothing and all(line.split()[2] == "distant" for line in nothing.splitlines()[1:4])


@pytest.mark.parametrize("args, message", [
    (["search", "", "--index", "{index}"], "empty query"),
    (["search", "x", "--index", "{root}"], "not an embedsearch index"),
    (["similar", "ghost", "--index", "{index}"], "no document with id 'ghost'"),
    (["build", "{root}/bad.jsonl", "--index", "{index}"], "bad.jsonl:2: invalid JSON"),
    (["build", "{root}/missing.jsonl", "--index", "{index}"], "missing.jsonl: no such file"),
    (["remove", "ghost", "--index", "{index}"], "no document with id 'ghost'"),
    (["dedup", "--index", "{index}", "--csv", "{root}/no/such/dir/pairs.csv"], "no/such/dir does not exist"),
    (["search", "x", "--index", "{index}", "--filter", "year>=2020"], "filter on unknown field 'year'"),
    (["search", "x", "--index", "{index}", "-k", "0"], "Invalid value for '-k'"),
    (["search", "x", "--index", "{index}", "--bogus"], "No such option: --bogus"),
    (["serach", "x"], "No such command 'serach'"),
    (["map", "--index", "{index}", "--max-points", "0"], "--max-points must be at least 1"),
])
def test_bad_input_is_one_line_exit_2_and_changes_nothing(built, args, message):
    root, index = built
    (root / "bad.jsonl").write_text('{"id": "x", "text": "fine"}\n{"id": \n')
    before = (index / "manifest.json").read_text()
    result = run_cli(*[a.format(root=root, index=index) for a in args])
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], result.stderr
    assert (index / "manifest.json").read_text() == before


def test_output_piped_into_head_stops_quietly(bundled_index):
    import subprocess
    import sys

    command = [sys.executable, "-m", "embedsearch", "search", "graph", "--index", str(bundled_index.path), "-k", "57",
               "--json"]  # about 90 kB: more than a pipe holds, so the writer sees the pipe close
    piped = subprocess.run(f"{' '.join(command)} | head -c 1", shell=True, capture_output=True, text=True)
    assert piped.stdout == "{" and "error" not in piped.stderr and "Traceback" not in piped.stderr


def test_skip_invalid_reports_and_continues(built, tmp_path):
    root, _ = built
    (root / "bad.jsonl").write_text('{"id": "x", "text": "fine text here"}\n{"id": \n')
    result = run_cli("build", str(root / "bad.jsonl"), "--index", str(tmp_path / "i"), "--skip-invalid",
                     "--model", "hashing-384")
    assert result.returncode == 0, result.stderr
    assert "skipped 1 invalid record" in result.stderr and "bad.jsonl:2" in result.stderr


def _help_screen(*args: str) -> str:
    import os
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-m", "embedsearch", *args, "--help"], capture_output=True, text=True,
                            env={**os.environ, "COLUMNS": "400"})
    assert result.returncode == 0, result.stderr
    return " ".join(result.stdout.replace("│", " ").split())


def test_help_shows_every_install_hint_with_its_extra_and_no_markup_quotes():
    """Every ``pip install 'embedsearch[EXTRA]'`` the commands' help strings hold is on the screen intact."""
    import re

    from embedsearch.cli import app
    from typer.main import get_command

    group = get_command(app)
    hint = re.compile(r"pip install 'embedsearch\[[a-z]+\]'")
    seen = 0
    for name, command in group.commands.items():
        texts = [command.help or ""] + [getattr(p, "help", None) or "" for p in command.params]
        wanted = {h for t in texts for h in hint.findall(t)}
        if not wanted:
            continue
        screen = _help_screen(name)
        assert "``" not in screen, (name, screen)
        for h in wanted:
            seen += 1
            assert h in screen, (name, h, screen)
    assert seen >= 6  # --engine on the Ray-capable commands, serve's two extras


def test_help_lists_commands_in_the_order_a_newcomer_needs_them():
    import os
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "embedsearch", "--help"], capture_output=True, text=True,
                         env={**os.environ, "COLUMNS": "200"}).stdout
    headings = [line.split("─ ", 1)[1].split(" ─")[0] for line in out.splitlines() if line.startswith("╭─ ")]
    assert headings == ["Options", "Build and search", "Maintenance", "Topics", "Duplicates", "Reviewers", "Serve"]
    names = [line.split()[1] for line in out.splitlines() if line.startswith("│ ") and line.split()[1][0].isalpha()]
    assert names[:3] == ["build", "search", "similar"] and names[-1] == "serve", names


def test_running_out_of_memory_is_one_line_exit_2_and_writes_nothing(tmp_path):
    """A real process under an address-space limit a little above what a small run needs: the large run's
    allocation fails and the command says so instead of a traceback."""
    import resource

    import numpy as np

    def scores(path, n, m, k):
        rng = np.random.default_rng(0)
        with path.open("w") as fh:
            fh.write("submission,reviewer,score\n")
            for i in range(n):
                fh.writelines(f"s{i},r{j},{v:.4f}\n" for j, v in zip(rng.choice(m, k, replace=False), rng.random(k)))
        return path

    peak = ("import sys\nsys.argv = ['embedsearch'] + sys.argv[1:]\nfrom embedsearch.cli import main\ntry:\n    main()\n"
            "finally:\n    print('VmPeak', next(l for l in open('/proc/self/status') if l.startswith('VmPeak'))"
            ".split()[1], file=sys.stderr)")

    def run(path, out, limit=None):
        pre = (lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit))) if limit else None
        return subprocess.run([sys.executable, "-c", peak, "assign", "--scores", str(path), "--max-load", "40",
                               "--out", str(out)], capture_output=True, text=True, preexec_fn=pre, cwd=REPO)

    small = run(scores(tmp_path / "small.csv", 20, 10, 5), tmp_path / "small_out.csv")
    assert small.returncode == 0, small.stderr
    needed = int(small.stderr.split("VmPeak")[-1].split()[0]) * 1024
    out = tmp_path / "big_out.csv"
    big = run(scores(tmp_path / "big.csv", 4000, 1000, 100), out, int(needed * 1.05))
    assert big.returncode == 2 and "error: out of memory; nothing was written" in big.stderr, big.stderr[-500:]
    assert "Traceback" not in big.stderr and not out.exists()
