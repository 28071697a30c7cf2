"""Saved topic fits: written atomically with a checksum record, read back verified, and found for a corpus
version without loading the fit itself (so a search that shows topic labels imports no UMAP or scipy)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..disk.durable import file_records, sha256, staged_folder
from ..errors import CorruptIndexError, EmbedsearchError
from ..store.files import TOPICS
from ..store.snapshot import Snapshot
from .results import Topic, TopicModel

FOLDER = TOPICS
FORMAT = 6  # part of the cache key: raised when saved results would differ (2: labels, sample assignment; 3: consensus;
#            4: labels chosen by meaning; 5: checksums.json;
#            6: phrase names)
CHECKSUMS = "checksums.json"


def save(model: TopicModel, folder: Path) -> None:
    """Write atomically (``store.staged_folder``): a concurrent fit of the same key keeps the first result."""
    with staged_folder(folder) as tmp:
        payload = {"format": FORMAT, "settings": model.settings, "ids": list(model.ids), "attached": list(model.attached),
                   "assignments": [list(a) for a in model.assignments],
                   "levels": [[t.to_json() for t in level] for level in model.levels]}
        (tmp / "model.json").write_text(json.dumps(payload, ensure_ascii=False))
        np.save(tmp / "coordinates.npy", model.coordinates)
        for depth, centre in enumerate(model.centroids):
            np.save(tmp / f"centroids-{depth}.npy", centre)
        (tmp / CHECKSUMS).write_text(json.dumps(file_records(tmp), indent=1))


def _verify(folder: Path) -> dict:
    """Every saved file against the size and SHA-256 recorded when it was written (as a segment's are)."""
    try:
        records = json.loads((folder / CHECKSUMS).read_text())
    except (OSError, ValueError) as exc:
        raise CorruptIndexError(f"{folder / CHECKSUMS}: unreadable ({type(exc).__name__}); these topic results are "
                                "fitted again by the next `embedsearch topics`") from exc
    if not isinstance(records, dict):
        raise CorruptIndexError(f"{folder / CHECKSUMS}: not a record of files; these topic results are fitted again "
                                "by the next `embedsearch topics`")
    for file in sorted(folder.iterdir()):
        if file.name not in records and file.name != CHECKSUMS:
            raise CorruptIndexError(f"{file}: {CHECKSUMS} records no such file; these topic results are fitted again "
                                    "by the next `embedsearch topics`")
    for name in sorted({"model.json", "coordinates.npy", *records}):
        record, file = records.get(name), folder / name
        if not isinstance(record, dict) or not file.is_file() or file.stat().st_size != record.get("bytes") or \
                sha256(file) != record.get("sha256"):
            raise CorruptIndexError(f"{file}: does not match the checksum {CHECKSUMS} recorded; these topic results "
                                    "are fitted again by the next `embedsearch topics`")
    return records


def load(folder: Path) -> TopicModel:
    """Saved topic results, or a one-line ``CorruptIndexError`` naming the damaged folder."""
    records = _verify(folder)
    try:
        payload = json.loads((folder / "model.json").read_text())
        levels = tuple(tuple(Topic(t["id"], t["label"], t["size"], tuple(t["keywords"]),
                                   tuple(t["representatives"]), tuple(t["members"]), t["parent"], t.get("name", ""))
                             for t in level)
                       for level in payload["levels"])
        if any(f"centroids-{d}.npy" not in records for d in range(len(levels))):
            raise KeyError("centroids")
        centres = tuple(np.load(folder / f"centroids-{d}.npy") for d in range(len(levels)))
        model = TopicModel(levels, tuple(tuple(a) for a in payload["assignments"]), tuple(payload["ids"]),
                           tuple(payload["attached"]), payload["settings"], np.load(folder / "coordinates.npy"),
                           centres)
    except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
        raise CorruptIndexError(f"{folder}: damaged topic results ({type(exc).__name__}); they are fitted again "
                                "by the next `embedsearch topics`") from exc
    if not levels or any(len(a) != len(model.ids) for a in model.assignments) or \
            len(model.coordinates) != len(model.ids):
        raise CorruptIndexError(f"{folder}: topic results disagree with themselves; they are fitted again by the "
                                "next `embedsearch topics`")
    return model


def cached(snapshot: Snapshot) -> TopicModel | None:
    """The most recently fitted topic model of this corpus version, if any (no fitting); damaged
    results count as none, so they never break a search."""
    root = snapshot.path / FOLDER
    if not root.is_dir():
        return None
    fitted = sorted((p for p in root.iterdir() if (p / "model.json").exists()), key=lambda p: p.stat().st_mtime)
    for folder in reversed(fitted):
        try:
            model = load(folder)
        except CorruptIndexError:
            continue
        if model.settings.get("corpus_version") == snapshot.generation.corpus_version:
            return model
    return None


def faults(root: Path) -> list[tuple[Path, str]]:
    """Each saved topic result of the index at ``root`` that fails its checksums or does not read, with why."""
    folder = root / FOLDER
    found = []
    for item in sorted(folder.iterdir()) if folder.is_dir() else []:
        if item.name.startswith("."):
            continue
        try:
            load(item)
        except EmbedsearchError as exc:
            found.append((item, str(exc)))
    return found


def damaged(root: Path) -> list[Path]:
    """The saved topic results that ``check --repair`` removes (the next ``topics`` fits them again)."""
    return [item for item, _ in faults(root)]


def problems(root: Path) -> list[str]:
    """What is wrong with the saved topic results of the index at ``root``, one line each."""
    return [f"{why} (search is unaffected)" for _, why in faults(root)]
