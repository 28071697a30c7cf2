"""The index folder and its root manifest: where indexes live, which folders a build may replace,
and the format check every open goes through.

An index folder (format 2)::

    manifest.json            what the index is: format, model, settings (written once by build)
    generations/N.json       generation N: its segments, their deletion files, the live count
    segments/NAME/           one immutable segment: documents, embeddings, FAISS, BM25 postings, metadata
    deletes/NAME.N.npy       the rows of segment NAME deleted as of generation N
    topics/                  fitted topic results, keyed by corpus version and settings, with their checksums
    sources/                 the files each `add` read, resolved (outputs may never overwrite them)
    watches/                 saved searches (`embedsearch watch`) and the ids each last saw; kept by a rebuild
    .lock                    the writer lock
    shard.json               in a shard of a cluster: written only through the cluster (``shard_marker``)
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import CorruptIndexError, IndexStoreError, InputError
from ..disk.durable import staged_folder, unsealed
from .shard_marker import refuse_shard

FORMAT_VERSION = 3  # 3: BM25 meets word forms (``lexical.forms``); 2 (segments, without them) is read as it is
SEGMENTED = 2
MANIFEST = "manifest.json"
GENERATIONS = "generations"
SEGMENTS = "segments"
DELETES = "deletes"
TOPICS = "topics"
WATCHES = "watches"
LOCK = ".lock"
EMBEDDINGS = "embeddings.npy"
VECTORS = "vectors.faiss"


def default_home() -> Path:
    """``$EMBEDSEARCH_HOME``, else ``indexes/`` at the root of a source checkout, else the user data dir."""
    if os.environ.get("EMBEDSEARCH_HOME"):
        return Path(os.environ["EMBEDSEARCH_HOME"])
    checkout = Path(__file__).resolve().parent.parent.parent
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
    file, a folder of other things, a folder holding one of the build's own sources, or a shard of a cluster."""
    given = Path(path)
    target = real_path(path)
    refuse_shard(target)
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
    found = foreign_files(target) if target.is_dir() else []
    if found:
        listed = ", ".join(found[:3]) + (f" and {len(found) - 3} more" if len(found) > 3 else "")
        raise InputError(f"--index {given} holds files embedsearch did not write ({listed}); a rebuild would "
                         "delete them, so nothing was changed: move them out of the folder, or build elsewhere")
    return target


FOLDERS = (GENERATIONS, SEGMENTS, DELETES, "topics", "sources", "watches")
KEPT_ON_REBUILD = ("watches",)  # a reader's saved searches outlive a rebuild of the corpus they watch
TOP_LEVEL = {MANIFEST, LOCK, "shard.json", *FOLDERS}
_GENERATION = re.compile(r"^(\d+|latest)\.json$")
_DELETES = re.compile(r"^[^.].*\.\d+\.npy$")
_TEMPORARY = re.compile(r"^\..+\.(tmp|old)-")


def foreign_files(root: Path) -> list[str]:
    """What an index folder holds that embedsearch did not write (paths relative to ``root``): anything
    but its manifest, lock, generations, segments (each file its ``segment.json`` records), deletion files,
    topic results and writers' temporary files. A rebuild or a collection must never delete these."""
    found = []
    for item in sorted(root.iterdir()):
        if _TEMPORARY.match(item.name):
            continue
        if item.name not in TOP_LEVEL or (item.is_dir() != (item.name in FOLDERS)):
            found.append(item.name)
        elif item.name in (GENERATIONS, DELETES):
            pattern = _GENERATION if item.name == GENERATIONS else _DELETES
            found += [f"{item.name}/{p.name}" for p in sorted(item.iterdir())
                      if not _TEMPORARY.match(p.name) and not (p.is_file() and pattern.match(p.name))]
        elif item.name == SEGMENTS:
            for segment in sorted(item.iterdir()):
                if _TEMPORARY.match(segment.name):
                    continue
                if not owned_segment(segment):
                    found.append(f"{SEGMENTS}/{segment.name}")
                else:
                    found += [f"{SEGMENTS}/{segment.name}/{name}" for name in _foreign_in_segment(segment)]
    return found


DERIVED = "words"  # made from a segment's documents on first use where older segments lack them
DERIVED_FOLDERS = (DERIVED, "sentences")


