"""Topics for the service, computed off the request path: a background thread fits them when none are
saved (one worker fits, the others wait on a file lock and then read its result) and, after each new
generation, carries the last fit over to the new documents (``topics.extend``: a neighbour vote, cheap).
Until the first fit is ready, ``/topics`` and ``/map`` answer 503 saying so; afterwards they serve the
newest model ready, naming the generation it belongs to. A fit that fails (a shard folder briefly away, memory)
is tried again after a wait that doubles each time, so a passing fault does not disable topics until the next
commit. A cluster's are fitted the same way (a sample
across its shards, the rest assigned shard by shard)."""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass
from typing import Any

from ..topics import TopicModel
from .live import Served

log = logging.getLogger("embedsearch.serve")


@dataclass(frozen=True)
class Ready:
    model: TopicModel
    generation: int


class TopicsState:
    """The newest topics ready, and one background thread bringing them up to the generation last wanted."""

    def __init__(self, enabled: bool = True, retry_seconds: float = 60.0):
        self.enabled = enabled
        self.retry_seconds = retry_seconds
        self.ready: Ready | None = None
        self.failure: str | None = None
        self.next_try: float = 0.0
        self._wanted: Any = None
        self._wake = threading.Event()
        self._thread = threading.Thread(target=self._run, name="embedsearch-topics", daemon=True)
        self._started = False

    def want(self, wanted: Any) -> None:
        """Bring topics up to ``wanted`` (one index's ``Served``) in the background (the latest wish wins)."""
        if not self.enabled:
            return
        self._wanted = wanted
        self._wake.set()
        if not self._started:
            self._started = True
            self._thread.start()

    def require(self) -> Ready:
        """The newest model ready, or the API's answer for why there is none yet."""
        from .guard import ApiError

        if self.ready is None:
            if not self.enabled:
                raise ApiError(404, "topics are off on this server (started with --no-topics); run "
                                    "`embedsearch topics --index PATH` and restart without it")
            if self.failure:
                wait = self.retry_in()
                raise ApiError(503, f"topics could not be computed: {self.failure}; trying again in {wait} s",
                               {"Retry-After": str(wait)})
            raise ApiError(503, "topics are being computed; try again in a minute", {"Retry-After": "30"})
        return self.ready

    def retry_in(self) -> int:
        """Whole seconds until a failed fit is tried again (at least 1)."""
        return max(1, round(self.next_try - time.time()))

    def topic_of(self, doc_id: str) -> dict[str, Any] | None:
        """A document's topic in the newest model ready (None before one is, or for a newer document)."""
        ready = self.ready
        found = ready.model.topic_of(doc_id) if ready is not None and doc_id in ready.model.row_of else None
        return None if found is None else {"id": found.id, "name": found.title, "label": found.label, "size": found.size}

    def _run(self) -> None:
        failed, delay = None, self.retry_seconds
        while True:
            woken = self._wake.wait(None if failed is None else max(0.0, self.next_try - time.time()))
            self._wake.clear()
            wanted, self._wanted = (self._wanted, None) if woken else (failed, None)
            if wanted is None:
                continue
            self.failure = None
            try:
                self.ready = _ready(wanted) or self.ready
                failed, delay = None, self.retry_seconds
            except Exception as exc:  # the service keeps serving search and dedup without topics
                log.warning("topics failed (trying again in %.0f s): %s", delay, exc)
                failed, self.next_try = wanted, time.time() + delay
                self.failure, delay = " ".join(str(exc).split()), min(delay * 2, 3600.0)


def _ready(served: Served) -> Ready | None:
    return None if len(served.index) == 0 else Ready(_fit(served), served.index.generation)


def _fit(served: Served) -> TopicModel:
    """Load, carry over or fit. A first fit (UMAP, HDBSCAN, numba: about 150 MB that a Python process keeps
    once loaded) runs in a child process that ends with it; the worker then reads the saved result."""
    from filelock import FileLock

    index = served.index
    folder = index.path / "topics"
    folder.mkdir(exist_ok=True)
    with FileLock(str(folder / ".fit.lock")):
        if not any(folder.glob("*/model.json")):
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"), initializer=_end_with,
                                     initargs=(os.getpid(),)) as child:
                child.submit(_fit_saved, str(index.path), index.generation).result()
        return index.topics()


def _end_with(parent: int) -> None:
    """In the fitting child: end when the server that started it ends (killed mid-fit, its pool never shuts
    down, and the child would otherwise finish the fit and then wait for work forever, holding its memory)."""
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1)
        os._exit(1)

    threading.Thread(target=watch, name="embedsearch-orphan-guard", daemon=True).start()


def _fit_saved(path: str, generation: int) -> None:
    from ..index import Index

    Index.load(path, generation=generation).topics()
