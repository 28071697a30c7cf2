"""Verification of an index folder: every file against the manifest, row counts across parts.

``problems`` returns one line per fault, each naming the file; an empty list means healthy.
The quick form (``info``, loading) compares sizes and counts; the deep form (``embedsearch check``)
also re-hashes every file against the SHA-256 the manifest recorded and parses every document.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from . import store
from .docstore import DOCS, IDS, OFFSETS
from .errors import EmbedsearchError


def problems(path: Path, manifest: dict[str, Any], deep: bool = False) -> list[str]:
    """Everything wrong with the index at ``path``, one line each."""
    found = store.check_sizes(path, manifest)
    if deep:
        recorded = manifest.get("files", {})
        actual = store.file_records(path) if recorded else {}
        found += [f"{path / name}: contents differ from the checksum the manifest recorded"
                  for name, record in recorded.items()
                  if name in actual and actual[name]["bytes"] == record["bytes"]
                  and actual[name]["sha256"] != record["sha256"]]
    count = manifest["documents"]
    for part in (_documents, _embeddings, _vectors, _lexical, _metadata, _topics):
        try:
            found += part(path, manifest, count, deep)
        except EmbedsearchError as exc:
            found.append(str(exc))
        except Exception as exc:  # noqa: BLE001  (any failure to read a part is a fault to report)
            found.append(f"{path}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
    return list(dict.fromkeys(found))


def _documents(path: Path, manifest, count: int, deep: bool) -> list[str]:
    found = []
    try:
        offsets = np.load(path / OFFSETS)
    except (OSError, ValueError) as exc:
        return [f"{path / OFFSETS}: unreadable ({_reason(exc)})"]
    if len(offsets) != count + 1:
        found.append(f"{path / OFFSETS}: {len(offsets) - 1} rows, the manifest says {count} documents")
    size = (path / DOCS).stat().st_size if (path / DOCS).exists() else -1
    if len(offsets) and int(offsets[-1]) != size:
        found.append(f"{path / DOCS}: {size:,} bytes, its offset table expects {int(offsets[-1]):,}")
    try:
        ids = json.loads((path / IDS).read_text())
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise ValueError("not a list of ids")
    except (OSError, ValueError) as exc:
        return [*found, f"{path / IDS}: unreadable ({_reason(exc)})"]
    if len(ids) != count:
        found.append(f"{path / IDS}: {len(ids)} ids, the manifest says {count} documents")
    if deep and not found:
        with (path / DOCS).open("rb") as fh:
            for row, (line, doc_id) in enumerate(zip(fh, ids)):
                try:
                    ok = json.loads(line)["id"] == doc_id
                except (ValueError, KeyError, TypeError):
                    ok = False
                if not ok:
                    found.append(f"{path / DOCS}: row {row} is damaged or does not match {IDS}")
                    break
    return found


def _embeddings(path: Path, manifest, count: int, deep: bool) -> list[str]:
    store.load_embeddings(path, count, manifest["model"]["dimension"])
    return []


def _vectors(path: Path, manifest, count: int, deep: bool) -> list[str]:
    store.load_vectors(path, count)
    return []


def _lexical(path: Path, manifest, count: int, deep: bool) -> list[str]:
    from .lexical import LexicalIndex

    lexical = LexicalIndex(path)
    found = []
    if lexical.config.get("documents") != count:
        found.append(f"{lexical.folder}: BM25 over {lexical.config.get('documents')} documents, expected {count}")
    if deep and lexical.max_row() >= count:
        found.append(f"{lexical.folder}: a posting points past the last document")
    return found


def _metadata(path: Path, manifest, count: int, deep: bool) -> list[str]:
    from . import filters as flt

    rows = flt.row_count(path)
    return [] if rows == count else [f"{path / flt.FILE}: {rows} rows for {count} documents"]


def _topics(path: Path, manifest, count: int, deep: bool) -> list[str]:
    from .topics.model import FOLDER, load

    root = path / FOLDER
    found = []
    for folder in sorted(root.iterdir()) if root.is_dir() else []:
        if folder.name.startswith("."):
            continue
        try:
            if len(load(folder).ids) != count:
                found.append(f"{folder}: topics of another version of the index (search is unaffected)")
        except EmbedsearchError as exc:
            found.append(f"{exc} (search is unaffected)")
    return found


def _reason(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[-1][:120] if text else type(exc).__name__
