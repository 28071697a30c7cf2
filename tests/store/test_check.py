"""``check`` verifies every file an index holds: an index with every kind of file the project writes (two
segments, a deletion, source records, saved topics, a watch) is damaged file by file, five ways each, and every
damage is found and named; what is safe to lose is listed as such; damage is refused on open, not answered."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli

from embedsearch import Index
from embedsearch.errors import CORRUPT_EXIT, EmbedsearchError


def report(path: Path) -> tuple[list[str], int]:
    """What ``embedsearch check`` reports (its lines and exit code), in this process."""
    try:
        lines = Index.load(path).check(deep=True)
    except EmbedsearchError as exc:
        return [str(exc)], exc.exit_code
    return lines, CORRUPT_EXIT if lines else 0


def truncate(file: Path) -> None:
    file.write_bytes(file.read_bytes()[:file.stat().st_size // 2])


def zero(file: Path) -> None:
    file.write_bytes(bytes(file.stat().st_size))


def delete(file: Path) -> None:
    file.unlink()


def flip(file: Path) -> None:
    data = bytearray(file.read_bytes() or b"\0")
    data[len(data) // 2] ^= 0xFF
    file.write_bytes(bytes(data))


def zero_numbers(file: Path) -> None:
    """The numbers of an ``.npy`` zeroed, its header kept (shape and type still read)."""
    with file.open("rb") as fh:
        version = np.lib.format.read_magic(fh)
        (np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0)(fh)
        start = fh.tell()
    data = file.read_bytes()
    file.write_bytes(data[:start] + bytes(len(data) - start))


def test_every_file_of_every_kind_damaged_five_ways_is_named_by_check(every_kind, tmp_path):
    index = Index.load(every_kind)
    assert report(every_kind) == ([], 0)
    spare = " ".join(index.expendable())
    files = sorted(p.relative_to(every_kind).as_posix() for p in every_kind.rglob("*") if p.is_file())
    kinds = {name.split("/")[0] if "/" in name else name for name in files}
    assert {"manifest.json", "generations", "segments", "deletes", "sources", "topics", "watches"} <= kinds
    assert any(n.endswith("words/positions.npy") for n in files) and any(n.endswith("sentences/pieces.npy")
                                                                         for n in files)
    missed, checked = [], 0
    for name in files:
        if name in spare or Path(name).name in spare:  # the lock, superseded generations: listed as safe to lose
            continue
        for damage in (truncate, zero, delete, flip) + ((zero_numbers,) if name.endswith(".npy") else ()):
            copy = tmp_path / "copy"
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(every_kind, copy)
            before = (copy / name).read_bytes()
            damage(copy / name)
            if (copy / name).exists() and (copy / name).read_bytes() == before:
                continue  # zeros over zeros (a deletion of row 0 zeroed): nothing changed
            lines, code = report(copy)
            checked += 1
            if code != CORRUPT_EXIT or not any(name in line for line in lines):
                missed.append(f"{name} {damage.__name__}: exit {code}, {lines[:1]}")
    assert not missed, "\n".join(missed)
    assert checked > 250


def test_what_is_safe_to_lose_is_listed_in_one_line(every_kind):
    result = run_cli("check", "--index", str(every_kind), check=True)
    lines = result.stdout.strip().splitlines()
    assert "healthy" in lines[0] and len(lines) == 2 and lines[1].startswith("safe to lose")
    assert ".lock" in lines[1] and "superseded generations" in lines[1]
    assert json.loads(run_cli("check", "--index", str(every_kind), "--json", check=True).stdout)["safe_to_lose"]


def test_a_file_no_record_owns_is_damage(every_kind, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(every_kind, copy)
    segment = next((copy / "segments").iterdir())
    (segment / "words" / "extra.npy").write_bytes(b"x")
    (copy / "notes.txt").write_text("mine")
    result = run_cli("check", "--index", str(copy))
    assert result.returncode == 3 and "extra.npy" in result.stderr and "notes.txt" in result.stderr


def test_damaged_deletions_and_postings_are_refused_by_search_with_the_repair_named(every_kind, tmp_path):
    """The quiet wrong answers of before: a zeroed deletion file (a removed paper back), zeroed word postings
    (a phrase answering nothing). Each is now the exit-3 line naming the file and ``check --repair``."""
    for part, query in (("deletes", "graph neural networks"), ("words/rows.npy", '"neural networks"'),
                        ("words/counts.npy", '"neural networks"'), ("lexical/tf.npy", "graph neural networks")):
        copy = tmp_path / part.replace("/", "-")
        shutil.copytree(every_kind, copy)
        target = next((copy / "deletes").iterdir()) if part == "deletes" else \
            next(f for f in (copy / "segments").glob(f"*/{part}") if f.stat().st_size > 128)
        zero_numbers(target)
        result = run_cli("search", query, "--index", str(copy), "--mode", "lexical")
        lines = result.stderr.strip().splitlines()
        assert result.returncode == 3 and len(lines) == 1, (part, result.stderr)
        assert target.name in lines[0] and "check --repair" in lines[0], (part, lines[0])


@pytest.mark.parametrize("part, query", [("words/rows.npy", '"neural networks"'), ("words/counts.npy", '"neural networks"'),
                                         ("lexical/rows.npy", "graph neural networks"),
                                         ("lexical/tf.npy", "graph neural networks")])
def test_large_postings_are_held_to_invariants_on_every_read(every_kind, tmp_path, monkeypatch, part, query):
    """Postings too large to re-hash on open (none is, this small: the limit is lowered) are checked as they
    are read: a list ascends within the segment, and every row of it holds the word."""
    from embedsearch.errors import CorruptIndexError
    from embedsearch.store import segment

    copy = tmp_path / "copy"
    shutil.copytree(every_kind, copy)
    zero_numbers(next(f for f in (copy / "segments").glob(f"*/{part}") if f.stat().st_size > 128))
    monkeypatch.setattr(segment, "SMALL_BYTES", 0)
    with pytest.raises(CorruptIndexError, match=f"{Path(part).name}.*check --repair|{Path(part).parent}.*check --repair"):
        Index.load(copy).find(query, 5, mode="lexical")
