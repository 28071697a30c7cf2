"""The index manifest (``manifest.json``) as one frozen dataclass: parsed and validated here, written here.

Both build paths (local and Ray) make it with ``Manifest.new`` and write it with ``to_json``; a missing,
unknown or mistyped key is one ``CorruptIndexError`` naming the file and the key (exit 3), never a
``TypeError`` in a later add or merge. The kind of each segment's vector index lives in its generation
entry, not here: the manifest holds what was asked for, the generations what was built."""

from __future__ import annotations

import json
import os
from dataclasses import MISSING, asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from ..embedding.precision import LEGACY_PRECISION
from ..embedding.settings import EmbedSettings, ModelEntry
from ..errors import CorruptIndexError, EmbedsearchError
from ..disk.durable import sealed, unsealed, write_json
from ..version import __version__
from .files import FORMAT_VERSION, MANIFEST, now, read_manifest
from .provenance import provenance as machine
from .settings import LexicalSettings, MergePolicy, StoreSettings, VectorSettings

LEGACY_INDEX_KEYS = ("type", "ondisk")  # written by earlier versions; the generations say the same


@dataclass(frozen=True)
class Manifest:
    model: ModelEntry
    vectors: VectorSettings = VectorSettings()
    lexical: LexicalSettings = LexicalSettings()
    store: StoreSettings = StoreSettings()
    search: dict[str, Any] = field(default_factory=dict)  # the retrieval layer's settings, checked by it
    sources: tuple[str, ...] = ()  # as the user named them, for display
    source_paths: tuple[str, ...] = ()  # the same, resolved when built: what output guards compare
    built_at: str = ""
    package_version: str = __version__
    format_version: int = FORMAT_VERSION
    metric: str = "cosine"
    provenance: dict[str, Any] | None = None
    upgraded_from: int | None = None
    name: str = ""  # what a reader calls the corpus (a heading), not its folder

    @classmethod
    def new(cls, model: ModelEntry, **sections: Any) -> Manifest:
        """The manifest of an index built now, on this machine (``sections``: the other fields)."""
        sections.setdefault("source_paths", tuple(os.path.realpath(s) for s in sections.get("sources", ())))
        return cls(model, **sections, built_at=now(), provenance=machine())

    def to_json(self) -> dict[str, Any]:
        out = {"format_version": self.format_version, "package_version": self.package_version, "metric": self.metric,
               "built_at": self.built_at, **({"provenance": self.provenance} if self.provenance else {}),
               "model": self.model.to_json(),
               "sources": list(self.sources), "source_paths": list(self.source_paths), "lexical": asdict(self.lexical), "search": dict(self.search),
               "store": asdict(self.store), "index": {"settings": asdict(self.vectors)}}
        out = {**out, "name": self.name} if self.name else out
        return out if self.upgraded_from is None else {**out, "upgraded_from": self.upgraded_from}

    @classmethod
    def parse(cls, file: Path, data: Any) -> Manifest:
        """``data`` (the file's JSON) as a manifest, or an error naming ``file`` and the key at fault."""
        top = _object(file, "", data)
        _known(file, "", top, {f.name for f in fields(cls)} - {"vectors"} | {"index"})
        index = _object(file, "index", _required(file, top, "index"))
        _known(file, "index", index, {"settings", *LEGACY_INDEX_KEYS})
        model = _object(file, "model", _required(file, top, "model"))
        store = _object(file, "store", top.get("store", {}))
        try:
            return cls(
                model=ModelEntry(**{**_typed(file, "model", model, ModelEntry, skip={"settings"}),
                                    "settings": _settings(file, "model.settings", _model_settings(file, model),
                                                          EmbedSettings)}),
                vectors=_settings(file, "index.settings", _required(file, index, "settings", "index"), VectorSettings),
                lexical=_settings(file, "lexical", {"forms": False, **top.get("lexical", {})}, LexicalSettings),
                store=StoreSettings(merge=_settings(file, "store.merge", store.get("merge", {}), MergePolicy),
                                    **_plain(file, "store", store, StoreSettings)),
                search=_object(file, "search", top.get("search", {})),
                sources=tuple(_list_of_text(file, "sources", top.get("sources", []))),
                source_paths=tuple(_list_of_text(file, "source_paths", top.get("source_paths", []))),
                **{k: top[k] for k in ("built_at", "package_version", "format_version", "metric", "provenance",
                                       "upgraded_from", "name") if k in top})
        except (EmbedsearchError, TypeError, ValueError) as exc:
            raise CorruptIndexError(f"{file}: holds a value this version cannot use ({str(exc).splitlines()[0]}); "
                                    "restore the file, or rebuild the index") from None


