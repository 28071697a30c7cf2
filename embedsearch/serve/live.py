"""The index a worker serves. Each request reads one ``Served`` (one generation, opened and warmed
before it is shown); a follower thread notices a newer generation (committed through the API or by
``embedsearch add`` in any process) within ``follow_seconds`` and swaps it in. Requests in flight keep
the generation they started with: nothing blocks or fails while the index changes."""

from __future__ import annotations

import logging
import threading
from functools import cached_property
from pathlib import Path
from typing import Any

from ..index import Index
from .batcher import BatchingEncoder
from .settings import ServeSettings

log = logging.getLogger("embedsearch.serve")


class Served:
    """One generation of the index with what the service derives from it once. Its queries are encoded by
    the worker's shared ``BatchingEncoder``; every route answers through ``index`` (the facade), whose reader
    is the index itself or, for a cluster on Ray Serve, the shards where they run."""

    def __init__(self, index: Index, encoder: BatchingEncoder | None = None):
        self.index = index
        if encoder is not None and encoder.fingerprint == index.snapshot.manifest.model.fingerprint:
            index.snapshot.encoder = encoder
        self.remote = index.parts is not None

    @cached_property
    def info(self) -> dict[str, Any]:
        """``Index.info`` (it measures the folder on disk: once per generation, not per request)."""
        return self.index.info()

    @cached_property
    def fields(self) -> list[dict[str, Any]]:
        from ..store.fields import describe

        snap = self.index.snapshot
        return describe([(s.folder, m) for s, m in zip(snap.segments, snap.live)])

    def warm(self) -> Served:
        """Open everything a first request would (vector indexes, BM25 statistics, ids, the encoder, the
        evidence's sentences and word-piece vectors)."""
        if len(self.index):
            if self.remote:
                self.index.encode(["warm up"])
            else:
                self.index.find("warm up", 1)
            self.index.documents.row_of  # noqa: B018
        self.fields  # noqa: B018
        return self


class Live:
    """The newest generation of the index at ``path``, followed by a daemon thread."""

    def __init__(self, path: Path, settings: ServeSettings, on_change=None, parts=None):
        self.path, self.parts = Path(path), parts
        self.settings = settings
        self._swap = threading.Lock()
        self._on_change = on_change
        first = Index.load(self.path, parts=parts)
        self.encoder = BatchingEncoder(first.snapshot.encoder)
        self.current = Served(first, self.encoder).warm()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._follow, name="embedsearch-follow", daemon=True)
        self._thread.start()

    def refresh(self) -> Served:
        """Serve the newest generation from now on (a no-op when it already is)."""
        with self._swap:
            newest = self.current.index.folder.newest()
            if newest != self.current.index.generation:
                self.current = Served(Index.load(self.path, generation=newest, parts=self.parts), self.encoder).warm()
                if self._on_change is not None:
                    self._on_change(self.current)
        return self.current

    def _follow(self) -> None:
        while not self._stop.wait(self.settings.follow_seconds):
            try:
                self.refresh()
            except Exception as exc:  # a damaged or half-removed index: keep serving the last good generation
                log.warning("still serving generation %s: %s", self.current.index.generation, exc)

    def close(self) -> None:
        self._stop.set()
