"""The segmented index: adds write a segment, removes a deletion file, generations are read whole, merges keep
results equal, and real writer processes (some killed with SIGKILL) never lose or corrupt a commit."""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, run_cli, write_sealed
from segment_worker import make_docs, vector_of

from embedsearch import Index, InputError
from embedsearch.retrieval.bm25 import of as bm25_of
from embedsearch.retrieval.dense import dense
from embedsearch.retrieval.filters import Filter, allowed
from embedsearch.store.settings import LexicalSettings, MergePolicy, StoreSettings

WORKER = str(Path(__file__).resolve().parents[1] / "segment_worker.py")
NO_MERGES = StoreSettings(merge=MergePolicy(segments_per_tier=1_000, max_deleted_share=1.0))


@pytest.fixture(scope="module")
def model_entry(bundled_index):
    return bundled_index.manifest.model


def new_index(path: Path, model_entry, count: int = 100, storage: StoreSettings = NO_MERGES) -> Index:
    docs, vectors = make_docs(0, count)
    return Index.from_embeddings(docs, vectors, path, model_entry, storage=storage)


def files_of(path: Path) -> dict[str, str]:
    return {p.relative_to(path).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(path.rglob("*")) if p.is_file() and not p.name.startswith(".lock")}


def same_rows(a: list[list[tuple[int, float]]], b: list[list[tuple[int, float]]]) -> bool:
    """The same rows in the same order, cosines equal up to float32 summation order."""
    return all([r for r, _ in x] == [r for r, _ in y] and np.allclose([c for _, c in x], [c for _, c in y], atol=1e-6)
               for x, y in zip(a, b, strict=True))


def same_hits(a, b) -> bool:
    return [h.id for h in a] == [h.id for h in b] and np.allclose([h.score for h in a], [h.score for h in b],
                                                                    atol=1e-6)


def live_ids(index: Index) -> list[str]:
    return list(index.refresh().documents.ids)


# what a write touches ------------------------------------------------------------------------------------------
def test_add_writes_one_new_segment_and_remove_one_deletion_file(tmp_path, model_entry):
    index = new_index(tmp_path / "idx", model_entry)
    before = files_of(index.path)
    docs, vectors = make_docs(100, 5)
    index.add_embedded(docs, vectors)
    after = files_of(index.path)
    latest = "generations/latest.json"  # the one file each commit replaces: the number of the last commit
    assert json.loads((index.path / latest).read_text())["generation"] == index.generation
    assert {k: v for k, v in after.items() if k in before and k != latest} == \
        {k: v for k, v in before.items() if k != latest}  # nothing committed is rewritten
    added = {k.split("/")[1] for k in set(after) - set(before) if k.startswith("segments/")}
    assert len(added) == 1 and set(after) - set(before) - {k for k in after if k.startswith("segments/")} == \
        {"generations/2.json"}
    index.remove(["p3", "p101"])
    changed = set(files_of(index.path)) - set(after)
    assert changed == {"generations/3.json"} | {k for k in changed if k.startswith("deletes/")}
    assert len([k for k in changed if k.startswith("deletes/")]) == 2  # one per touched segment
    assert len(index) == 103 and index.generation == 3


def test_an_add_with_vectors_of_the_wrong_shape_or_a_repeated_id_writes_nothing(tmp_path, model_entry):
    index = new_index(tmp_path / "idx", model_entry)
    before = files_of(index.path)
    docs, vectors = make_docs(100, 5)
    for bad, phrase in [((docs, vectors[:4]), "5 documents need 5 vectors"), ((docs, vectors[:, :10]), "dimension 384"),
                        ((docs[:2] + docs[:1], vectors[:3]), "duplicate id .p100.")]:
        with pytest.raises(InputError, match=phrase):
            index.add_embedded(*bad)
    assert files_of(index.path) == before and len(index.refresh()) == 100


def test_deleted_documents_never_appear_and_k_results_still_come(tmp_path, model_entry):
    index = new_index(tmp_path / "idx", model_entry, 60)
    query = vector_of("p0")[None, :]
    nearest = [index.documents.ids[r] for r, _ in dense(index.snapshot, query, 10)[0]]
    index.remove(nearest[:5])
    rows = dense(index.snapshot, query, 10)[0]
    assert len(rows) == 10 and not set(index.documents.ids[r] for r, _ in rows) & set(nearest[:5])
    assert [index.documents.ids[r] for r, _ in rows][:5] == nearest[5:10]
    everything = {index.documents.ids[r] for r, _ in dense(index.snapshot, query, 60)[0]}
    assert len(everything) == 55 and not everything & set(nearest[:5])
    assert nearest[0] not in {h.id for h in index.search(nearest[0], 60, mode="lexical")}
    assert not {h.id for h in index.search("w0x1", 60, mode="lexical", filters=["year>=2000"])} & set(nearest[:5])
    with pytest.raises(InputError, match=f"no document with id '{nearest[0]}'"):
        index.remove([nearest[0]])
    docs, vectors = make_docs(int(nearest[0][1:]), 1)
    index.add_embedded(docs, vectors)  # a deleted id may come back
    assert nearest[0] in index.documents.row_of
    with pytest.raises(InputError, match="already in"):
        index.add_embedded(docs, vectors)


