"""The index folder: manifest, format version, atomic replacement, validation on load.

A folder holds ``manifest.json`` (written last), the documents, ``embeddings.npy``,
``vectors.faiss`` (with ``vectors.ivfdata`` for an on-disk IVF index), the BM25 index and
metadata. Every change is built in a temporary sibling folder and swapped in by rename, so a
crash or Ctrl-C leaves either the old index or the new one, never a mix.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .errors import CorruptIndexError, IndexStoreError, InputError

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


def real_path(path: str | Path, option: str = "--index") -> Path:
    """The folder a user named, with symlinks resolved once so writes reach the real index."""
    if str(path).strip() == "":
        raise InputError(f"{option} is empty; name the index folder")
    return Path(os.path.realpath(Path(path).expanduser()))


def is_index(folder: Path) -> bool:
    """Whether ``folder`` holds an embedsearch manifest (the only kind of folder a build may replace)."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
    except (OSError, ValueError):
        return False
    return isinstance(manifest, dict) and "format_version" in manifest


def check_target(path: str | Path, sources: Sequence[str | Path] = ()) -> Path:
    """The real folder a build may write: a new path, an empty folder or an embedsearch index; never a
    file, a folder of other things, or a folder holding one of the build's own sources."""
    given = Path(path)
    target = real_path(path)
    for source in sources:
        real = Path(os.path.realpath(source))
        if real == target or target in real.parents:
            raise InputError(f"--index {given} holds the source {source}; write the index to another folder")
    _recover(target)
    if target.exists() and not target.is_dir():
        raise InputError(f"--index {given} is a file, not an index folder; choose a new folder name")
    if target.is_dir() and any(target.iterdir()) and not is_index(target):
        raise InputError(f"--index {given} is a folder that is not an embedsearch index (no {MANIFEST}); "
                         "it was left alone: choose a new or empty folder")
    return target


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
        _ = (manifest["documents"] + 0, manifest["model"]["name"], manifest["model"]["fingerprint"],
             manifest["model"]["dimension"], manifest["index"]["type"], manifest["index"]["settings"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CorruptIndexError(f"{file}: unreadable or incomplete manifest; rebuild with `embedsearch build`") \
            from exc
    if version > FORMAT_VERSION:
        raise IndexStoreError(f"{path}: index format {version} is newer than this embedsearch reads "
                              f"({FORMAT_VERSION}); upgrade with `pip install -U embedsearch`")
    ondisk = ("vectors.ivfdata",) if manifest.get("index", {}).get("ondisk") else ()
    for name in (*REQUIRED, *ondisk):
        if not (path / name).exists():
            raise CorruptIndexError(f"{path}: {name} is missing; rebuild with `embedsearch build`")
    return manifest


def write_manifest(folder: Path, manifest: dict[str, Any]) -> None:
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")


def file_records(folder: Path) -> dict[str, dict[str, Any]]:
    """Size and SHA-256 of every file of a version, recorded in its manifest for ``check``."""
    records = {}
    for item in sorted(folder.rglob("*")):
        if item.is_file() and item.name != MANIFEST:
            digest = hashlib.sha256()
            with item.open("rb") as fh:
                for block in iter(lambda: fh.read(1 << 22), b""):
                    digest.update(block)
            records[item.relative_to(folder).as_posix()] = {"bytes": item.stat().st_size, "sha256": digest.hexdigest()}
    return records


@contextmanager
def atomic_folder(path: Path) -> Iterator[Path]:
    """Yield an empty temporary folder; on success it replaces ``path``, on any error it vanishes.
    ``path`` must be a new path, an empty folder or an index (``check_target``)."""
    given = Path(path)
    path = check_target(given)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}.tmp-"))
    except OSError as exc:
        raise InputError(f"cannot write index {given}: {exc.strerror or exc}") from exc
    try:
        try:
            yield tmp
        except OSError as exc:
            raise InputError(f"cannot write index {given}: {exc.strerror or exc}; nothing was changed") from exc
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


def check_sizes(path: Path, manifest: dict[str, Any]) -> list[str]:
    """Cheap checks (no hashing): every recorded file is present with its recorded size."""
    problems = []
    for name, record in manifest.get("files", {}).items():
        file = path / name
        if not file.is_file():
            problems.append(f"{file}: missing")
        elif file.stat().st_size != record["bytes"]:
            problems.append(f"{file}: {file.stat().st_size:,} bytes, the manifest recorded {record['bytes']:,}")
    return problems


def load_embeddings(path: Path, count: int, dimension: int):
    """The memory-mapped ``embeddings.npy``, checked against the document count and model dimension."""
    import numpy as np

    file = path / EMBEDDINGS
    try:
        matrix = np.load(file, mmap_mode="r")
    except (OSError, ValueError) as exc:
        raise CorruptIndexError(f"{file}: unreadable ({str(exc).strip()[:120]}); rebuild the index") from exc
    if matrix.shape != (count, dimension):
        raise CorruptIndexError(f"{file}: shape {matrix.shape}, expected {(count, dimension)}; rebuild the index")
    return matrix


def load_vectors(path: Path, count: int):
    """The FAISS index, checked to hold one vector per document."""
    from . import vectors as vec

    index = vec.read(path / VECTORS)
    if index.ntotal != count:
        raise CorruptIndexError(f"{path / VECTORS}: {index.ntotal} vectors for {count} documents; rebuild the index")
    return index


def size_on_disk(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
