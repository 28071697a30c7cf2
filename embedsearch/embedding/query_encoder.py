"""The fast query path: the model exported once to ONNX, run with onnxruntime + tokenizers.

Importing sentence-transformers costs seconds; onnxruntime and tokenizers load in a fraction of
one, so interactive searches never import torch. The export is cached per model fingerprint and
checked against sentence-transformers by the test suite (cosine >= 0.999).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..errors import ModelMismatchError
from ..disk.durable import staged_folder
from .cache import default_cache_dir
from .encoder import Encoder, HashingEncoder, is_hashing
from .windows import pool_windows, split_texts

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

EXPORT_FORMAT = 1
THREADS_ENV = "EMBEDSEARCH_ONNX_THREADS"  # set by `serve --workers N` so N workers share the cores
_POOLING = ("mean", "cls")


def export_dir(fingerprint: str) -> Path:
    return default_cache_dir() / "onnx" / f"{fingerprint}-v{EXPORT_FORMAT}"


def _pooling_mode(model: SentenceTransformer) -> str | None:
    kinds = [type(m).__name__ for m in model]
    if kinds[:2] != ["Transformer", "Pooling"] or any(k != "Normalize" for k in kinds[2:]):
        return None
    mode = model[1].get_config_dict().get("pooling_mode")
    return mode if mode in _POOLING else None


def export_onnx(model: SentenceTransformer, fingerprint: str) -> Path | None:
    """Export ``model`` for the fast path; ``None`` when its modules are not a plain encoder + pooling."""
    target = export_dir(fingerprint)
    if (target / "config.json").exists():
        return target
    mode = _pooling_mode(model)
    if mode is None:
        return None
    import torch

    names = list(model.tokenizer.model_input_names)

    class Wrapper(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module):
            super().__init__()
            self.inner = inner

        def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
            return self.inner(**dict(zip(names, inputs))).last_hidden_state

    sample = model.tokenizer(["a short query", "a somewhat longer example query text"], padding=True,
                             return_tensors="pt")
    import warnings

    with staged_folder(target) as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(Wrapper(model[0].auto_model).eval().cpu(),
                          tuple(sample[n].cpu() for n in names), str(tmp / "model.onnx"),
                          input_names=names, output_names=["hidden"], opset_version=17,
                          dynamic_axes={n: {0: "batch", 1: "tokens"} for n in names + ["hidden"]},
                          dynamo=False)
        model.tokenizer.backend_tokenizer.save(str(tmp / "tokenizer.json"))
        config = {"format": EXPORT_FORMAT, "fingerprint": fingerprint, "pooling": mode, "inputs": names,
                  "max_seq_length": int(model.max_seq_length),
                  "special_tokens": int(model.tokenizer.num_special_tokens_to_add()),
                  "pad_id": int(model.tokenizer.pad_token_id or 0), "pad_token": model.tokenizer.pad_token or "[PAD]",
                  "lowercase": bool(getattr(model[0], "do_lower_case", False))}
        (tmp / "config.json").write_text(json.dumps(config, indent=2))
    return target


class OnnxQueryEncoder:
    """Encodes queries exactly as ``embed.embed_batch`` does, without torch."""

    def __init__(self, folder: Path, max_windows: int, tail_weight: float, threads: int | None = None):
        import onnxruntime
        from tokenizers import Tokenizer

        self.config = json.loads((folder / "config.json").read_text())
        self.max_windows = max_windows
        self.tail_weight = tail_weight
        self._raw = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._raw.no_truncation()
        self._raw.no_padding()
        self._model_input = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._model_input.enable_truncation(self.config["max_seq_length"])
        self._model_input.enable_padding(pad_id=self.config["pad_id"], pad_token=self.config["pad_token"])
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads or int(os.environ.get(THREADS_ENV, 0)) or min(4, os.cpu_count() or 1)
        options.log_severity_level = 3
        # ONNX's idle threads sleep instead of spinning, leaving the cores to a busy server's request threads
        # (benchmarks/README.md, "Search service": 15% more searches/s on 20% less CPU)
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = onnxruntime.InferenceSession(str(folder / "model.onnx"), options,
                                                     providers=["CPUExecutionProvider"])
        self.fingerprint = self.config["fingerprint"]
        self.dimension = int(self._session.get_outputs()[0].shape[-1])

    def encode(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        texts = [t.lower() for t in texts] if self.config["lowercase"] else list(texts)
        offsets = [e.offsets for e in self._raw.encode_batch(texts, add_special_tokens=False)]
        max_tokens = self.config["max_seq_length"] - self.config["special_tokens"]
        pieces, owners, weights = split_texts(texts, offsets, max_tokens, self.max_windows, self.tail_weight)
        vectors = np.empty((len(pieces), self.dimension), dtype=np.float32)
        for batch in _length_batches([len(p) for p in pieces], batch_size):
            vectors[batch] = self._run([pieces[i] for i in batch])
        return pool_windows(vectors, owners, weights, len(texts))

    def _run(self, pieces: list[str]) -> np.ndarray:
        encodings = self._model_input.encode_batch(pieces)
        columns = {"input_ids": [e.ids for e in encodings], "attention_mask": [e.attention_mask for e in encodings],
                   "token_type_ids": [e.type_ids for e in encodings]}
        feed = {name: np.asarray(columns[name], dtype=np.int64) for name in self.config["inputs"]}
        hidden = self._session.run(None, feed)[0]
        if self.config["pooling"] == "cls":
            pooled = hidden[:, 0]
        else:
            mask = np.asarray(columns["attention_mask"], dtype=hidden.dtype)[..., None]
            pooled = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)


def _length_batches(lengths: list[int], size: int, spread: int = 4) -> list[list[int]]:
    """Positions grouped shortest first, at most ``size`` per batch and none more than ``spread`` times
    longer than its batch's first: short queries are not padded to a long abstract's length."""
    batches: list[list[int]] = []
    for i in sorted(range(len(lengths)), key=lengths.__getitem__):
        if not batches or len(batches[-1]) >= size or lengths[i] > spread * max(1, lengths[batches[-1][0]]):
            batches.append([])
        batches[-1].append(i)
    return batches


class TorchQueryEncoder:
    """Fallback for models the ONNX path does not cover: the bulk embedder itself."""

    def __init__(self, model: SentenceTransformer, max_windows: int, tail_weight: float):
        from .embed import model_info
        from .settings import EmbedSettings

        self.model = model
        self.settings = EmbedSettings(max_windows=max_windows, tail_weight=tail_weight)
        info = model_info(model)
        self.fingerprint, self.dimension = info["fingerprint"], info["dimension"]

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        from .embed import embed_batch

        return embed_batch(texts, self.model, self.settings)


@lru_cache(maxsize=4)
def query_encoder(model_name: str, fingerprint: str, max_windows: int, tail_weight: float) -> Encoder:
    """The fastest encoder that reproduces the index's vectors: the cached ONNX export, else torch."""
    if is_hashing(model_name):
        return HashingEncoder(model_name)
    folder = export_dir(fingerprint)
    if (folder / "config.json").exists():
        return OnnxQueryEncoder(folder, max_windows, tail_weight)
    from .embed import load_model, model_fingerprint

    model = load_model(model_name)
    actual = model_fingerprint(model)
    if actual != fingerprint:
        raise ModelMismatchError(
            f"model {model_name!r} on this machine (fingerprint {actual}) is not the one the index was "
            f"built with ({fingerprint}); install that model or rebuild the index with `embedsearch build`")
    exported = export_onnx(model, fingerprint)
    if exported:
        return OnnxQueryEncoder(exported, max_windows, tail_weight)
    return TorchQueryEncoder(model, max_windows, tail_weight)
