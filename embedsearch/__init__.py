"""embedsearch: find related papers, map topics and catch near-duplicate abstracts by meaning."""

__version__ = "0.1.0"

from .corpus import Document, FieldMap  # noqa: E402
from .embed import DEFAULT_MODEL, EmbedSettings  # noqa: E402
from .errors import (  # noqa: E402
    EmbedsearchError,
    IndexStoreError,
    InputError,
    MissingDependencyError,
    ModelMismatchError,
)
from .index import Index  # noqa: E402
from .search import Hit  # noqa: E402
from .vectors import VectorSettings  # noqa: E402

__all__ = ["DEFAULT_MODEL", "Document", "EmbedSettings", "EmbedsearchError", "FieldMap", "Hit", "Index",
           "IndexStoreError", "InputError", "MissingDependencyError", "ModelMismatchError", "VectorSettings"]
