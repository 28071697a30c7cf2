"""The manifest of a new index, assembled once for both builds (in process and on Ray), and the section
the store keeps for a layer above it (the ranking settings) checked when an index is opened, as
``store.manifest`` checks the rest (exit 3 naming the file, never a TypeError)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from ..errors import CorruptIndexError, EmbedsearchError
from ..retrieval.settings import SearchSettings
from ..embedding.settings import ModelEntry
from ..store.manifest import Manifest
from ..store.manifest import read as read_manifest
from ..store.settings import LexicalSettings, StoreSettings, VectorSettings


def new_manifest(model: ModelEntry, vectors: VectorSettings = VectorSettings(),
                 lexical: LexicalSettings = LexicalSettings(), search: SearchSettings = SearchSettings(),
                 storage: StoreSettings = StoreSettings(), sources: Sequence[str | Path] = (),
                 name: str = "") -> Manifest:
    """The manifest of a new index built with these settings (``model``: ``Embedder.manifest_entry()``)."""
    return Manifest.new(model, vectors=vectors, lexical=lexical, search=asdict(search), store=storage,
                        sources=tuple(str(s) for s in sources), name=name)


def load_manifest(path: Path) -> Manifest:
    """The typed manifest of the index at ``path``, every section checked."""
    manifest = read_manifest(path)
    try:
        SearchSettings(**manifest.search)
    except (EmbedsearchError, TypeError, ValueError) as exc:
        raise CorruptIndexError(f"{path / 'manifest.json'}: search holds a value this version cannot use "
                                f"({str(exc).splitlines()[0]}); restore the file, or rebuild the index") from None
    return manifest