# equivalence with a fresh build ------------------------------------------------------------------------------
@pytest.mark.parametrize("storage", [NO_MERGES, StoreSettings(merge=MergePolicy(segments_per_tier=3))],
                         ids=["no-merges", "tiered-merges"])
def test_adds_and_removes_equal_a_fresh_build(tmp_path, model_entry, storage):
    import bm25s

    from embedsearch.store import lexical as lex

    index = new_index(tmp_path / "idx", model_entry, 80, storage)
    rng = random.Random(3)
    next_id = 80
    for step in range(14):
        if step % 3 == 2:
            index.remove(rng.sample(live_ids(index), rng.randint(1, 8)))
        else:
            size = rng.randint(1, 25)
            index.add_embedded(*make_docs(next_id, size))
            next_id += size
    if storage is NO_MERGES:
        assert len(index.snapshot.segments) == 11 and sum(e.deleted for e in index.snapshot.generation.segments) > 0
    else:
        assert index.generation > 15  # merges committed generations of their own
    ids = live_ids(index)
    docs, _ = make_docs(0, next_id)
    kept = [d for d in docs if d.id in set(ids)]
    assert [d.id for d in kept] == ids  # corpus order survives adds, removes and merges
    fresh = Index.from_embeddings(kept, np.stack([vector_of(d.id) for d in kept]), tmp_path / "fresh", model_entry)
    tokenizer = lex.Tokenizer.of(LexicalSettings())
    reference = bm25s.BM25(k1=1.2, b=0.6, method="lucene")
    reference.index([lex.doc_tokens(d, tokenizer, LexicalSettings()) for d in kept], show_progress=False)
    for query in ["w3x1 w3x7", "w0x2 w11x24 w5x5 w5x5", "p17 w2x3", "nothing"]:
        scores = bm25_of(index.snapshot).scores(query)
        np.testing.assert_allclose(scores, bm25_of(fresh.snapshot).scores(query), rtol=1e-6, atol=1e-7)
        if tokenizer(query):
            np.testing.assert_allclose(scores, reference.get_scores(tokenizer(query)), rtol=1e-5, atol=1e-6)
    for seed in ("p5", "p81", "p999"):
        query = vector_of(seed)[None, :]
        assert same_rows(dense(index.snapshot, query, 15), dense(fresh.snapshot, query, 15))
        assert same_hits(index.search("w3x1", 15, mode="lexical"), fresh.search("w3x1", 15, mode="lexical"))
        assert same_hits(index.search("w4x4", 10, filters=["year>=2003"], mode="lexical"),
                         fresh.search("w4x4", 10, filters=["year>=2003"], mode="lexical"))
        kept = allowed(index.snapshot, [Filter.parse("year<=2002")])
        assert same_rows(dense(index.snapshot, query, 5, allowed=kept), dense(fresh.snapshot, query, 5, allowed=kept))
    index.compact()
    assert len(index.snapshot.segments) == 1 and index.info()["deleted"] == 0
    assert same_rows(dense(index.snapshot, vector_of("p5")[None, :], 15), dense(fresh.snapshot, vector_of("p5")[None, :], 15))
    np.testing.assert_allclose(bm25_of(index.snapshot).scores("w3x1 w3x7"), bm25_of(fresh.snapshot).scores("w3x1 w3x7"), rtol=1e-6)


def test_hybrid_search_and_topics_on_segments_equal_one_segment(bundled_index, bundled_docs, tmp_path):
    vectors = np.asarray(bundled_index.embeddings)
    entry = bundled_index.manifest.model
    split = Index.from_embeddings(bundled_docs[:30], vectors[:30], tmp_path / "split", entry, storage=NO_MERGES)
    split.add_embedded(bundled_docs[30:50], vectors[30:50])
    split.add_embedded(bundled_docs[50:], vectors[50:])
    split.remove([bundled_docs[3].id, bundled_docs[40].id])
    keep = [i for i in range(57) if i not in (3, 40)]
    whole = Index.from_embeddings([bundled_docs[i] for i in keep], vectors[keep], tmp_path / "whole", entry)
    assert len(split.snapshot.segments) == 3
    for query in ["discrete diffusion language models", "robot manipulation policies"]:
        assert same_hits(split.search(query, 8), whole.search(query, 8))
    assert same_hits(split.similar(bundled_docs[10].id, 5), whole.similar(bundled_docs[10].id, 5))
    assert split.topics().assignments == whole.topics().assignments


