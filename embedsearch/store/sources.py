"""The files an index's content came from after its build: each ``add`` records its sources, resolved as a
build's are, so that no output (a pair report, a kept corpus, a map) ever overwrites one, ``--force`` or not."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Sequence
from pathlib import Path

from ..disk.durable import durable_file

FOLDER = "sources"


def record(root: Path, sources: Sequence[str | Path]) -> None:
    """One small file per add (never rewritten, so two adds at once cannot lose each other's record)."""
    resolved = [os.path.realpath(s) for s in sources]
    if not resolved:
        return
    (root / FOLDER).mkdir(exist_ok=True)
    with durable_file(root / FOLDER / f"{uuid.uuid4().hex[:16]}.json") as fh:
        json.dump({"sources": resolved}, fh)


def recorded(root: Path) -> list[str]:
    """Every source an add recorded under ``root`` (unreadable records are skipped)."""
    found: list[str] = []
    for file in sorted((root / FOLDER).glob("*.json")) if (root / FOLDER).is_dir() else ():
        try:
            data = json.loads(file.read_text())
        except (OSError, ValueError):
            continue
        listed = data.get("sources") if isinstance(data, dict) else None
        found += [s for s in listed if isinstance(s, str)] if isinstance(listed, list) else []
    return found