def _fail(file: Path, message: str) -> CorruptIndexError:
    return CorruptIndexError(f"{file}: {message}; restore the file, or rebuild the index")


def _object(file: Path, name: str, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(file, f"{name or 'the manifest'!r} should be an object, found {type(value).__name__}")
    return value


def _required(file: Path, section: dict[str, Any], key: str, name: str = "") -> Any:
    if key not in section:
        raise _fail(file, f"key {(name + '.' if name else '') + key!r} is missing")
    return section[key]


def _known(file: Path, name: str, section: dict[str, Any], known: set[str]) -> None:
    unknown = sorted(set(section) - known)
    if unknown:
        where = f"{name}.{unknown[0]}" if name else unknown[0]
        raise _fail(file, f"unknown key {where!r} (known{' in ' + name if name else ''}: {', '.join(sorted(known))})")


def _plain(file: Path, name: str, section: dict[str, Any], kind: type) -> dict[str, Any]:
    """The section's scalar keys for ``kind`` (nested settings are read by their own dataclass)."""
    _known(file, name, section, {f.name for f in fields(kind)})
    return {k: v for k, v in section.items() if not isinstance(v, dict)}


def _model_settings(file: Path, model: dict[str, Any]) -> Any:
    """The embedding settings; a manifest written before precisions existed was built at fp32."""
    section = _required(file, model, "settings", "model")
    return {"precision": LEGACY_PRECISION, **section} if isinstance(section, dict) else section


def _settings(file: Path, name: str, section: Any, kind: type) -> Any:
    try:
        return kind(**_plain(file, name, _object(file, name, section), kind))
    except (EmbedsearchError, TypeError, ValueError) as exc:
        raise _fail(file, f"{name} holds a value this version cannot use ({str(exc).splitlines()[0]})") from None


def _typed(file: Path, name: str, section: dict[str, Any], kind: type, skip: set[str]) -> dict[str, Any]:
    """The section's keys, each present and of the type ``kind`` declares (``int`` or ``str`` here)."""
    _known(file, name, section, {f.name for f in fields(kind)})
    out = {}
    for f in fields(kind):
        if f.name in skip or (f.name not in section and f.default is not MISSING):
            continue
        value = _required(file, section, f.name, name)
        wanted = int if f.type == "int" else str
        if not isinstance(value, wanted) or isinstance(value, bool):
            raise _fail(file, f"key {name + '.' + f.name!r} should be {'a whole number' if wanted is int else 'text'}")
        out[f.name] = value
    return out


def _list_of_text(file: Path, name: str, value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _fail(file, f"{name!r} should be a list of paths")
    return value


def read(path: Path) -> Manifest:
    """The manifest of the index at ``path``, after checking the folder holds one this version reads."""
    manifest = Manifest.parse(path / MANIFEST, read_manifest(path))
    if not unsealed(json.loads((path / MANIFEST).read_text()))[1]:  # after parsing: a damaged key is named first
        raise CorruptIndexError(f"{path / MANIFEST}: does not match the checksum it was written with; restore it "
                                "from a backup, or rebuild with `embedsearch build`")
    return manifest


def write(folder: Path, manifest: Manifest) -> None:
    write_json(folder / MANIFEST, sealed(manifest.to_json()))
