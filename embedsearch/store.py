"""The index folder: manifest, format version, atomic replacement, validation on load.

A folder holds ``manifest.json`` (written last), the documents, ``embeddings.npy``,
``vectors.faiss`` (with ``vectors.ivfdata`` for an on-disk IVF index), the BM25 index and
metadata. Every change is built in a temporary sibling folder and swapped in by rename, so a
crash or Ctrl-C leaves either the old index or the new one, never a mix.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .errors import IndexStoreError

FORMAT_VERSION = 1
MANIFEST = "manifest.json"
EMBEDDINGS = "embeddings.npy"
VECTORS = "vectors.faiss"
REQUIRED = ("documents.jsonl", "documents.offsets.npy", "ids.json", EMBEDDINGS, VECTORS, "lexical/config.json",
            "metadata.parquet")


def package_version() -> str:
    from . import __version__

    return __version__


def default_home() -> Path:
    """``$EMBEDSEARCH_HOME``, else ``indexes/`` at the root of a source checkout, else the user data dir."""
    if os.environ.get("EMBEDSEARCH_HOME"):
        return Path(os.environ["EMBEDSEARCH_HOME"])
    checkout = Path(__file__).resolve().parent.parent
    if (checkout / "pyproject.toml").exists() and (checkout / "indexes").is_dir():
        return checkout / "indexes"
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "embedsearch" / "indexes"


def new_manifest(**fields: Any) -> dict[str, Any]:
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return {"format_version": FORMAT_VERSION, "package_version": package_version(), "metric": "cosine",
            "built_at": now, "updated_at": now, **fields}


def read_manifest(path: Path) -> dict[str, Any]:
    """The manifest of the index at ``path``, after checking it is one this version can read."""
    _recover(path)
    if not path.exists():
        raise IndexStoreError(f"{path}: no index here; create one with `embedsearch build SOURCE --index {path}`")
    file = path / MANIFEST
    if not path.is_dir() or not file.exists():
        raise IndexStoreError(f"{path}: not an embedsearch index (no {MANIFEST}); pass the folder `build` wrote")
    try:
        manifest = json.loads(file.read_text())
        version = manifest["format_version"]
    except (ValueError, KeyError, TypeError) as exc:
        raise IndexStoreError(f"{file}: unreadable manifest; rebuild with `embedsearch build`") from exc
    if version > FORMAT_VERSION:
        raise IndexStoreError(f"{path}: index format {version} is newer than this embedsearch reads "
                              f"({FORMAT_VERSION}); upgrade with `pip install -U embedsearch`")
    ondisk = ("vectors.ivfdata",) if manifest.get("index", {}).get("ondisk") else ()
    for name in (*REQUIRED, *ondisk):
        if not (path / name).exists():
            raise IndexStoreError(f"{path}: {name} is missing; rebuild with `embedsearch build`")
    return manifest


def write_manifest(folder: Path, manifest: dict[str, Any]) -> None:
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")


@contextmanager
def atomic_folder(path: Path) -> Iterator[Path]:
    """Yield an empty temporary folder; on success it replaces ``path``, on any error it vanishes."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}.tmp-"))
    try:
        yield tmp
        _fsync_tree(tmp)
        old = None
        if path.exists():
            old = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}.old-"))
            os.rmdir(old)
            os.rename(path, old)
        os.rename(tmp, path)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def _fsync_tree(folder: Path) -> None:
    for item in folder.rglob("*"):
        if item.is_file():
            with item.open("rb") as fh:
                os.fsync(fh.fileno())


def _recover(path: Path) -> None:
    """If a swap was interrupted between its two renames, put the previous index back."""
    if path.exists():
        return
    olds = sorted(path.parent.glob(f".{path.name}.old-*")) if path.parent.exists() else []
    if olds and (olds[-1] / MANIFEST).exists():
        os.rename(olds[-1], path)


def size_on_disk(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