def _foreign_in_segment(folder: Path) -> list[str]:
    try:
        recorded = set(json.loads((folder / "segment.json").read_text())["files"]) | {"segment.json"}
    except (OSError, ValueError, KeyError, TypeError):
        return []  # a damaged segment is for `check` to report, not a user's file
    return [p.relative_to(folder).as_posix() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.relative_to(folder).as_posix() not in recorded and not _derived(p, folder)]


def _derived(path: Path, folder: Path) -> bool:
    top = path.relative_to(folder).parts[0]
    return top in DERIVED_FOLDERS or (_TEMPORARY.match(top) is not None
                                      and any(top.startswith(f".{name}.") for name in DERIVED_FOLDERS))


def owned_deletes(item: Path) -> bool:
    """Whether ``item`` under ``deletes/`` is a deletion file (``SEGMENT.GENERATION.npy``)."""
    return item.is_file() and _DELETES.match(item.name) is not None


def owned_segment(item: Path) -> bool:
    """Whether ``item`` under ``segments/`` is a segment embedsearch wrote (a folder with its ``segment.json``,
    or one named as segments are), so that collecting unreferenced segments removes nothing else."""
    return item.is_dir() and ((item / "segment.json").is_file() or re.fullmatch(r"[0-9a-f]{16}", item.name) is not None)


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def read_manifest(path: Path) -> dict[str, Any]:
    """The root manifest of the index at ``path``, after checking it is one this version can read."""
    _recover(path)
    if not path.exists():
        raise IndexStoreError(f"{path}: no index here; create one with `embedsearch build SOURCE --index {path}`")
    file = path / MANIFEST
    if path.is_dir() and not file.exists() and ((path / GENERATIONS).is_dir() or (path / SEGMENTS).is_dir()):
        raise CorruptIndexError(f"{file}: missing, though {path} holds an index's segments and generations; "
                                "restore the file from a backup, or rebuild")
    if not path.is_dir() or not file.exists():
        raise IndexStoreError(f"{path}: not an embedsearch index (no {MANIFEST}); pass the folder `build` wrote")
    try:
        manifest, _ = unsealed(json.loads(file.read_text()))  # the seal is checked once it parses (manifest.read)
        version = manifest["format_version"]
        if version >= 2:
            _ = (manifest["model"]["name"], manifest["model"]["fingerprint"], manifest["model"]["dimension"],
                 manifest["index"]["settings"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CorruptIndexError(f"{file}: unreadable or incomplete manifest; rebuild with `embedsearch build`") \
            from exc
    if version > FORMAT_VERSION:
        raise IndexStoreError(f"{path}: index format {version} is newer than this embedsearch reads "
                              f"({FORMAT_VERSION}); upgrade with `pip install -U embedsearch`")
    if version < SEGMENTED:
        raise IndexStoreError(f"{path}: index format {version} predates segments; convert it in place with "
                              f"`embedsearch upgrade --index {path}` (nothing is re-embedded)")
    return manifest


@contextmanager
def atomic_folder(path: Path) -> Iterator[Path]:
    """Yield an empty temporary folder; on success it replaces ``path``, on any error it vanishes.
    ``path`` must be a new path, an empty folder or an index (``check_target``)."""
    given = Path(path)
    path = check_target(given)
    try:
        with staged_folder(path, replace=True) as tmp:
            yield tmp
            for name in KEPT_ON_REBUILD:
                if (path / name).is_dir() and not (tmp / name).exists():
                    shutil.copytree(path / name, tmp / name)
    except OSError as exc:
        raise InputError(f"cannot write index {given}: {exc.strerror or exc}; nothing was changed") from exc


def _recover(path: Path) -> None:
    """If a whole-folder swap (a rebuild) was interrupted between its two renames, put the previous
    index back: the newest complete one."""
    if path.exists() or not path.parent.exists():
        return
    olds = [p for p in path.parent.glob(f".{path.name}.old-*") if (p / MANIFEST).exists()]
    if olds:
        os.rename(max(olds, key=lambda p: p.stat().st_mtime), path)


def reap_temporary(folder: Path, older_than: float) -> None:
    """Remove ``.NAME.tmp-*`` leftovers of writers that died, once they are older than ``older_than`` seconds."""
    cutoff = time.time() - older_than
    for item in folder.glob(".*.tmp-*") if folder.is_dir() else []:
        try:
            if item.stat().st_mtime < cutoff:
                shutil.rmtree(item) if item.is_dir() else item.unlink()
        except OSError:
            continue


def size_on_disk(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
