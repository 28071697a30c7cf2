"""Query encoding shared by a worker's request threads: texts that arrive while the model is busy are
encoded together in its next call (one ONNX run for many queries costs far less than one run each).
Short texts (queries), a few long ones (an abstract being checked) and bulk (abstracts being added, cut
into small parts) wait in separate lanes. Queries go first; long texts go one small call at a time, checks
and parts of adds taking turns: a search waits for at most one such call, a duplicate check for at most one
part of an add however many abstracts are being added, and an add keeps moving under a stream of checks.
Nothing waits on purpose: at low load a text is encoded alone, at once."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Sequence

import numpy as np

from ..embedding.encoder import Encoder

SHORT_CHARS = 400
LONG_PER_CALL = 2


class _Request:
    __slots__ = ("done", "error", "texts", "vectors")

    def __init__(self, texts: Sequence[str]):
        self.texts = list(texts)
        self.done = threading.Event()
        self.vectors: np.ndarray | None = None
        self.error: BaseException | None = None


class BatchingEncoder:
    """Wraps an encoder (``encoder.Encoder``); ``encode`` may be called from any thread. Requests with
    more than ``LONG_PER_CALL`` long texts are split, so each call of the model stays short."""

    def __init__(self, inner: Encoder, max_batch: int = 64):
        self.inner = inner
        self.fingerprint = inner.fingerprint
        self.dimension = inner.dimension
        self.max_batch = max_batch
        self._short: deque[_Request] = deque()
        self._long: deque[_Request] = deque()
        self._bulk: deque[_Request] = deque()
        self._ready = threading.Condition()
        self._bulk_turn = False
        threading.Thread(target=self._loop, name="embedsearch-encode", daemon=True).start()

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dimension or 0), dtype=np.float32)
        if all(len(t) <= SHORT_CHARS for t in texts):
            parts, lane = [_Request(texts)], self._short
        else:
            parts = [_Request(texts[i:i + LONG_PER_CALL]) for i in range(0, len(texts), LONG_PER_CALL)]
            lane = self._long if len(parts) == 1 else self._bulk
        with self._ready:
            lane.extend(parts)
            self._ready.notify()
        for part in parts:
            part.done.wait()
            if part.error is not None:
                raise part.error
        return np.concatenate([p.vectors for p in parts])

    def _take(self) -> list[_Request]:
        with self._ready:
            while not (self._short or self._long or self._bulk):
                self._ready.wait()
            if self._short:
                batch, size = [], 0
                while self._short and size < self.max_batch:
                    batch.append(self._short.popleft())
                    size += len(batch[-1].texts)
                return batch
            lane = self._bulk if self._bulk and (self._bulk_turn or not self._long) else self._long
            self._bulk_turn = lane is self._long
            return [lane.popleft()]

    def _loop(self) -> None:
        while True:
            batch = self._take()
            try:
                vectors = self.inner.encode([t for r in batch for t in r.texts])
            except BaseException as exc:  # each caller gets the error in its own thread
                for r in batch:
                    r.error = exc
                    r.done.set()
                continue
            start = 0
            for r in batch:
                r.vectors, start = vectors[start:start + len(r.texts)], start + len(r.texts)
                r.done.set()
