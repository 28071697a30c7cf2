"""Embedding cache keyed by (model fingerprint + embed settings, text hash).

One SQLite file per model: an open format, safe under concurrent writers, and it scales to
millions of rows. A rebuild or ``add`` then embeds only text the model has never seen.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np


def default_cache_dir() -> Path:
    """``$EMBEDSEARCH_CACHE_DIR``, else ``$XDG_CACHE_HOME/embedsearch``, else ``~/.cache/embedsearch``."""
    if os.environ.get("EMBEDSEARCH_CACHE_DIR"):
        return Path(os.environ["EMBEDSEARCH_CACHE_DIR"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "embedsearch"


class EmbeddingCache:
    """Vectors by text hash for one model fingerprint."""

    _BATCH = 900  # stays under SQLite's bound-parameter limit

    def __init__(self, root: Path, key: str, dimension: int):
        root = Path(root) / "embeddings"
        root.mkdir(parents=True, exist_ok=True)
        self.path = root / f"{key}.sqlite"
        self.dimension = dimension
        self._db = sqlite3.connect(self.path, timeout=60, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, vector BLOB NOT NULL)")

    def get_many(self, keys: Sequence[bytes]) -> dict[bytes, np.ndarray]:
        found: dict[bytes, np.ndarray] = {}
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), self._BATCH):
            part = unique[start:start + self._BATCH]
            rows = self._db.execute(
                f"SELECT key, vector FROM vectors WHERE key IN ({','.join('?' * len(part))})", part)
            for key, blob in rows:
                vector = np.frombuffer(blob, dtype=np.float32)
                if vector.shape[0] == self.dimension:
                    found[key] = vector
        return found

    def put_many(self, keys: Sequence[bytes], vectors: np.ndarray) -> None:
        with self._db:
            self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)",
                                 [(k, np.ascontiguousarray(v, dtype=np.float32).tobytes())
                                  for k, v in zip(keys, vectors)])

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]


PARTS = {"embeddings": "embedding vectors by model", "onnx": "query encoders exported to ONNX",
         "numba": "compiled umap/hdbscan code", "models": "model fingerprints and token windows by folder"}


@dataclass(frozen=True)
class CachePart:
    """One thing kept in the cache folder; everything in it is rebuilt on demand when missing."""

    path: Path
    what: str
    bytes: int
    vectors: int | None = None


def usage(root: Path | None = None) -> list[CachePart]:
    """What the cache folder holds: each embedding database (with its vector count), the ONNX
    exports and numba's compiled code."""
    root = Path(root or default_cache_dir())
    parts = []
    for name, what in PARTS.items():
        folder = root / name
        if not folder.is_dir():
            continue
        if name == "embeddings":
            for db in sorted(folder.glob("*.sqlite")):
                size = sum(_size(p) for p in folder.glob(db.name + "*"))
                with sqlite3.connect(db, timeout=60) as conn:
                    count = conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
                parts.append(CachePart(db, f"{what} ({db.stem})", size, count))
        else:
            parts.append(CachePart(folder, what, _size(folder)))
    return parts


def clear(root: Path | None = None) -> int:
    """Delete what ``usage`` lists (never other files in the folder); returns the bytes freed."""
    root = Path(root or default_cache_dir())
    freed = sum(p.bytes for p in usage(root))
    for name in PARTS:
        shutil.rmtree(root / name, ignore_errors=True)
    return freed


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