def test_duplicates_across_segments_and_after_removal(tmp_path, model_entry):
    from embedsearch import Document

    index = new_index(tmp_path / "idx", model_entry, 40)
    original = index.documents.get([index.documents.row_of["p7"]])[0]
    index.add_embedded([Document("copy", original.text)], vector_of("p7")[None, :])
    groups = index.duplicates().groups
    assert [(g.kept, g.absorbed) for g in groups] == [("p7", ("copy",))]
    assert [(g.kept, g.absorbed) for g in index.duplicates(of=["copy"]).groups] == [("p7", ("copy",))]
    assert index.duplicates(of=["p3", "p20"]).groups == ()
    index.remove(["copy"])
    assert index.duplicates().groups == ()


def test_cli_add_checks_the_new_abstracts_for_duplicates(index_copy, bundled_docs, tmp_path):
    original = bundled_docs[9]
    source = tmp_path / "new.jsonl"
    source.write_text(json.dumps({"id": "resubmitted", "abstract": original.text.replace(". ", ". Indeed, ", 1)})
                      + "\n" + json.dumps({"id": "fresh", "abstract": "Coral reef bleaching under ocean warming."}) + "\n")
    refused = run_cli("add", str(source), "--index", str(index_copy.path), "--check-duplicates", "--json")
    assert refused.returncode == 2 and "nothing was added" in refused.stderr
    assert "--on-duplicate skip" in refused.stderr and "on_duplicate" not in refused.stderr  # the flag as typed
    pairs = [(p["a"], p["b"]) for g in json.loads(refused.stdout)["groups"] for p in g["pairs"]]
    assert pairs == [("resubmitted", original.id)]
    assert {"resubmitted", "fresh"}.isdisjoint(Index.load(index_copy.path).documents.row_of)
    result = run_cli("add", str(source), "--index", str(index_copy.path), "--check-duplicates", "--on-duplicate",
                     "skip", "--json", check=True)
    assert [g["absorbed"] for g in json.loads(result.stdout)["groups"]] == [["resubmitted"]]
    assert "skipped 1 duplicates" in result.stderr
    present = Index.load(index_copy.path).documents.row_of
    assert "fresh" in present and "resubmitted" not in present


def test_the_merge_policy_merges_small_neighbours_and_never_too_many_rows():
    from types import SimpleNamespace

    from embedsearch.store.merges import plan
    from embedsearch.store.generation import SegmentEntry

    def planned(rows, deleted=None, **policy):
        entries = [SegmentEntry(f"s{i}", r, "flat", "", deleted=(deleted or {}).get(i, 0)) for i, r in enumerate(rows)]
        return plan(SimpleNamespace(generation=SimpleNamespace(segments=entries)), MergePolicy(**policy))

    assert planned([100_000] + [1] * 7) == []  # seven small ones: not yet
    assert planned([100_000] + [1] * 8) == [list(range(1, 9))]  # eight neighbours of one tier
    assert planned([250_000] * 40) == [] and planned([250_000] * 40, max_merged_rows=2_000_000) == []
    assert planned([250_000] * 8, max_merged_rows=2_000_000) == [list(range(8))]
    assert planned([5_000, 10], deleted={0: 2_000}) == [[0]]  # over a quarter deleted: rewritten
    assert planned([5_000, 10], deleted={0: 2_000}, max_merged_rows=1_000) == []


# readers see one generation ----------------------------------------------------------------------------------
def test_an_open_index_keeps_its_generation_until_refresh(tmp_path, model_entry):
    index = new_index(tmp_path / "idx", model_entry, 30)
    other = Index.load(index.path)
    other.add_embedded(*make_docs(30, 3))
    assert len(index) == 30 and index.has_newer() and "p31" not in index.documents.row_of
    assert index.search("p31", 3, mode="lexical") == []
    index.refresh()
    assert len(index) == 33 and not index.has_newer() and index.search("p31", 1, mode="lexical")[0].id == "p31"


def test_a_reader_process_sees_consistent_answers_during_20_commits(tmp_path, model_entry):
    """The reader checks each of the 21 generations before the next commit is made (no clock: it says when)."""
    index = new_index(tmp_path / "idx", model_entry, 200)
    stop = tmp_path / "stop"
    reader = subprocess.Popen([sys.executable, WORKER, "read", str(index.path), str(stop)], stdout=subprocess.PIPE,
                              text=True, cwd=REPO)
    assert reader.stdout.readline().strip() == "ready"
    guard = threading.Timer(300, reader.kill)  # against a hang only: a reader that stops talking is killed
    guard.start()

    def checked(generation: int) -> None:
        while (line := reader.stdout.readline()).startswith("checked "):
            if int(line.split()[1]) >= generation:
                return
        raise AssertionError(f"the reader stopped before generation {generation}: {line}")

    checked(index.generation)
    for commit in range(20):
        if commit % 4 == 3:
            index.remove([f"p{commit}", f"p{commit + 100}"])
        else:
            index.add_embedded(*make_docs(1_000 + 10 * commit, 10))
        checked(index.generation)
    stop.touch()
    out, _ = reader.communicate(timeout=120)
    guard.cancel()
    assert out.startswith("ok "), out
    checks, generations = map(int, out.split()[1:3])
    assert generations == 21 and checks >= 21, out


