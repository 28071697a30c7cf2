"""Bulk embedding: window strings through the embedding cache to the encoder of the chosen precision.

``Embedder`` encodes with the model's ONNX export at int8 or fp32 (``onnx_encoder``; no torch once the
export exists), with sentence-transformers on a GPU at fp16, or with sentence-transformers itself for a
model the export does not cover. ``embed_batch`` is the sentence-transformers reference: a pure function
over a batch of texts.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..errors import EmbedsearchError, ModelMismatchError
from .cache import EmbeddingCache, default_cache_dir
from .distilled import direct_encoder
from .known_models import recall, remember
from .models import _dimension, check_fingerprint, load_model, model_fingerprint, model_info, resolve_model
from .onnx_export import export_onnx, exported
from .precision import FP16, FP32, INT8, vector_fingerprint
from .settings import EmbedSettings, ModelEntry
from .windows import pool_windows, split_texts

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

__all__ = ["Embedder", "check_fingerprint", "embed_batch", "encode_pieces", "load_model", "model_fingerprint",
           "model_info", "resolve_model", "split"]


def split(texts: Sequence[str], model: SentenceTransformer,
          settings: EmbedSettings) -> tuple[list[str], list[int], list[float]]:
    """Window strings for ``texts`` with their owners and pooling weights (see ``windows.py``)."""
    tokenizer = model.tokenizer
    max_tokens = model.max_seq_length - tokenizer.num_special_tokens_to_add()
    encoded = tokenizer(list(texts), add_special_tokens=False, return_offsets_mapping=True,
                        truncation=False, verbose=False)
    return split_texts(texts, encoded["offset_mapping"], max_tokens, settings.max_windows, settings.tail_weight)


def encode_pieces(pieces: Sequence[str], model: SentenceTransformer, settings: EmbedSettings) -> np.ndarray:
    """Window strings to unit vectors with sentence-transformers (at fp16 under CUDA autocast)."""
    if settings.precision != FP16:
        return model.encode(list(pieces), batch_size=settings.batch_size, normalize_embeddings=True,
                            convert_to_numpy=True, show_progress_bar=False).astype(np.float32)
    import torch

    with torch.autocast("cuda", dtype=torch.float16):  # sentence-transformers sorts each call's texts by length
        return model.encode(list(pieces), batch_size=settings.batch_size, normalize_embeddings=True,
                            convert_to_numpy=True, show_progress_bar=False).astype(np.float32)


def embed_batch(texts: Sequence[str], model: SentenceTransformer,
                settings: EmbedSettings = EmbedSettings()) -> np.ndarray:
    """Embed texts to unit float32 vectors, pooling the windows of long texts. Pure: no cache, no I/O."""
    if not texts:
        return np.zeros((0, _dimension(model)), dtype=np.float32)
    pieces, owners, weights = split(texts, model, settings)
    return pool_windows(encode_pieces(pieces, model, settings), owners, weights, len(texts))


def text_key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


class Embedder:
    """Embeds texts through the cache: a window string seen before at this precision is never encoded
    again. The model itself is loaded only when it must be: a window missing from the cache and no export
    to encode it with (``known_models``). A static model or the hashing test encoder (``direct``) is
    faster than the cache, so whole texts go to it directly."""

    def __init__(self, settings: EmbedSettings = EmbedSettings(), cache_dir: Path | None = None):
        self.settings = settings
        self.direct = direct_encoder(settings)
        self._model: SentenceTransformer | None = None
        self._backend = None
        self.known = None if self.direct else recall(resolve_model(settings.model))
        if self.direct:
            self.info = self.direct.info()
        elif self.known:
            self.info = dict(self.known.info)
        else:
            self.info = model_info(self.model)
        self.model_fingerprint = self.info["fingerprint"]
        self.fingerprint = self.model_fingerprint if self.direct else \
            vector_fingerprint(self.model_fingerprint, settings.precision)
        self.dimension = self.info["dimension"]
        self.cache = EmbeddingCache(cache_dir or default_cache_dir(), self.fingerprint, self.info["dimension"])
        self.computed = 0

    @property
    def model(self) -> SentenceTransformer | None:
        """The sentence-transformers model (``None`` for a direct encoder), loaded on first use."""
        if self.direct is None and self._model is None:
            model = load_model(self.settings.model, self._device())
            info = model_info(model)
            remember(resolve_model(self.settings.model), info, model.tokenizer.num_special_tokens_to_add())
            if self.known and info["fingerprint"] != self.known.info["fingerprint"]:
                raise ModelMismatchError(f"model {self.settings.model!r} changed on disk while embedding "
                                         f"(fingerprint {info['fingerprint']}, was {self.model_fingerprint}); run again")
            self._model = model
        return self._model

    def _device(self) -> str | None:
        if self.settings.precision != FP16:
            return self.settings.device
        import torch

        if not torch.cuda.is_available():
            raise EmbedsearchError("--precision fp16 runs on a CUDA GPU and this machine has none; "
                                   "use --precision int8 (the CPU default) or fp32")
        return self.settings.device or "cuda"

    @property
    def backend(self):
        """What encodes windows missing from the cache: the export at this precision (made on first use),
        or sentence-transformers at fp16 and for models without an export."""
        if self._backend is None:
            self._backend = self._open_backend()
        return self._backend

    def _open_backend(self):
        from .onnx_encoder import OnnxEncoder

        precision, settings = self.settings.precision, self.settings
        if precision in (INT8, FP32):
            folder = exported(self.fingerprint) or export_onnx(self.model, self.model_fingerprint, precision)
            if folder is not None:
                return OnnxEncoder(folder, settings.max_windows, settings.tail_weight)
            if precision == INT8:
                raise EmbedsearchError(f"model {settings.model!r} is not a plain transformer with mean or CLS "
                                       "pooling, so it has no ONNX export to run at int8; use --precision fp32")
        model = self.model
        return _Pieces(lambda pieces: encode_pieces(pieces, model, settings))

    def encode_pieces(self, pieces: Sequence[str]) -> np.ndarray:
        """Window strings to unit vectors with this embedder's backend (no cache): a Ray actor's batch."""
        if self.direct is not None:
            return self.direct.encode(pieces)
        return self.backend.encode_pieces(list(pieces))

    def _embed_direct(self, texts: Sequence[str], progress: Callable[[int], None] | None, chunk: int,
                      encode: Callable[[list[str]], np.ndarray] | None) -> np.ndarray:
        """A direct encoder has no windows and no cache; ``encode`` (a Ray cluster) still does the work."""
        encode = encode or self.direct.encode
        parts = [np.zeros((0, self.dimension), dtype=np.float32)]
        for start in range(0, len(texts), chunk):
            part = list(texts[start:start + chunk])
            parts.append(np.asarray(encode(part), dtype=np.float32))
            self.computed += len(part)
            if progress:
                progress(len(part))
        return np.concatenate(parts)

    def _split(self, texts: Sequence[str]) -> tuple[list[str], list[int], list[float]]:
        if self.known is None:
            return split(texts, self.model, self.settings)
        return split_texts(texts, self.known.offsets(texts), self.known.max_tokens, self.settings.max_windows,
                           self.settings.tail_weight)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """The ``Encoder`` protocol: ``embed`` without progress reporting."""
        return self.embed(texts)

    def manifest_entry(self) -> ModelEntry:
        return ModelEntry(self.settings.model, self.info["dimension"], self.fingerprint, self.settings,
                          self.info["max_seq_length"])

    def embed(self, texts: Sequence[str], progress: Callable[[int], None] | None = None, chunk: int = 256,
              encode: Callable[[list[str]], np.ndarray] | None = None) -> np.ndarray:
        """Vectors for ``texts`` in order; ``progress`` is called with the number of texts done.
        ``encode`` computes the window strings missing from the cache (default: ``encode_pieces``;
        ``distributed.ray_encoder`` runs the same on a Ray cluster). ``computed`` counts the texts that
        needed the encoder."""
        if self.direct is not None:
            return self._embed_direct(texts, progress, chunk, encode)
        encode = encode or self.encode_pieces
        out = np.zeros((len(texts), self.info["dimension"]), dtype=np.float32)
        for start in range(0, len(texts), chunk):
            part = texts[start:start + chunk]
            pieces, owners, weights = self._split(part)
            keys = [text_key(p) for p in pieces]
            found = self.cache.get_many(keys)
            missing = [i for i, k in enumerate(keys) if k not in found]
            vectors = np.zeros((len(pieces), self.info["dimension"]), dtype=np.float32)
            for i, k in enumerate(keys):
                if k in found:
                    vectors[i] = found[k]
            if missing:
                fresh = np.asarray(encode([pieces[i] for i in missing]), dtype=np.float32)
                vectors[missing] = fresh
                self.cache.put_many([keys[i] for i in missing], fresh)
                self.computed += len({owners[i] for i in missing})
            out[start:start + len(part)] = pool_windows(vectors, owners, weights, len(part))
            if progress:
                progress(len(part))
        return out


class _Pieces:
    """A sentence-transformers batch function as a backend."""

    def __init__(self, encode: Callable[[list[str]], np.ndarray]):
        self.encode_pieces = encode
