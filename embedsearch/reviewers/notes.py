"""Records as OpenReview writes them (``{id, content: {title, abstract, authors, ...}}``, values sometimes
wrapped as ``{"value": ...}``) flattened into the records ``corpus`` reads, so archives, submissions.json
and plain corpora go through one set of checks."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..corpus.readers import ROWS, Problem, detect_format
from ..errors import InputError


def flatten(row: dict[str, Any]) -> dict[str, Any]:
    """A note's content fields beside its id (``content.x.value`` read as ``x``); a flat record as it is."""
    content = row.get("content")
    if not isinstance(content, dict):
        return row
    out = {k: v for k, v in row.items() if k != "content"}
    for key, value in content.items():
        out.setdefault(key, value["value"] if isinstance(value, dict) and "value" in value else value)
    return out


def records(path: Path) -> Iterator[tuple[str, dict[str, Any] | Problem]]:
    """Every record of ``path`` named by its line: OpenReview's ``submissions.json`` (one object of notes by
    id), JSONL of notes or flat records, CSV or Parquet."""
    if path.suffix.lower() == ".json":
        whole = _whole_json(path)
        if whole is not None:
            for number, (key, note) in enumerate(whole.items(), start=1):
                where = f"{path}:{key}"
                yield where, flatten({"id": key, **note}) if isinstance(note, dict) else \
                    Problem(where, "expected a note object")
            return
    for where, row in ROWS[detect_format(path)](path):
        yield where, row if isinstance(row, Problem) else flatten(row)


def _whole_json(path: Path) -> dict[str, Any] | None:
    """The file as one JSON object of notes (``submissions.json``), or None when it is JSON lines."""
    try:
        with path.open(encoding="utf-8") as fh:
            data = json.load(fh)
    except (ValueError, UnicodeDecodeError):
        return None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if isinstance(data, dict) and data and all(isinstance(v, dict) for v in data.values()) and "content" in \
            next(iter(data.values())):
        return data
    return None
