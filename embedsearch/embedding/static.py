"""A model's own word-piece vectors (its input embeddings, read from the safetensors file beside its
tokenizer) as a static sentence encoder: a sentence is the mean of its word pieces' vectors, stop words
left out. Picking the sentence of an abstract closest in meaning to a query this way costs a tokenizer pass
and a few lookups, a millisecond a page, where the transformer would cost a second; ``None`` for a model
whose folder holds neither (the hashing test encoder, a hub name not on disk)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

STOP = frozenset("""a an and are as at be by for from has have in is it its of on or that the this to was were
we which with our their these those than then thus also can may not but into over under via using use used
based new show shows propose proposed approach method methods paper results""".split())


class StaticVectors:
    def __init__(self, tokenizer, matrix: np.ndarray, stop_ids: set[int], special: set[int]):
        tokenizer.no_padding()
        tokenizer.no_truncation()
        self.tokenizer, self.matrix = tokenizer, matrix
        self.keep = np.ones(len(matrix), dtype=bool)
        self.keep[sorted(i for i in stop_ids | special if i < len(matrix))] = False

    @classmethod
    def of(cls, model: str) -> StaticVectors | None:
        return _load(model)

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit vectors, one per text (zero for a text of stop words only)."""
        out = np.zeros((len(texts), self.matrix.shape[1]), dtype=np.float32)
        batch = getattr(self.tokenizer, "encode_batch_fast", self.tokenizer.encode_batch)  # no offsets: faster
        encoded = [self.tokenizer.encode(texts[0], add_special_tokens=False)] if len(texts) == 1 else \
            batch(texts, add_special_tokens=False)
        pieces = [np.asarray(e.ids, dtype=np.int64) for e in encoded]
        pieces = [p[(p < len(self.keep))][self.keep[p[p < len(self.keep)]]] for p in pieces]
        counts = np.array([len(p) for p in pieces])
        if counts.sum():
            sums = np.add.reduceat(self.matrix[np.concatenate(pieces)], np.r_[0, np.cumsum(counts)[:-1]][counts > 0])
            out[counts > 0] = sums / np.linalg.norm(sums, axis=1, keepdims=True).clip(1e-12)
        return out


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
    from safetensors import safe_open
    from tokenizers import Tokenizer

    with safe_open(str(weights), "np") as fh:
        name = next((k for k in fh.keys() if k.endswith("word_embeddings.weight")), None)
        if name is None:
            return None
        matrix = fh.get_tensor(name).astype(np.float32)
    tokenizer = Tokenizer.from_file(str(vocab))
    stop = {i for w in STOP if (i := tokenizer.token_to_id(w)) is not None}
    punctuation = {i for t, i in tokenizer.get_vocab().items() if not any(c.isalnum() for c in t)}
    special = {i for t, i in tokenizer.get_vocab().items() if t.startswith("[") and t.endswith("]")}
    return StaticVectors(tokenizer, matrix, stop | punctuation, special)
