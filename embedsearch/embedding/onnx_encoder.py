"""The ONNX encoder: an export (``onnx_export``) run with onnxruntime + tokenizers, for bulk embedding
and queries alike.

Importing sentence-transformers costs seconds; onnxruntime and tokenizers load in a fraction of one, so
neither a build whose export exists nor an interactive search imports torch. Queries run on one session
using the cores; bulk windows are sorted by length, cut into small batches (little padding) and spread
over one single-threaded session per core, each thread tokenizing its next batch while another runs
(``benchmarks/HISTORY.md``, "Embedding": 1.3x one session with every core). At int8 each window runs
alone: dynamic quantization scales a batch's activations by their range, so batchmates and padding would
move a window's vector (cosine 0.996 to itself alone) and a query would not find its own abstract's.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import cached_property
from pathlib import Path

import numpy as np

from .onnx_export import GRAPH
from .windows import pool_windows, split_texts

THREADS_ENV = "EMBEDSEARCH_ONNX_THREADS"  # set by `serve --workers N` so N workers share the cores
# "basic" runs onnxruntime's unfused kernels: the float noise another onnxruntime build or CPU would make
OPTIMIZATION_ENV = "EMBEDSEARCH_ONNX_OPTIMIZATION"
_LEVELS = {"all": "ORT_ENABLE_ALL", "extended": "ORT_ENABLE_EXTENDED", "basic": "ORT_ENABLE_BASIC"}
BULK_BATCH = 4
BULK_FROM = 16  # windows in one call from which the per-core sessions pay off


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


class OnnxEncoder:
    """Encodes texts exactly as ``embed.embed_batch`` does (windows, pooling, unit length), without torch."""

    def __init__(self, folder: Path, max_windows: int, tail_weight: float, threads: int | None = None):
        self.folder = folder
        self.config = json.loads((folder / "config.json").read_text())
        self.precision = self.config.get("precision", "fp32")
        self.max_windows = max_windows
        self.tail_weight = tail_weight
        self.threads = threads or int(os.environ.get(THREADS_ENV, 0)) or min(4, cores())
        from tokenizers import Tokenizer

        self._raw = Tokenizer.from_file(str(folder / "tokenizer.json"))  # padded and truncated by _model_input
        self._raw.no_truncation()
        self._raw.no_padding()
        self._session = self._open(self.threads)
        self.fingerprint = self.config["fingerprint"]
        self.dimension = int(self._session.get_outputs()[0].shape[-1])

    def _open(self, threads: int):
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        level = _LEVELS.get(os.environ.get(OPTIMIZATION_ENV, "all"), "ORT_ENABLE_ALL")
        options.graph_optimization_level = getattr(onnxruntime.GraphOptimizationLevel, level)
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        # idle threads sleep instead of spinning, leaving the cores to a busy server's request threads
        # (benchmarks/HISTORY.md, "Search service": 15% more searches/s on 20% less CPU)
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        return onnxruntime.InferenceSession(str(self.folder / GRAPH), options,
                                            providers=["CPUExecutionProvider"])

    @cached_property
    def _workers(self) -> list:
        return [self._open(1) for _ in range(max(1, self.threads))]

    def encode(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        """The ``Encoder`` protocol: texts (split into windows, pooled) to unit vectors."""
        texts = self._cased(texts)
        offsets = [e.offsets for e in self._raw.encode_batch(texts, add_special_tokens=False)]
        max_tokens = self.config["max_seq_length"] - self.config["special_tokens"]
        pieces, owners, weights = split_texts(texts, offsets, max_tokens, self.max_windows, self.tail_weight)
        return pool_windows(self._encode_windows(pieces, batch_size), owners, weights, len(texts))

    def encode_pieces(self, pieces: Sequence[str]) -> np.ndarray:
        """Window strings (each within the model's window) to unit vectors: the bulk path."""
        return self._encode_windows(self._cased(pieces), BULK_BATCH)

    def _cased(self, texts: Sequence[str]) -> list[str]:
        return [t.lower() for t in texts] if self.config["lowercase"] else list(texts)

    def _encode_windows(self, pieces: list[str], batch_size: int) -> np.ndarray:
        if self.precision == "int8":  # int8 scales each batch's activations by its range: one window per run
            batch_size = 1  # makes a window's vector independent of its batchmates and their padding
        vectors = np.empty((len(pieces), self.dimension), dtype=np.float32)
        if len(pieces) < BULK_FROM or self.threads == 1:
            for batch in length_batches([len(p) for p in pieces], batch_size):
                vectors[batch] = self._run(self._session, [pieces[i] for i in batch])
            return vectors
        batches = length_batches([len(p) for p in pieces], min(batch_size, BULK_BATCH))
        sessions = self._workers

        def work(worker: int) -> None:
            for batch in batches[worker::len(sessions)]:
                vectors[batch] = self._run(sessions[worker], [pieces[i] for i in batch])

        with ThreadPoolExecutor(len(sessions)) as pool:
            list(pool.map(work, range(len(sessions))))
        return vectors

    def _run(self, session, pieces: list[str]) -> np.ndarray:
        columns = self._model_input(pieces)
        feed = {name: columns[name] for name in self.config["inputs"]}
        hidden = session.run(None, feed)[0]
        if self.config["pooling"] == "cls":
            pooled = hidden[:, 0]
        else:
            mask = columns["attention_mask"].astype(hidden.dtype)[..., None]
            pooled = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)

    def _model_input(self, pieces: list[str]) -> dict[str, np.ndarray]:
        """The model's inputs for ``pieces``, as the tokenizer with truncation and padding on would give them,
        from the one plain tokenizer: a window over the model's length keeps its first tokens and its
        special tokens; rows are padded to the longest."""
        limit = self.config["max_seq_length"]
        encodings = self._raw.encode_batch(pieces)
        for i, encoding in enumerate(encodings):
            if len(encoding.ids) > limit:
                encoding = self._raw.encode(pieces[i], add_special_tokens=False)
                encoding.truncate(limit - self.config["special_tokens"])
                encodings[i] = self._raw.post_process(encoding)
        width = max(len(e.ids) for e in encodings)
        columns = {"input_ids": np.full((len(encodings), width), self.config["pad_id"], dtype=np.int64),
                   "attention_mask": np.zeros((len(encodings), width), dtype=np.int64),
                   "token_type_ids": np.zeros((len(encodings), width), dtype=np.int64)}
        for row, encoding in enumerate(encodings):
            columns["input_ids"][row, :len(encoding.ids)] = encoding.ids
            columns["attention_mask"][row, :len(encoding.ids)] = encoding.attention_mask
            columns["token_type_ids"][row, :len(encoding.ids)] = encoding.type_ids
        return columns


def length_batches(lengths: list[int], size: int, spread: int = 4) -> list[list[int]]:
    """Positions grouped shortest first, at most ``size`` per batch and none more than ``spread`` times
    longer than its batch's first: short texts are not padded to a long abstract's length."""
    batches: list[list[int]] = []
    for i in sorted(range(len(lengths)), key=lengths.__getitem__):
        if not batches or len(batches[-1]) >= size or lengths[i] > spread * max(1, lengths[batches[-1][0]]):
            batches.append([])
        batches[-1].append(i)
    return batches
