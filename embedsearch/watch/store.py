"""Saved searches kept with the index, as files it owns: ``watches/NAME.json`` (what the watch asks) and
``watches/NAME.seen.npy`` (the 64-bit hashes of the ids the index held when the watch last ran, sorted), each
written atomically. A rebuild carries the folder over and ``compact`` never touches it."""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..disk.durable import durable_file
from ..errors import InputError, UnknownIdError

FOLDER = "watches"
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
    folder = root / FOLDER
    folder.mkdir(exist_ok=True)
    if seen is not None:
        with durable_file(folder / f"{watch.name}.seen.npy", binary=True) as fh:
            np.save(fh, np.asarray(seen, dtype=np.uint64))
    with durable_file(folder / f"{watch.name}.json") as fh:
        json.dump(watch.to_json(), fh, ensure_ascii=False, indent=1)


def load(root: Path, name: str) -> tuple[Watch, np.ndarray]:
    file = root / FOLDER / f"{check_name(name)}.json"
    if not file.is_file():
        known = ", ".join(w.name for w in listed(root)) or "none yet"
        raise UnknownIdError(f"no watch named {name!r} in {root} (watches: {known}); add one with "
                             f"`embedsearch watch add {name} QUERY --index {root}`")
    try:
        watch = Watch.from_json(json.loads(file.read_text()))
        seen = np.load(root / FOLDER / f"{name}.seen.npy")
    except (OSError, ValueError, TypeError) as exc:
        from ..errors import CorruptIndexError

        raise CorruptIndexError(f"{file}: unreadable watch ({type(exc).__name__}); remove it and add it again") \
            from exc
    return watch, seen


def listed(root: Path) -> list[Watch]:
    found = []
    for file in sorted((root / FOLDER).glob("*.json")) if (root / FOLDER).is_dir() else ():
        try:
            found.append(Watch.from_json(json.loads(file.read_text())))
        except (OSError, ValueError, TypeError):
            continue
    return found


def remove(root: Path, name: str) -> None:
    load(root, name)
    for suffix in (".json", ".seen.npy"):
        (root / FOLDER / f"{name}{suffix}").unlink(missing_ok=True)
