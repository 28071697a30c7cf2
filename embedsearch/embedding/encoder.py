"""What turns text into vectors, as one small protocol (as SemHash's encoder protocol), and a
deterministic encoder that needs no model.

``Encoder`` is implemented by the bulk path (``embed.Embedder``), the fast query path
(``query_encoder.OnnxQueryEncoder``, ``TorchQueryEncoder``), the Ray actor (``distributed.EncodeActor``),
static models (``distilled.StaticEncoder``) and ``HashingEncoder``. The last is for tests and dry runs: ``--model hashing-384`` builds a real
index (segments, FAISS, BM25, topics, dedup all work) in seconds without loading a neural model, but
its vectors only know which words texts share, so never use it for real search."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from ..errors import InputError

HASHING = "hashing-"
_WORD = re.compile(r"\w+")


@runtime_checkable
class Encoder(Protocol):
    """Texts to unit float32 vectors of ``dimension``; equal ``fingerprint`` means equal vectors."""

    fingerprint: str
    dimension: int

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


def is_hashing(model: str) -> bool:
    return model.startswith(HASHING)



class HashingEncoder:
    """Each lower-cased word and word pair adds a signed direction chosen by its hash; the sum is normalised.
    Deterministic across processes and machines; texts sharing words get close vectors."""

    def __init__(self, name: str = "hashing-384"):
        size = name[len(HASHING):]
        if not is_hashing(name) or not size.isdigit() or not 8 <= int(size) <= 4096:
            raise InputError(f"model {name!r}: the hashing test encoder is named hashing-DIM with 8 <= DIM <= 4096")
        self.name = name
        self.dimension = int(size)
        self.fingerprint = hashlib.sha256(f"embedsearch-hashing-v1:{name}".encode()).hexdigest()[:16]

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            words = _WORD.findall(text.lower())
            for feature in words + [f"{a} {b}" for a, b in zip(words, words[1:])]:
                digest = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "little")
                out[row, digest % self.dimension] += 1.0 if (digest >> 63) else -1.0
            if not out[row].any():
                out[row, int(hashlib.blake2b(text.encode(), digest_size=4).hexdigest(), 16) % self.dimension] = 1.0
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    def info(self) -> dict:
        return {"dimension": self.dimension, "max_seq_length": 0, "fingerprint": self.fingerprint}
