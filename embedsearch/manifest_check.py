"""The one section of an index manifest the store keeps for a layer above it: the ranking settings, checked
when an index is opened, as ``store.manifest`` checks the rest (exit 3 naming the file, never a TypeError)."""

from __future__ import annotations

from pathlib import Path

from .errors import CorruptIndexError, EmbedsearchError
from .retrieval.search import SearchSettings
from .store.manifest import Manifest
from .store.manifest import read as read_manifest


def load_manifest(path: Path) -> Manifest:
    """The typed manifest of the index at ``path``, every section checked."""
    manifest = read_manifest(path)
    try:
        SearchSettings(**manifest.search)
    except (EmbedsearchError, TypeError, ValueError) as exc:
        raise CorruptIndexError(f"{path / 'manifest.json'}: search holds a value this version cannot use "
                                f"({str(exc).splitlines()[0]}); restore the file, or rebuild the index") from None
    return manifest
