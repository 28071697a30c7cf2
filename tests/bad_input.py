"""What the bad-input tests share (``tests/*/test_bad_input_*.py``): small corpora, a hash of a folder
before and after a command, one error line checked, and the filters' oracle. Their fixtures (``built``,
``copy``, ``corpus``, ``years``) are in ``conftest.py``."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

from conftest import run_cli



ROWS = [
    {"id": "a", "title": "Spiking nets", "abstract": "Spiking neural networks with time-to-first-spike coding.",
     "year": 2024, "venue": "NeurIPS", "authors": ["Ada", "Bo"]},
    {"id": "b", "title": "Diffusion LMs", "abstract": "Discrete diffusion language models for text generation.",
     "year": 2025, "venue": "ICML", "authors": ["Cy"]},
    {"id": "c", "title": "Robot VLA", "abstract": "Vision-language-action policies for robot manipulation.",
     "year": 2023, "venue": "CoRL", "authors": ["Ada"]},
]

def tree_hash(*roots: Path) -> str:
    """Names and bytes of every file under ``roots`` (and the hidden siblings a swap could leave)."""
    digest = hashlib.sha256()
    for root in roots:
        items = sorted(root.parent.glob(f".{root.name}*")) + ([root] if root.exists() else [])
        for item in items:
            for file in sorted([item] if item.is_file() or item.is_symlink() else item.rglob("*")):
                digest.update(str(file).encode())
                if file.is_symlink():
                    digest.update(os.readlink(file).encode())
                elif file.is_file():
                    digest.update(file.read_bytes())
    return digest.hexdigest()

def part(index: Path, name: str) -> Path:
    """A file of the (only) segment of ``index``."""
    return next(p for p in (index / "segments").iterdir() if not p.name.startswith(".")) / name

def one_error_line(result: subprocess.CompletedProcess, code: int, *phrases: str) -> str:
    assert result.returncode == code, (result.returncode, result.stderr)
    lines = [line for line in result.stderr.strip().splitlines() if line.startswith("error: ")]
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    for phrase in phrases:
        assert phrase in lines[0], lines[0]
    return lines[0]

def write_jsonl(path: Path, rows) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path

def ids_for(index: Path, *filters: str) -> list[str]:
    args = ["search", "networks", "--index", str(index), "--json", "-k", "3"]
    for f in filters:
        args += ["--filter", f]
    return sorted(json.loads(line)["id"] for line in run_cli(*args, check=True).stdout.splitlines())

def truncate(file: Path) -> None:
    os.truncate(file, file.stat().st_size // 2)

def refused_then_skipped(corpus: Path, index: Path, *phrases: str) -> subprocess.CompletedProcess:
    """Build ``corpus``: refused with one error line holding ``phrases`` and nothing written, then built with
    ``--skip-invalid`` (returned)."""
    one_error_line(run_cli("build", str(corpus), "--index", str(index), "--model", "hashing-384"), 2, *phrases)
    assert not index.exists()
    skipped = run_cli("build", str(corpus), "--index", str(index), "--model", "hashing-384", "--skip-invalid")
    assert skipped.returncode == 0 and "Traceback" not in skipped.stderr, skipped.stderr
    return skipped

YEARS = [{"id": f"y{i}", "text": f"abstract {i} about graph networks", "year": 2018 + i} for i in range(4)]

def years_from(index: Path, condition: str = "year>=2020") -> list[str]:
    result = run_cli("search", "graph networks", "--index", str(index), "--mode", "dense", "-k", "50", "--filter",
                     condition, "--json", check=True)
    return sorted(json.loads(line)["id"] for line in result.stdout.splitlines())

VALUES = {"year": [None, 2016, 2021.5, "2023", "", 2030, 2023], "tags": ["a", ["a", "B"], ["c"], None, []],
          "years": [[2019, 2021], 2022, [], None, [2017]]}

CONDITIONS = ["year>=2021", "year<2020", "year=2023", "year!=2023", "tags=a", "tags!=a", "years>=2021", "years<2020"]

def holds(value, condition: str) -> bool:
    """What a filter should answer for one stored value, worked out independently of the index."""
    from embedsearch.corpus.kinds import finite_number

    field, op, target = next((condition.partition(op)[0], op, condition.partition(op)[2])
                             for op in (">=", "<=", "!=", "=", "<", ">") if op in condition)
    items = [x for x in (value if isinstance(value, list) else [value]) if x is not None and x != ""]
    numbers = [finite_number(x) for x in items]
    if op in (">=", "<=", "<", ">"):
        bound = float(target)
        return any({">=": n >= bound, "<=": n <= bound, "<": n < bound, ">": n > bound}[op] for n in numbers)
    equal = any(n == finite_number(target) if n is not None else str(x).casefold() == target.casefold()
                for x, n in zip(items, numbers))
    return equal if op == "=" else not equal
