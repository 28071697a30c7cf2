"""The files an index's content came from after its build: each ``add`` records its sources, resolved as a
build's are, so that no output (a pair report, a kept corpus, a map) ever overwrites one, ``--force`` or not.
A record is written before its add commits, and every generation lists the records on disk when it was
published, with their checksums (``generation.Generation.sources``), so ``check`` finds one damaged or gone."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from ..disk.durable import sealed, sha256, unsealed, write_json

FOLDER = "sources"


@contextmanager
def recording(root: Path, sources: Sequence[str | Path]) -> Iterator[None]:
    """Record ``sources`` for the add in the block: one small file per add (never rewritten, so two adds at once
    cannot lose each other's record), written first and removed again when the add fails."""
    resolved = [os.path.realpath(s) for s in sources]
    if not resolved:
        yield
        return
    (root / FOLDER).mkdir(exist_ok=True)
    file = root / FOLDER / f"{uuid.uuid4().hex[:16]}.json"
    write_json(file, sealed({"sources": resolved}))
    try:
        yield
    except BaseException:
        file.unlink(missing_ok=True)
        if not any((root / FOLDER).iterdir()):
            (root / FOLDER).rmdir()
        raise


def records(root: Path) -> tuple[tuple[str, str], ...]:
    """Each record file under ``root`` (a name below ``sources/``) with its SHA-256, for a generation to list."""
    folder = root / FOLDER
    return tuple((f"{FOLDER}/{file.name}", sha256(file)) for file in sorted(folder.glob("*.json"))) \
        if folder.is_dir() else ()


def recorded(root: Path) -> list[str]:
    """Every source an add recorded under ``root`` (unreadable records are skipped)."""
    found: list[str] = []
    for file in sorted((root / FOLDER).glob("*.json")) if (root / FOLDER).is_dir() else ():
        try:
            data, _ = unsealed(json.loads(file.read_text()))
        except (OSError, ValueError):
            continue
        listed = data.get("sources") if isinstance(data, dict) else None
        found += [s for s in listed if isinstance(s, str)] if isinstance(listed, list) else []
    return found
