"""The encoder an index's queries (and small adds) use: the vectors' own export, without torch.

A search opens the cached ONNX export of the index's model at the index's precision (``onnx_export``):
onnxruntime and tokenizers load in a fraction of a second, sentence-transformers in seconds. Where the
export is missing it is made again from the model, checked against the index's fingerprint first.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from ..errors import EmbedsearchError, ModelMismatchError
from .distilled import StaticEncoder, is_static
from .encoder import Encoder, HashingEncoder, is_hashing
from .onnx_encoder import THREADS_ENV, OnnxEncoder
from .onnx_export import export_dir, export_onnx, exported
from .precision import FP32, LEGACY_PRECISION, export_precision, vector_fingerprint

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

__all__ = ["THREADS_ENV", "OnnxEncoder", "TorchQueryEncoder", "query_encoder"]


class TorchQueryEncoder:
    """For models the ONNX path does not cover: the bulk embedder itself."""

    def __init__(self, model: SentenceTransformer, max_windows: int, tail_weight: float, fingerprint: str):
        from .embed import model_info
        from .settings import EmbedSettings

        self.model = model
        self.settings = EmbedSettings(max_windows=max_windows, tail_weight=tail_weight, precision=FP32)
        self.fingerprint, self.dimension = fingerprint, model_info(model)["dimension"]

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        from .embed import embed_batch

        return embed_batch(texts, self.model, self.settings)


@lru_cache(maxsize=4)
def query_encoder(model_name: str, fingerprint: str, max_windows: int, tail_weight: float,
                  precision: str = LEGACY_PRECISION) -> Encoder:
    """The encoder that reproduces the vectors with ``fingerprint``: its ONNX export (made from the model
    when missing), else the model itself. An fp16 (GPU) index's queries run on the CPU at fp32, the
    nearest precision a CPU runs (cosine to fp16 above 0.999)."""
    if is_hashing(model_name):
        return HashingEncoder(model_name)
    if is_static(model_name):
        return StaticEncoder(model_name).check(fingerprint)
    if (folder := exported(fingerprint)) is not None:
        return OnnxEncoder(folder, max_windows, tail_weight)
    model = _model_for(model_name, fingerprint, precision)
    from .embed import model_fingerprint

    base = model_fingerprint(model)
    actual = vector_fingerprint(base, precision)
    if actual != fingerprint:
        raise ModelMismatchError(
            f"model {model_name!r} on this machine makes vectors {actual} at {precision}, not the index's "
            f"{fingerprint}; install the model the index was built with, or rebuild it with `embedsearch build`")
    made = export_onnx(model, base, export_precision(precision))
    if made is not None:
        encoder = OnnxEncoder(made, max_windows, tail_weight)
        encoder.fingerprint = fingerprint
        return encoder
    if precision != FP32:
        raise EmbedsearchError(f"model {model_name!r} has no ONNX export, so its {precision} vectors cannot be "
                               "reproduced here; rebuild the index with --precision fp32")
    return TorchQueryEncoder(model, max_windows, tail_weight, fingerprint)


def _model_for(model_name: str, fingerprint: str, precision: str) -> SentenceTransformer:
    """The model to export again, or one line saying how to get it."""
    from .embed import load_model

    try:
        return load_model(model_name)
    except EmbedsearchError as exc:
        raise EmbedsearchError(
            f"the index's {precision} export of {model_name!r} is not at {export_dir(fingerprint)} and the model "
            f"to make it cannot be loaded ({str(exc).split(';')[0]}); install the model, or copy that folder "
            "from the machine that built the index") from None
