"""embedsearch: find related papers, map topics and catch near-duplicate abstracts by meaning."""

from .corpus import Document, FieldMap  # noqa: E402
from .embedding.settings import DEFAULT_MODEL, EmbedSettings, ModelEntry
from .errors import EmbedsearchError, IndexStoreError, InputError, MissingDependencyError, ModelMismatchError  # noqa: E402
from .index import Index  # noqa: E402
from .retrieval.search import Hit
from .store.settings import VectorSettings
from .version import __version__


def __getattr__(name: str):
    """``embedsearch.Matcher`` (reviewers for submissions), imported on first use."""
    if name == "Matcher":
        from .reviewers import Matcher

        return Matcher
    raise AttributeError(f"module 'embedsearch' has no attribute {name!r}")


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
    "MissingDependencyError",
    "ModelEntry",
    "ModelMismatchError",
    "VectorSettings",
    "__version__",
]
