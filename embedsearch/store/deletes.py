"""Deletion files: the rows of a segment deleted as of a generation, ``deletes/NAME.N.npy`` (a new file each
commit that deletes, never rewritten), checksummed in the generation, which also keeps the rows themselves as
compressed text so that ``check --repair`` can write a damaged deletion file again. A reader turns one into the
segment's live mask."""

from __future__ import annotations

import base64
import zlib
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..disk.durable import durable_file, sha256
from ..errors import CorruptIndexError
from .files import DELETES
from .generation import SegmentEntry


def write_deletes(root: Path, entry: SegmentEntry, rows: np.ndarray, number: int) -> SegmentEntry:
    """Write the full set of deleted rows of a segment as of generation ``number``; returns its new entry."""
    folder = root / DELETES
    folder.mkdir(exist_ok=True)
    file = folder / f"{entry.name}.{number}.npy"
    rows = np.unique(np.asarray(rows, dtype=np.int64))
    with durable_file(file, binary=True) as fh:
        np.save(fh, rows)
    return replace(entry, deletes=file.name, deleted=len(rows), deletes_sha256=sha256(file),
                   deleted_rows=packed(rows))


def packed(rows: np.ndarray) -> str:
    """The deleted rows as text a generation keeps beside the deletion file's checksum (the gaps between
    sorted rows, compressed): the copy ``check --repair`` writes a damaged deletion file again from."""
    gaps = np.diff(np.asarray(rows, dtype=np.int64), prepend=0).astype(np.uint32)
    return base64.b64encode(zlib.compress(gaps.tobytes(), 6)).decode("ascii")


def unpacked(text: str) -> np.ndarray:
    return np.cumsum(np.frombuffer(zlib.decompress(base64.b64decode(text)), dtype=np.uint32).astype(np.int64))


def read_deletes(root: Path, entry: SegmentEntry) -> np.ndarray | None:
    """The live mask of a segment (None when nothing in it is deleted)."""
    if not entry.deletes:
        return None
    file = root / DELETES / entry.deletes
    try:
        if entry.deletes_sha256 and sha256(file) != entry.deletes_sha256:  # small: one bit a row at most
            raise ValueError("does not match the checksum its generation recorded")
        rows = np.load(file)
        if rows.ndim != 1 or len(rows) != entry.deleted or (len(rows) and (rows.min() < 0
                                                                           or rows.max() >= entry.rows)):
            raise ValueError("does not match its generation entry")
    except (OSError, ValueError) as exc:
        how = f"`embedsearch check --repair --index {root}` writes it again from the copy its generation keeps" \
            if entry.deleted_rows else "restore it or rebuild"
        raise CorruptIndexError(f"{file}: deletion file unreadable ({exc}); {how}") from exc
    live = np.ones(entry.rows, dtype=bool)
    live[rows] = False
    return live
