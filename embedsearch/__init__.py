"""embedsearch: find related papers, map topics and catch near-duplicate abstracts by meaning. Names are
imported on first use, so that a command loads only what it needs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .version import __version__

if TYPE_CHECKING:
    from .corpus import Document, FieldMap
    from .embedding.settings import DEFAULT_MODEL, EmbedSettings, ModelEntry
    from .errors import EmbedsearchError, IndexStoreError, InputError, MissingDependencyError, ModelMismatchError
    from .index import Index
    from .retrieval.answer import Hit
    from .reviewers import Matcher
    from .store.settings import VectorSettings

_FROM = {"Document": "corpus", "FieldMap": "corpus", "DEFAULT_MODEL": "embedding.settings",
         "EmbedSettings": "embedding.settings", "ModelEntry": "embedding.settings", "EmbedsearchError": "errors",
         "IndexStoreError": "errors", "InputError": "errors", "MissingDependencyError": "errors",
         "ModelMismatchError": "errors", "Index": "index", "Hit": "retrieval.answer", "Matcher": "reviewers",
         "VectorSettings": "store.settings"}


def __getattr__(name: str):
    """``embedsearch.Index`` and the rest, imported on first use (``Matcher``: reviewers for submissions)."""
    if name not in _FROM:
        raise AttributeError(f"module 'embedsearch' has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f".{_FROM[name]}", __name__), name)


__all__ = [
    "DEFAULT_MODEL",
    "Document",
    "EmbedSettings",
    "EmbedsearchError",
    "FieldMap",
    "Hit",
    "Index",
    "IndexStoreError",
    "InputError",
    "Matcher",
    "MissingDependencyError",
    "ModelEntry",
    "ModelMismatchError",
    "VectorSettings",
    "__version__",
]
