"""Saved searches kept with the index, as files it owns: ``watches/NAME.json`` (what the watch asks, sealed, naming
its seen file with that file's checksum) and ``watches/NAME.HASH.seen.npy`` (the 64-bit hashes of the ids the index
held when the watch last ran, sorted; named by its contents, written before the record that names it, so a crash
between the two leaves the old pair whole). A rebuild carries the folder over and ``compact`` never touches it.
(Watches saved before checksums keep ``NAME.seen.npy``, named by no record, read as they are.)"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..disk.durable import durable_file, sealed, sha256, unsealed, write_json
from ..errors import CorruptIndexError, InputError, UnknownIdError
from .files import WATCHES

FOLDER = WATCHES
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


@dataclass(frozen=True)
class Watch:
    """A saved search: a query in the grammar, or liked / unliked ids and a library file (resolved)."""

    name: str
    query: str = ""
    like: tuple[str, ...] = ()
    unlike: tuple[str, ...] = ()
    library: str = ""
    k: int = 10
    filters: tuple[str, ...] = ()
    created: str = ""
    last_run: str = ""
    runs: int = 0

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "like": list(self.like), "unlike": list(self.unlike), "filters": list(self.filters)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Watch:
        return cls(**{**data, "like": tuple(data.get("like", ())), "unlike": tuple(data.get("unlike", ())),
                      "filters": tuple(data.get("filters", ()))})


def check_name(name: str) -> str:
    if not _NAME.match(name or ""):
        raise InputError(f"watch name {name!r}: use letters, digits, '.', '_' and '-' (at most 64, first a letter "
                         "or digit)")
    return name


def save(root: Path, watch: Watch, seen: np.ndarray | None = None) -> None:
    """Write the watch (and, given, its seen ids: a new file, then the record naming it, then the old file gone)."""
    folder = root / FOLDER
    folder.mkdir(exist_ok=True)
    record = folder / f"{watch.name}.json"
    old = _record(record)[1] if record.is_file() and seen is not None else None
    if seen is None:
        named = _record(record)[1] if record.is_file() else {}
    else:
        tmp = folder / f".{watch.name}.seen.tmp.npy"
        with durable_file(tmp, binary=True) as fh:
            np.save(fh, np.asarray(seen, dtype=np.uint64))
        digest = sha256(tmp)
        file = folder / f"{watch.name}.{digest[:16]}.seen.npy"
        tmp.replace(file)
        named = {"seen": file.name, "seen_sha256": digest}
    write_json(record, sealed({**watch.to_json(), **named}))
    if old and old.get("seen") not in (None, named.get("seen")):
        (folder / old["seen"]).unlink(missing_ok=True)
    if seen is not None:
        (folder / f"{watch.name}.seen.npy").unlink(missing_ok=True)  # a watch saved before checksums


def _record(file: Path) -> tuple[Watch, dict[str, str]]:
    """A watch's record and the seen file it names ({} for a watch saved before checksums)."""
    data, holds = unsealed(json.loads(file.read_text()))
    if not holds:
        raise ValueError("does not match the checksum it was written with")
    named = {k: data.pop(k) for k in ("seen", "seen_sha256") if k in data}
    return Watch.from_json(data), named


def seen_file(root: Path, name: str, named: dict[str, str]) -> Path:
    return root / FOLDER / named.get("seen", f"{name}.seen.npy")


def load(root: Path, name: str) -> tuple[Watch, np.ndarray]:
    file = root / FOLDER / f"{check_name(name)}.json"
    if not file.is_file():
        known = ", ".join(w.name for w in listed(root)) or "none yet"
        raise UnknownIdError(f"no watch named {name!r} in {root} (watches: {known}); add one with "
                             f"`embedsearch watch add {name} QUERY --index {root}`")
    try:
        watch, named = _record(file)
        seen_at = seen_file(root, name, named)
        if not seen_at.is_file():
            raise CorruptIndexError(f"{seen_at}: missing ({file.name} names it); remove the watch "
                                    f"(`embedsearch watch remove {name} --index {root}`) and add it again")
        if named and sha256(seen_at) != named["seen_sha256"]:
            raise CorruptIndexError(f"{seen_at}: does not match the checksum {file.name} recorded; remove the watch "
                                    f"(`embedsearch watch remove {name} --index {root}`) and add it again")
        seen = np.load(seen_at)
        if seen.ndim != 1 or seen.dtype != np.uint64:
            raise ValueError("not a list of 64-bit hashes")
    except (OSError, ValueError, TypeError) as exc:
        raise CorruptIndexError(f"{file}: unreadable watch ({type(exc).__name__}); remove it and add it again") \
            from exc
    return watch, seen


def problems(root: Path) -> list[str]:
    """Every watch of the index at ``root`` read whole (record and seen ids), and any seen file no record names."""
    folder = root / FOLDER
    if not folder.is_dir():
        return []
    found, named = [], set()
    for file in sorted(folder.glob("*.json")):
        try:
            _, seen = _record(file)
            named.add(seen_file(root, file.stem, seen).name)
            load(root, file.stem)
        except (OSError, ValueError, TypeError, KeyError):
            found.append(f"{file}: unreadable watch; remove it (`embedsearch watch remove {file.stem}`) and add it again")
        except (CorruptIndexError, InputError, UnknownIdError) as exc:
            found.append(str(exc))
    for file in sorted(folder.iterdir()):
        if file.name not in named and not file.name.endswith(".json") and not file.name.startswith("."):
            record = folder / f"{file.name.split('.seen.npy')[0].rsplit('.', 1)[0]}.json"
            found.append(f"{file}: no watch names it ({record} is gone); restore the record, or remove the file")
    return found


def listed(root: Path) -> list[Watch]:
    found = []
    for file in sorted((root / FOLDER).glob("*.json")) if (root / FOLDER).is_dir() else ():
        try:
            found.append(_record(file)[0])
        except (OSError, ValueError, TypeError):
            continue
    return found


def remove(root: Path, name: str) -> None:
    """Forget a watch (a damaged one too: removing is how a user gets past the damage)."""
    record = root / FOLDER / f"{check_name(name)}.json"
    if not record.is_file():
        load(root, name)  # the error naming the watches there are
    try:
        named = _record(record)[1]
    except (OSError, ValueError, TypeError):
        named = {}
    for file in (seen_file(root, name, named), root / FOLDER / f"{name}.seen.npy", record):
        file.unlink(missing_ok=True)
