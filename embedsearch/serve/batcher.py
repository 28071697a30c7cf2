"""Query encoding shared by a worker's request threads: texts that arrive while the model is busy are
encoded together in its next call (one ONNX run for many queries costs far less than one run each).
Nothing waits on purpose: at low load a text is encoded alone, at once."""

from __future__ import annotations

import queue
import threading
from collections.abc import Sequence

import numpy as np


class _Request:
    __slots__ = ("texts", "done", "vectors", "error")

    def __init__(self, texts: Sequence[str]):
        self.texts = list(texts)
        self.done = threading.Event()
        self.vectors: np.ndarray | None = None
        self.error: BaseException | None = None


class BatchingEncoder:
    """Wraps an encoder (``encoder.Encoder``); ``encode`` may be called from any thread."""

    def __init__(self, inner, max_batch: int = 64):
        self.inner = inner
        self.fingerprint = getattr(inner, "fingerprint", None)
        self.dimension = getattr(inner, "dimension", None)
        self.max_batch = max_batch
        self.calls = 0
        self._queue: queue.SimpleQueue[_Request] = queue.SimpleQueue()
        threading.Thread(target=self._loop, name="embedsearch-encode", daemon=True).start()

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        request = _Request(texts)
        self._queue.put(request)
        request.done.wait()
        if request.error is not None:
            raise request.error
        assert request.vectors is not None
        return request.vectors

    def _loop(self) -> None:
        while True:
            batch = [self._queue.get()]
            size = len(batch[0].texts)
            while size < self.max_batch:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
                size += len(batch[-1].texts)
            try:
                vectors = self.inner.encode([t for r in batch for t in r.texts])
                self.calls += 1
            except BaseException as exc:  # each caller gets the error in its own thread
                for r in batch:
                    r.error = exc
                    r.done.set()
                continue
            start = 0
            for r in batch:
                r.vectors, start = vectors[start:start + len(r.texts)], start + len(r.texts)
                r.done.set()
