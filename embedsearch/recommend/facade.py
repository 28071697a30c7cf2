"""The facade's recommendations (``Index`` inherits them): seeds from ids and a library file, answered by the
facade's ``reader`` (an index, or a cluster's shards)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..corpus.library import LibraryText
from ..retrieval.filters import Filter
from ..retrieval.parts import Fanout
from .model import Recommendations
from .settings import RecommendSettings


class Recommends:
    """Recommendations for the facade; the class provides ``path`` and ``reader``."""

    path: Path
    reader: Fanout

    def recommend(self, like: Sequence[str] = (), unlike: Sequence[str] = (),
                  library: str | Path | LibraryText | None = None,
                  k: int = 10, filters: Sequence[str | Filter] = (),
                  settings: RecommendSettings | None = None) -> Recommendations:
        """Papers like the ``like`` ids and a ``library`` file's entries (matched to the index, or embedded) and
        unlike ``unlike``: one seed is ``similar``; several, a linear classifier fitted for this request. A
        ``LibraryText`` is a library sent as text (the service's), read as its file would be."""
        from ..corpus.library import read_library
        from . import Seeds, recommend
        from .library import match

        if library is not None and not isinstance(library, LibraryText):
            library = Path(library)
        found = match(self.reader, read_library(library)) if library is not None else None
        return recommend(self.reader, Seeds.of(like, unlike, found), k, filters, settings or RecommendSettings(), found)
