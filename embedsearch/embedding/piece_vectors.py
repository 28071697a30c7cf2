"""A model's own word-piece vectors (its input embeddings, read from the safetensors file beside its
tokenizer) as a static sentence encoder: a sentence is the mean of its word pieces' vectors, stop words
left out. Picking the sentence of an abstract closest in meaning to a query this way costs a tokenizer pass
and a few lookups, a millisecond a page, where the transformer would cost a second; ``None`` for a model
whose folder holds neither (the hashing test encoder, a hub name not on disk)."""

from __future__ import annotations

import hashlib
from contextlib import suppress
from functools import lru_cache
from pathlib import Path

import numpy as np

STOP = frozenset("""a an and are as at be by for from has have in is it its of on or that the this to was were
we which with our their these those than then thus also can may not but into over under via using use used
based new show shows propose proposed approach method methods paper results""".split())
FORMAT = 1  # of the cached matrix and mask: raised when the stop words or the mask's rule change


class StaticVectors:
    def __init__(self, tokenizer, matrix: np.ndarray, keep: np.ndarray, name: str = ""):
        tokenizer.no_padding()
        tokenizer.no_truncation()
        self.tokenizer, self.matrix, self.keep, self.name = tokenizer, matrix, keep, name

    @classmethod
    def of(cls, model: str) -> StaticVectors | None:
        return _load(model)

    def pieces(self, texts: list[str]) -> list[np.ndarray]:
        """Each text's kept word pieces (stop words, punctuation and special tokens left out), as vocabulary ids."""
        if not texts:
            return []
        batch = getattr(self.tokenizer, "encode_batch_fast", self.tokenizer.encode_batch)  # no offsets: faster
        encoded = [self.tokenizer.encode(texts[0], add_special_tokens=False)] if len(texts) == 1 else \
            batch(texts, add_special_tokens=False)
        pieces = [np.asarray(e.ids, dtype=np.int64) for e in encoded]
        return [p[(p < len(self.keep))][self.keep[p[p < len(self.keep)]]] for p in pieces]

    def sums(self, pieces: list[np.ndarray]) -> np.ndarray:
        """The sum of each list's piece vectors (zero for an empty list): a sparse product when there are many,
        which reads each vector once instead of copying one per piece."""
        counts = np.array([len(p) for p in pieces], dtype=np.int64)
        if counts.sum() > 4096:
            from scipy.sparse import csr_matrix

            pointer = np.r_[0, np.cumsum(counts)]
            mixed = csr_matrix((np.ones(pointer[-1], np.float32), np.concatenate(pieces), pointer),
                               shape=(len(pieces), len(self.matrix)))
            return np.asarray(mixed @ np.asarray(self.matrix), dtype=np.float32)
        out = np.zeros((len(pieces), self.matrix.shape[1]), dtype=np.float32)
        if counts.sum():
            out[counts > 0] = np.add.reduceat(self.matrix[np.concatenate(pieces)],
                                              np.r_[0, np.cumsum(counts)[:-1]][counts > 0])
        return out

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit vectors, one per text (zero for a text of stop words only)."""
        sums = self.sums(self.pieces(texts))
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        return np.divide(sums, norms, out=np.zeros_like(sums), where=norms > 0)


@lru_cache(maxsize=2)
def _load(model: str) -> StaticVectors | None:
    from .embed import resolve_model

    try:
        folder = Path(resolve_model(model))
    except Exception:  # noqa: BLE001  (no bundled model installed: no static vectors either)
        return None
    weights, vocab = folder / "model.safetensors", folder / "tokenizer.json"
    if not (weights.is_file() and vocab.is_file()):
        return None
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(vocab))
    derived = _derived(weights, tokenizer)
    return None if derived is None else StaticVectors(tokenizer, *derived, model)


def _derived(weights: Path, tokenizer) -> tuple[np.ndarray, np.ndarray] | None:
    """The word-piece matrix (float32) and the mask of pieces kept, memory-mapped from the cache, where they are
    written on first use: reading them from the model's safetensors costs a tenth of a second a process."""
    from ..disk.durable import staged_folder
    from .cache import default_cache_dir

    stat = weights.stat()
    key = hashlib.sha256(f"{weights.resolve()}|{stat.st_size}|{stat.st_mtime_ns}|{FORMAT}".encode()).hexdigest()[:16]
    folder = default_cache_dir() / "static" / key
    with suppress(OSError, ValueError):
        return np.asarray(np.load(folder / "matrix.npy", mmap_mode="r")), np.load(folder / "keep.npy")
    from safetensors import safe_open

    with safe_open(str(weights), "np") as fh:
        name = next((k for k in fh.keys() if k.endswith("word_embeddings.weight")), None)
        if name is None:
            return None
        matrix = fh.get_tensor(name).astype(np.float32)
    vocab = tokenizer.get_vocab()
    stop = {i for w in STOP if (i := tokenizer.token_to_id(w)) is not None}
    punctuation = {i for t, i in vocab.items() if not any(c.isalnum() for c in t)}
    special = {i for t, i in vocab.items() if t.startswith("[") and t.endswith("]")}
    keep = np.ones(len(matrix), dtype=bool)
    keep[sorted(i for i in stop | punctuation | special if i < len(matrix))] = False
    with suppress(OSError), staged_folder(folder) as tmp:
        np.save(tmp / "matrix.npy", matrix)
        np.save(tmp / "keep.npy", keep)
    return matrix, keep
