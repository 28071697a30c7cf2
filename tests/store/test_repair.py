"""``check --repair`` makes again what an index can derive (postings, the vector index, ids, deletion files, the
generation pointer) from what it still holds, commits it as a new version, and says what it cannot mend; the
answers after a repair are those before the damage, on an index and on a cluster; a SIGKILL mid-repair leaves
the index as it was or repaired."""

from __future__ import annotations

import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import REPO, run_cli
from test_check import report, zero_numbers

from embedsearch import Index

QUERIES = ['"neural networks"', "graph neural networks for molecules", "diffusion models year>=2024"]


def answers(path: Path) -> list:
    """What a user reads: a phrase's set, a hybrid top 10 with its scores, a filtered search, a listing."""
    index = Index.load(path)
    return [[(h.id, round(h.score, 5)) for h in index.find(q, 10)] for q in QUERIES] + \
        [[h.id for h in index.find("molecules", 10, filters=["year=2024"])]]


def damage(root: Path) -> list[str]:
    """A deletion file and the word postings of one segment with their numbers zeroed; the names damaged."""
    deletes = next((root / "deletes").glob("*.npy")) if (root / "deletes").is_dir() else None
    rows = next(f for f in root.glob("segments/*/words/rows.npy") if f.stat().st_size > 128)
    for file in [f for f in (deletes, rows) if f is not None]:
        zero_numbers(file)
    return [f.name for f in (deletes, rows) if f is not None]


def test_repair_brings_back_the_answers_of_before_the_damage(every_kind, tmp_path):
    copy = tmp_path / "idx"
    shutil.copytree(every_kind, copy)
    before = answers(copy)
    damaged = damage(copy)
    refused = run_cli("search", "graph neural networks", "--index", str(copy))
    assert refused.returncode == 3 and "check --repair" in refused.stderr
    done = run_cli("check", "--repair", "--index", str(copy))
    assert done.returncode == 0, done.stderr
    assert all(any(name in line for line in done.stdout.splitlines() if line.startswith("repaired")) for name in damaged), \
        done.stdout
    assert "healthy" in done.stdout and report(copy) == ([], 0)
    assert answers(copy) == before
    again = run_cli("check", "--repair", "--index", str(copy), check=True)
    assert "nothing to repair" in again.stdout


def test_repair_of_a_two_shard_cluster(every_kind, tmp_path):
    cluster = Index.load(every_kind).split(tmp_path / "cluster", 2)
    cluster.remove(["more-2"])
    before = answers(cluster.path)
    for shard in sorted((cluster.path / "shards").iterdir()):
        rows = next(f for f in shard.glob("segments/*/words/rows.npy") if f.stat().st_size > 128)
        zero_numbers(rows)
    assert run_cli("search", '"neural networks"', "--index", str(cluster.path)).returncode == 3
    done = run_cli("check", "--repair", "--index", str(cluster.path))
    assert done.returncode == 0 and done.stdout.count("repaired:") >= 2, done.stdout + done.stderr
    assert answers(cluster.path) == before


def test_what_cannot_be_made_again_is_named_with_exit_3(every_kind, tmp_path):
    copy = tmp_path / "idx"
    shutil.copytree(every_kind, copy)
    documents = next(copy.glob("segments/*/documents.jsonl"))
    data = bytearray(documents.read_bytes())
    data[len(data) // 2] ^= 0xFF
    documents.write_bytes(bytes(data))
    done = run_cli("check", "--repair", "--index", str(copy))
    assert done.returncode == 3 and "documents.jsonl" in done.stderr and "more.jsonl" in done.stderr, done.stderr


def test_a_damaged_generation_pointer_is_written_again(every_kind, tmp_path):
    copy = tmp_path / "idx"
    shutil.copytree(every_kind, copy)
    (copy / "generations" / "latest.json").write_text('{"generation": 1}')
    assert report(copy)[1] == 3
    done = run_cli("check", "--repair", "--index", str(copy))
    assert done.returncode == 0 and "latest.json" in done.stdout, done.stdout + done.stderr
    assert report(copy) == ([], 0)


def test_a_repair_killed_at_any_moment_leaves_the_index_as_it_was_or_repaired(every_kind, tmp_path):
    """Real processes, SIGKILL at random moments of a repair: each time ``check`` finds the same damage or
    none, never more; a last repair then finishes it."""
    copy = tmp_path / "idx"
    shutil.copytree(every_kind, copy)
    before = answers(copy)
    damage(copy)
    damaged, _ = report(copy)
    rng = random.Random(7)
    outcomes = set()
    for trial in range(6):
        proc = subprocess.Popen([sys.executable, "-m", "embedsearch", "check", "--repair", "--index", str(copy)],
                                cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.3, 2.5))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        lines, code = report(copy)
        assert code in (0, 3) and set(lines) <= set(damaged), lines
        outcomes.add(code)
        if code == 0:
            break
    assert run_cli("check", "--repair", "--index", str(copy)).returncode == 0
    assert report(copy) == ([], 0) and answers(copy) == before


def test_an_index_being_served_is_repaired_in_place_and_the_service_follows(every_kind, tmp_path):
    """Damage on disk under a running service (which refuses to start on a damaged index, and keeps what it has
    read): ``check --repair`` from another process commits the mend as a new generation, the service moves to
    it, and answers as before the damage from the repaired files."""
    from fastapi.testclient import TestClient

    from embedsearch.serve.app import create_app
    from embedsearch.serve.settings import ServeSettings

    copy = tmp_path / "idx"
    shutil.copytree(every_kind, copy)
    asked = [{"q": q, "k": 10} for q in ('"neural networks"', "graph neural networks for molecules")]
    with TestClient(create_app(copy, ServeSettings(topics=False))) as client:
        before = [[h["id"] for h in client.get("/search", params=a).json()["hits"]] for a in asked]
        generation = client.get("/info").json()["generation"]
        damage(copy)
        assert run_cli("check", "--repair", "--index", str(copy)).returncode == 0
        deadline = time.monotonic() + 30  # the service follows new generations every few seconds
        while client.get("/info").json()["generation"] == generation and time.monotonic() < deadline:
            time.sleep(0.2)
        assert client.get("/info").json()["generation"] == generation + 1
        assert [[h["id"] for h in client.get("/search", params=a).json()["hits"]] for a in asked] == before
    assert report(copy) == ([], 0)