# writers: the lock, concurrency, crashes -------------------------------------------------------------------------
def test_four_writer_processes_lose_nothing(tmp_path, model_entry):
    index = new_index(tmp_path / "idx", model_entry, 10)
    writers = [subprocess.Popen([sys.executable, WORKER, "add", str(index.path), str(1_000 + 250 * w), "250", "50"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
               for w in range(4)]
    for process in writers:
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, err
        assert out.count("committed") == 5
    assert set(live_ids(index)) == {f"p{i}" for i in range(10)} | {f"p{i}" for i in range(1_000, 2_000)}
    assert index.check(deep=True) == []


def test_concurrent_cli_adds_each_report_their_own_count(tmp_path, model_entry):
    index = new_index(tmp_path / "idx", model_entry, 10)
    sources = []
    for w in range(4):
        sources.append(tmp_path / f"batch{w}.jsonl")
        sources[-1].write_text("".join(json.dumps({"id": f"b{w}-{i}", "abstract": f"w{w}x{i} w{w}x{i + 1}"}) + "\n"
                                       for i in range(50)))
    adds = [subprocess.Popen([sys.executable, "-m", "embedsearch", "add", str(s), "--index", str(index.path)],
                             stderr=subprocess.PIPE, text=True, cwd=REPO) for s in sources]
    said = [p.communicate(timeout=300)[1] for p in adds]
    assert all(p.returncode == 0 for p in adds), said
    assert all("added 50 documents" in err for err in said), said
    assert len(Index.load(index.path)) == 210


def test_second_writer_fails_fast_or_waits_and_a_dead_holder_frees_the_lock(tmp_path, model_entry):
    index = new_index(tmp_path / "idx", model_entry, 10)
    holder = subprocess.Popen([sys.executable, WORKER, "hold", str(index.path), "60"], stdout=subprocess.PIPE,
                              text=True, cwd=REPO)
    assert holder.stdout.readline().strip() == "holding"
    before = files_of(index.path)
    refused = run_cli("remove", "p1", "--index", str(index.path), "--no-wait")
    assert refused.returncode == 2 and f"pid {holder.pid}" in refused.stderr and "a test" in refused.stderr
    assert files_of(index.path) == before
    waiting = subprocess.Popen([sys.executable, "-m", "embedsearch", "remove", "p1", "--index", str(index.path)],
                               stderr=subprocess.PIPE, text=True, cwd=REPO)
    time.sleep(4)
    assert waiting.poll() is None  # still waiting for the holder
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    _, err = waiting.communicate(timeout=60)
    assert waiting.returncode == 0 and "waiting for pid" in err and "removed 1 documents" in err
    assert "p1" not in live_ids(index)


def test_writers_killed_at_random_points_never_corrupt_or_lose_a_commit(tmp_path, model_entry):
    often = StoreSettings(merge=MergePolicy(segments_per_tier=2, floor_rows=5), grace_seconds=0)
    index = new_index(tmp_path / "idx", model_entry, 20, often)
    rng = random.Random(11)
    committed: set[str] = {f"p{i}" for i in range(20)}
    attempted = set(committed)
    start, let_through = 100, 0
    for kill in range(20):
        worker = subprocess.Popen([sys.executable, WORKER, "add", str(index.path), str(start), "60", "2"],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=REPO)
        assert worker.stdout.readline().strip() == "ready"
        waits = rng.randint(0, 3)  # commits to let through before the kill, then a random point in the next
        let_through += waits
        seen = [worker.stdout.readline() for _ in range(waits)]
        time.sleep(rng.uniform(0, 0.3))
        worker.send_signal(signal.SIGKILL)
        out, _ = worker.communicate()
        out = "".join(seen) + out
        assert len(out.splitlines()) >= waits
        attempted |= {f"p{i}" for i in range(start, start + 60)}
        for line in out.splitlines():
            first, last = map(int, line.split()[1:])
            committed |= {f"p{i}" for i in range(first, last + 1)}
        start += 60
        reopened = Index.load(index.path)
        assert reopened.check(deep=True) == [], f"kill {kill}"
        present = set(reopened.documents.ids)
        assert committed <= present <= attempted, f"kill {kill}"
    assert len(committed) >= 20 + 2 * let_through  # every commit a worker reported before its kill survived


# damage and bad input ----------------------------------------------------------------------------------------
def segment_file(index: Index, name: str) -> Path:
    return index.snapshot.segments[-1].folder / name


@pytest.mark.parametrize("damage, phrase, writers_see_it", [
    (lambda i: os.truncate(segment_file(i, "embeddings.npy"), 100), "embeddings.npy", True),
    (lambda i: segment_file(i, "lexical/tf.npy").write_bytes(segment_file(i, "lexical/tf.npy").read_bytes()[:-4]
                                                            + b"\x00\x00\x80\x7f"), "tf.npy", False),
    (lambda i: __import__("shutil").rmtree(i.snapshot.segments[-1].folder), "segment.json: missing", True),
    (lambda i: (i.path / "generations" / "2.json").write_text("{"), "2.json", True),
], ids=["truncated", "flipped-same-size", "segment-missing", "garbled-generation"])
def test_a_damaged_segment_is_one_line_and_exit_3(tmp_path, model_entry, damage, phrase, writers_see_it):
    index = new_index(tmp_path / "idx", model_entry, 20)
    index.add_embedded(*make_docs(20, 5))
    damage(index)
    before = files_of(index.path)
    checked = run_cli("check", "--index", str(index.path))
    assert checked.returncode == 3 and phrase in checked.stderr and "Traceback" not in checked.stderr
    # writers compare sizes before building on a generation; bytes flipped in place are found by check's hashes
    for args in (["remove", "p2"], ["compact"]) if writers_see_it else ():
        result = run_cli(*args, "--index", str(index.path))
        lines = result.stderr.strip().splitlines()
        assert result.returncode == 3 and len(lines) == 1 and phrase in lines[0], result.stderr
    assert files_of(index.path) == before


def flip_a_byte(file: Path) -> None:
    data = bytearray(file.read_bytes())
    data[len(data) // 2] ^= 0x20
    file.write_bytes(bytes(data))


@pytest.mark.parametrize("name", ["documents.jsonl", "embeddings.npy", "lexical/tf.npy"])
def test_a_merge_refuses_a_segment_whose_bytes_changed_instead_of_laundering_it(tmp_path, model_entry, name):
    """Sizes match, so writers build on it; the merge re-hashes what it reads and refuses (exit 3, the file
    named, nothing written), and the damage stays visible to check. An automatic merge after an add is
    deferred with a warning: the add itself stands."""
    often = StoreSettings(merge=MergePolicy(segments_per_tier=2, floor_rows=5))
    index = new_index(tmp_path / "idx", model_entry, 20, often)
    index.remove([index.documents.ids[5]])  # a deleted row: compact has a segment to rewrite
    flip_a_byte(index.snapshot.segments[0].folder / name)
    before = files_of(index.path)
    compacted = run_cli("compact", "--index", str(index.path))
    lines = compacted.stderr.strip().splitlines()
    assert compacted.returncode == 3 and len(lines) == 1 and name.split("/")[-1] in lines[0], compacted.stderr
    assert "merge was refused" in lines[0] and files_of(index.path) == before
    source = tmp_path / "more.jsonl"
    source.write_text(json.dumps({"id": "late", "abstract": "w1x1 w1x2 w1x3"}) + "\n")
    added = run_cli("add", str(source), "--index", str(index.path))
    assert added.returncode == 0 and "merge of" in added.stderr and "deferred" in added.stderr, added.stderr
    assert "late" in Index.load(index.path).documents.row_of
    checked = run_cli("check", "--index", str(index.path))
    assert checked.returncode == 3 and name.split("/")[-1] in checked.stderr


def test_a_vanished_newest_commit_is_damage_not_a_silent_rollback(tmp_path, model_entry):
    index = new_index(tmp_path / "idx", model_entry, 20)
    index.add_embedded(*make_docs(20, 5))
    index.remove(["p3"])
    newest = index.generation
    (index.path / "generations" / f"{newest}.json").unlink()
    source = tmp_path / "more.jsonl"
    source.write_text(json.dumps({"id": "late", "abstract": "w1x1 w1x2"}) + "\n")
    for args in (["check"], ["search", "w1x1", "--mode", "lexical"], ["add", str(source)]):
        result = run_cli(*args, "--index", str(index.path))
        lines = result.stderr.strip().splitlines()
        assert result.returncode == 3 and len(lines) == 1, result.stderr
        assert f"generation {newest}, the newest commit, is missing" in lines[0] and "roll back" in lines[0]
    (index.path / "generations" / "latest.json").unlink()  # the hint gone too: the deletion file still tells
    checked = run_cli("check", "--index", str(index.path))
    assert checked.returncode == 3 and f"written by generation {newest}, after the newest" in checked.stderr


def test_a_gap_in_the_generations_is_reported(tmp_path, model_entry):
    index = new_index(tmp_path / "idx", model_entry, 20)
    for start in (20, 30):
        index.add_embedded(*make_docs(start, 2))
    (index.path / "generations" / f"{index.generation - 1}.json").unlink()
    checked = run_cli("check", "--index", str(index.path))
    assert checked.returncode == 3 and f"generation {index.generation - 1} is missing between" in checked.stderr


def test_lists_nested_objects_and_whole_and_decimal_numbers_survive_merges(tmp_path, model_entry):
    from embedsearch import Document

    index = new_index(tmp_path / "idx", model_entry, 10)
    batches = [[Document("m1", "w1x1 w1x2", metadata={"tags": ["a", "b"], "year": 2020})],
               [Document("m2", "w2x1 w2x2", metadata={"year": None, "note": "twenty", "extra": {"k": [1, 2]}})],
               [Document("m3", "w3x1 w3x2", metadata={"tags": [], "year": 2.5})]]
    for docs in batches:
        index.add_embedded(docs, np.stack([vector_of(d.id) for d in docs]))
    run_cli("compact", "--index", str(index.path), check=True)
    merged = Index.load(index.path)
    assert len(merged.snapshot.segments) == 1 and merged.check(deep=True) == []
    got = {d.id: d.metadata for d in merged.documents.get([merged.documents.row_of[i] for i in ("m1", "m2", "m3")])}
    assert got == {d.id: d.metadata for docs in batches for d in docs}
    found = merged.search("w1x1 w2x1 w3x1", 5, mode="lexical", filters=["tags=a"])
    assert [h.id for h in found] == ["m1"]
    found = merged.search("w1x1 w2x1 w3x1", 5, mode="lexical", filters=["year>=2"])
    assert sorted(h.id for h in found) == ["m1", "m3"]
    assert merged.snapshot.field_kinds == {"tags": "list of text", "year": "number", "note": "text",
                                           "extra": "text"}


def test_a_missing_manifest_beside_segments_is_damage(tmp_path, model_entry):
    index = new_index(tmp_path / "idx", model_entry, 10)
    (index.path / "manifest.json").unlink()
    for args in (["check"], ["info"], ["search", "w1x1"]):
        result = run_cli(*args, "--index", str(index.path))
        assert result.returncode == 3 and "manifest.json: missing, though" in result.stderr, result.stderr


def test_an_add_may_not_turn_a_numeric_field_into_text(tmp_path, model_entry):
    from embedsearch import Document

    index = new_index(tmp_path / "idx", model_entry, 10)  # every document has a numeric "year"
    source = tmp_path / "more.jsonl"
    source.write_text(json.dumps({"id": "ok", "abstract": "w1x1 w1x2", "year": "2021"}) + "\n"
                      + json.dumps({"id": "bad", "abstract": "w2x1 w2x2", "year": "twenty"}) + "\n")
    before = files_of(index.path)
    refused = run_cli("add", str(source), "--index", str(index.path))
    lines = refused.stderr.strip().splitlines()
    assert refused.returncode == 2 and len(lines) == 1 and f"{source}:2" in lines[0], refused.stderr
    assert "'year'" in lines[0] and "'twenty'" in lines[0] and files_of(index.path) == before
    skipped = run_cli("add", str(source), "--index", str(index.path), "--skip-invalid", check=True)
    assert f"{source}:2" in skipped.stderr and "added 1 documents" in skipped.stderr
    with pytest.raises(InputError, match="document 'lib': field 'year' holds numbers in this index"):
        index.add([Document("lib", "w3x1", metadata={"year": "soon"})])
    assert [h.id for h in Index.load(index.path).search("w1x1 w1x2", 3, mode="lexical", filters=["year>=2021"])][:1] \
        == ["ok"]


@pytest.mark.parametrize("position", [0, 1, 2, 3])
def test_a_damaged_offset_table_is_named_not_an_os_error(tmp_path, model_entry, position):
    index = new_index(tmp_path / "idx", model_entry, 20)
    offsets = index.snapshot.segments[0].folder / "documents.offsets.npy"
    table = np.load(offsets)
    table[[3, 10, 0, 19][position]] = [-5, 10**12, 7, table[18]][position]  # negative, huge, off zero, flat
    np.save(offsets, table)
    for args in (["search", "w1x1", "--mode", "lexical"], ["similar", "p4"]):
        result = run_cli(*args, "--index", str(index.path))
        lines = result.stderr.strip().splitlines()
        assert result.returncode == 3 and len(lines) == 1 and "documents.offsets.npy" in lines[0], result.stderr


def test_compact_over_a_damaged_superseded_generation_commits_and_removes_nothing_it_cannot_read(
        tmp_path, model_entry):
    index = new_index(tmp_path / "idx", model_entry, 20, StoreSettings(merge=MergePolicy(segments_per_tier=1000)))
    index.add_embedded(*make_docs(20, 5))
    (index.path / "generations" / "1.json").write_text("{")  # superseded, kept for readers
    segments_before = {p.name for p in (index.path / "segments").iterdir()}
    compacted = run_cli("compact", "--index", str(index.path))
    assert compacted.returncode == 0, compacted.stderr
    reopened = Index.load(index.path)
    assert len(reopened.snapshot.segments) == 1 and len(reopened) == 25 and reopened.check(deep=True) == []
    assert segments_before <= {p.name for p in (index.path / "segments").iterdir()}


def test_cli_add_of_an_existing_id_and_remove_of_a_deleted_one_change_nothing(tmp_path, model_entry):
    index = new_index(tmp_path / "idx", model_entry, 10)
    index.remove(["p4"])
    before = files_of(index.path)
    again = run_cli("remove", "p4", "--index", str(index.path))
    assert again.returncode == 2 and "no document with id 'p4'" in again.stderr
    existing = tmp_path / "old.jsonl"
    existing.write_text(json.dumps({"id": "p5", "abstract": "w1x1 w1x2"}) + "\n")
    clash = run_cli("add", str(existing), "--index", str(index.path))
    assert clash.returncode == 2 and "'p5' is already in" in clash.stderr
    assert files_of(index.path) == before


def format_1(index: Index, old: Path) -> Path:
    """The files of a one-segment index laid out as format 1 (one folder rewritten whole)."""
    old.mkdir()
    segment = index.snapshot.segments[0].folder
    for name in ("documents.jsonl", "documents.offsets.npy", "ids.json", "embeddings.npy", "vectors.faiss",
                 "metadata.parquet"):
        (old / name).write_bytes((segment / name).read_bytes())
    manifest = {k: v for k, v in index.snapshot.manifest.to_json().items() if k != "store"}
    manifest["index"] = {**manifest["index"], "type": index.info()["index_type"]}
    (old / "manifest.json").write_text(json.dumps({**manifest, "format_version": 1, "documents": len(index)}))
    return old


@pytest.mark.parametrize("name, cut", [("embeddings.npy", 1000), ("documents.jsonl", 200)])
def test_an_upgrade_over_a_damaged_file_is_undone_and_says_which(tmp_path, model_entry, name, cut):
    old = format_1(new_index(tmp_path / "idx", model_entry, 30), tmp_path / "old")
    os.truncate(old / name, (old / name).stat().st_size - cut)
    before = files_of(old)
    result = run_cli("upgrade", "--index", str(old))
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 3 and len(lines) == 1, result.stderr
    assert str(old / name) in lines[0] and "tmp-upgrade" not in lines[0] and "undone" in lines[0]
    assert files_of(old) == before and sorted(p.name for p in old.iterdir()) == sorted(
        ["documents.jsonl", "documents.offsets.npy", "ids.json", "embeddings.npy", "vectors.faiss",
         "metadata.parquet", "manifest.json"])


def test_format_1_indexes_are_upgraded_in_place_without_re_embedding(tmp_path, model_entry):
    index = new_index(tmp_path / "idx", model_entry, 30)
    expected = index.search("w2x2 w2x5", 5, mode="lexical"), dense(index.snapshot, vector_of("p2")[None, :], 5)
    old = format_1(index, tmp_path / "old")
    segment = index.snapshot.segments[0].folder
    refused = run_cli("search", "w2x2", "--index", str(old))
    assert refused.returncode == 2 and "embedsearch upgrade" in refused.stderr
    embeddings = (old / "embeddings.npy").read_bytes()
    run_cli("upgrade", "--index", str(old), check=True)
    upgraded = Index.load(old)
    assert same_hits(upgraded.search("w2x2 w2x5", 5, mode="lexical"), expected[0])
    assert same_rows(dense(upgraded.snapshot, vector_of("p2")[None, :], 5), expected[1])
    assert upgraded.snapshot.segments[0].embeddings.tobytes() == np.load(segment / "embeddings.npy").tobytes()
    assert (upgraded.snapshot.segments[0].folder / "embeddings.npy").read_bytes() == embeddings
    assert not (old / "documents.jsonl").exists() and upgraded.check(deep=True) == []


@pytest.mark.parametrize("edit, phrase", [
    (lambda m: m["index"]["settings"].update(index_typE=m["index"]["settings"].pop("index_type")),
     "unknown key 'index.settings.index_typE'"),
    (lambda m: m["model"].pop("settings"), "key 'model.settings' is missing"),
    (lambda m: m["lexical"].update(k1="high"), "lexical holds a value this version cannot use"),
], ids=["renamed", "missing", "mistyped"])
def test_a_damaged_manifest_key_is_named_before_any_write(tmp_path, model_entry, edit, phrase):
    index = new_index(tmp_path / "idx", model_entry, 10)
    manifest = json.loads((index.path / "manifest.json").read_text())
    edit(manifest)
    (index.path / "manifest.json").write_text(json.dumps(manifest))
    before = files_of(index.path)
    source = tmp_path / "more.jsonl"
    source.write_text(json.dumps({"id": "late", "abstract": "w1x1 w1x2"}) + "\n")
    for args in (["check"], ["add", str(source)], ["compact"], ["remove", "p1"]):
        result = run_cli(*args, "--index", str(index.path))
        lines = result.stderr.strip().splitlines()
        assert result.returncode == 3 and len(lines) == 1 and phrase in lines[0], result.stderr
        assert "manifest.json" in lines[0] and "Traceback" not in result.stderr
    assert files_of(index.path) == before


def test_check_says_when_merges_are_pending(tmp_path, model_entry):
    index = new_index(tmp_path / "idx", model_entry, 10)
    for start in (10, 20):
        index.add_embedded(*make_docs(start, 3))
    healthy = json.loads(run_cli("check", "--index", str(index.path), "--json", check=True).stdout)
    assert healthy["merges_pending"] == 0
    manifest = json.loads((index.path / "manifest.json").read_text())
    manifest["store"]["merge"].update(segments_per_tier=2, floor_rows=5)  # a policy the segments now break
    write_sealed((index.path / "manifest.json"), manifest)
    result = run_cli("check", "--index", str(index.path), check=True)
    assert "healthy" in result.stdout and "merge(s) the merge policy asks for are pending" in result.stdout


def test_a_generation_entry_with_a_renamed_key_is_named(tmp_path, model_entry):
    index = new_index(tmp_path / "idx", model_entry, 10)
    file = index.path / "generations" / f"{index.generation}.json"
    generation = json.loads(file.read_text())
    generation["segments"][0]["rowz"] = generation["segments"][0].pop("rows")
    file.write_text(json.dumps(generation))
    for args in (["check"], ["search", "w1x1", "--mode", "lexical"], ["compact"]):
        result = run_cli(*args, "--index", str(index.path))
        lines = result.stderr.strip().splitlines()
        assert result.returncode == 3 and len(lines) == 1, result.stderr
        assert f"{file}: segment 0: key 'rows' is missing" in lines[0]


def test_a_superseded_snapshot_is_freed_at_once_when_the_index_moves_on(tmp_path, model_entry):
    """A snapshot's views (embeddings, documents) refer to it, never the other way round: no reference cycle
    keeps an old generation's vector indexes and mapped pages in memory until a garbage collection happens to
    run (a service moves to a new generation on every commit)."""
    import gc
    import weakref

    index = new_index(tmp_path / "idx", model_entry, 30)
    assert index.search("w1x1", 3) and len(index.embeddings[[0, 1]]) == 2 and "p1" in index.documents.row_of
    old = weakref.ref(index.snapshot)
    gc.disable()
    try:
        index.add_embedded(*make_docs(30, 1))
        assert old() is None
    finally:
        gc.enable()


# how a segment is read -----------------------------------------------------------------------------------------

def readahead_of(file: Path) -> list[bool]:
    """Per mapping of ``file`` in this process, whether the kernel reads ahead on its faults (``rr`` off)."""
    flags, current = [], None
    for line in Path("/proc/self/smaps").read_text().splitlines():
        fields = line.split()
        if fields and "-" in fields[0] and len(fields) >= 5 and ":" in fields[3]:
            current = fields[5] if len(fields) > 5 else None
        elif fields and fields[0] == "VmFlags:" and current == str(file):
            flags.append("rr" not in fields[1:])
    return flags


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="reads Linux's /proc/self/smaps")
def test_a_search_re_scores_through_a_mapping_without_read_ahead_and_a_scan_keeps_it(index_copy):
    """Cold, a re-score of 400 rows through an ordinary mapping reads 400 read-ahead windows (1.3 s at 1M
    rows here, against 21 ms a page each); a whole scan wants the windows: a flat segment's search scans its
    vectors through a mapping that reads ahead and re-scores through one that does not."""
    file = next(index_copy.path.glob("segments/*/embeddings.npy")).resolve()
    index = Index.load(index_copy.path)
    assert readahead_of(file) == []
    hits = index.search("discrete diffusion with continuous-time Markov chains", 5)
    assert len(hits) == 5 and sorted(readahead_of(file)) == [False, True]
    assert np.asarray(index.embeddings).shape[0] == len(index)
    assert sorted(readahead_of(file)) == [False, True]


def test_compacting_an_index_already_compact_rewrites_nothing(tmp_path, model_entry):
    index = new_index(tmp_path / "idx", model_entry, 20)
    before = files_of(index.path)
    for _ in range(3):
        result = run_cli("compact", "--index", str(index.path), check=True)
        assert "already compact" in result.stderr and "nothing was rewritten" in result.stderr
    assert files_of(index.path) == before and not list(index.path.parent.glob(".idx*"))
    index.remove([index.documents.ids[0]])
    result = run_cli("compact", "--index", str(index.path), check=True)
    assert "compacted 1 segment(s) into 1" in result.stderr and len(Index.load(index.path)) == 19
