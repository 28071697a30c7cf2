"""The settings sections of an index manifest, checked against the dataclasses that read them, once, when
an index is opened: a missing, unknown or mistyped key is one ``CorruptIndexError`` naming the file and the
key (exit 3), never a ``TypeError`` deep inside a later add or merge."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Any

from .embed import EmbedSettings
from .errors import CorruptIndexError, EmbedsearchError
from .lexical import LexicalSettings
from .search import SearchSettings
from .store.compact import MergePolicy
from .vectors import VectorSettings
from .writer import StoreSettings

SECTIONS: tuple[tuple[tuple[str, ...], type, bool], ...] = (
    (("model", "settings"), EmbedSettings, True), (("index", "settings"), VectorSettings, True),
    (("lexical",), LexicalSettings, False), (("search",), SearchSettings, False),
    (("store",), StoreSettings, False), (("store", "merge"), MergePolicy, False))


def check_manifest(file: Path, manifest: dict[str, Any]) -> dict[str, Any]:
    """``manifest``, once every settings section builds its dataclass; else an error naming ``file`` and the key."""
    for keys, kind, required in SECTIONS:
        name = ".".join(keys)
        section: Any = manifest
        for key in keys:
            section = section.get(key) if isinstance(section, dict) else None
        if section is None:
            if required:
                raise CorruptIndexError(f"{file}: key {name!r} is missing; restore the file, or rebuild the index")
            continue
        if not isinstance(section, dict):
            raise CorruptIndexError(f"{file}: {name!r} should be an object, found {type(section).__name__}")
        known = {f.name for f in fields(kind)}
        unknown = sorted(set(section) - known)
        if unknown:
            raise CorruptIndexError(f"{file}: unknown key {name + '.' + unknown[0]!r} (known in {name}: "
                                    f"{', '.join(sorted(known))}); "
                                    "restore the file, or rebuild the index")
        try:
            kind(**{k: v for k, v in section.items() if not isinstance(v, dict)})
        except (EmbedsearchError, TypeError, ValueError) as exc:
            raise CorruptIndexError(f"{file}: {name} holds a value this version cannot use "
                                    f"({str(exc).splitlines()[0]}); restore the file, or rebuild the index") from None
    return manifest
