"""Durable file writes, shared by the index, the topic results and the ONNX export: everything is
written under a temporary name, fsynced, then renamed into place and the folder fsynced, so a crash
leaves either the old state or the new one."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


def fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_tree(folder: Path) -> None:
    """Flush every file and folder below ``folder`` (and the folder itself) to disk."""
    for item in sorted(folder.rglob("*"), reverse=True):
        if item.is_file():
            with item.open("rb") as fh:
                os.fsync(fh.fileno())
        elif item.is_dir():
            fsync_dir(item)
    fsync_dir(folder)


def sha256(file: Path) -> str:
    digest = hashlib.sha256()
    with file.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()


def file_records(folder: Path, skip: tuple[str, ...] = ()) -> dict[str, dict[str, Any]]:
    """Size and SHA-256 of every file below ``folder`` (relative names), recorded for ``check``."""
    return {item.relative_to(folder).as_posix(): {"bytes": item.stat().st_size, "sha256": sha256(item)}
            for item in sorted(folder.rglob("*")) if item.is_file() and item.name not in skip}


@contextmanager
def durable_file(path: Path, binary: bool = False, newline: str | None = None, exclusive: bool = False) -> Iterator:
    """The one way a file is written: an open temporary sibling of ``path``, fsynced and moved onto ``path``
    only when the block succeeds (removed otherwise), then the folder fsynced. ``exclusive`` links instead
    of renaming, so a file another process published first is never replaced (``FileExistsError``)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.tmp-")
    try:
        with (os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8", newline=newline)) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.link(tmp, path) if exclusive else os.replace(tmp, path)
        fsync_dir(path.parent)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def json_text(payload: Any) -> str:
    return json.dumps(payload, indent=1, ensure_ascii=False) + "\n"


SEAL = "sha256"


def _digest(payload: dict[str, Any]) -> str:
    canonical = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def sealed(payload: dict[str, Any]) -> dict[str, Any]:
    """``payload`` with the SHA-256 of its canonical form under ``sha256``: a record (a generation, the
    manifest) whose damage still parses as JSON (a digit changed) is caught on reading."""
    return {**payload, SEAL: _digest(payload)}


def unsealed(payload: Any) -> tuple[Any, bool]:
    """``payload`` without its seal, and whether the seal holds (a record written before seals has none and holds)."""
    if not isinstance(payload, dict) or SEAL not in payload:
        return payload, True
    body = {k: v for k, v in payload.items() if k != SEAL}
    return body, payload[SEAL] == _digest(body)


def write_json(path: Path, payload: Any, exclusive: bool = False) -> None:
    with durable_file(path, exclusive=exclusive) as fh:
        fh.write(json_text(payload))


@contextmanager
def staged_folder(target: Path, replace: bool = False) -> Iterator[Path]:
    """Yield an empty temporary sibling of ``target``; when the block succeeds it is flushed and renamed
    to ``target`` (replacing an existing folder only with ``replace``; otherwise a folder another process
    published first wins and this one is dropped). On any error the temporary folder vanishes."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.tmp-"))
    try:
        yield tmp
        fsync_tree(tmp)
        if target.exists() and replace:
            old = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.old-"))
            os.rmdir(old)
            os.rename(target, old)
            os.rename(tmp, target)
            fsync_dir(target.parent)
            shutil.rmtree(old, ignore_errors=True)
        elif not target.exists():
            try:
                os.rename(tmp, target)
            except OSError:
                if not target.exists():
                    raise
            fsync_dir(target.parent)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
