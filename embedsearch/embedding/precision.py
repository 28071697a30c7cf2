"""The arithmetic a model runs at, and the fingerprint of the vectors it makes.

``int8`` is the model's ONNX export, smoothed, with its weights quantized per output channel (onnxruntime's
dynamic quantization: VNNI kernels on AVX-512 CPUs, AVX2 elsewhere); ``fp32`` the same export unquantized;
``fp16`` the sentence-transformers model in half precision on a CUDA GPU. Vectors of two precisions are
close but not equal, so each has its own fingerprint (and embedding cache); ``fp32`` keeps the model's own,
so indexes built before precisions existed stay valid.
"""

from __future__ import annotations

import hashlib

from ..errors import InputError

INT8, FP32, FP16 = "int8", "fp32", "fp16"
PRECISIONS = (INT8, FP32, FP16)
# Smoothed int8 holds fp32's quality on issue 53's four gates
# but not on two of the project's bars (the bundled map: 5 topics at seeds 1 and 9; vectors 6e-3 apart between
# two CPU code paths, fp32's under 1e-5): benchmarks/HISTORY.md, "Embedding: smoothed int8"
DEFAULT_PRECISION = FP32
LEGACY_PRECISION = FP32  # what a manifest without a precision was built at
QUANT_FORMAT = 2  # bump when the quantization recipe changes (2: smoothed, embeddings fp32): the vectors change


def check_precision(precision: str) -> str:
    if precision not in PRECISIONS:
        raise InputError(f"precision {precision!r}: choose one of {', '.join(PRECISIONS)} "
                         "(int8 and fp32 run on the CPU, fp16 on a CUDA GPU)")
    return precision


def vector_fingerprint(model_fingerprint: str, precision: str) -> str:
    """The fingerprint of the vectors ``precision`` makes from a model with ``model_fingerprint``."""
    if check_precision(precision) == FP32:
        return model_fingerprint
    tag = f"{model_fingerprint}:{precision}:q{QUANT_FORMAT}" if precision == INT8 else f"{model_fingerprint}:{precision}"
    return hashlib.sha256(tag.encode()).hexdigest()[:16]


def export_precision(precision: str) -> str:
    """The precision of the ONNX export that encodes on a CPU for ``precision`` (fp16 runs only on a GPU)."""
    return FP32 if precision == FP16 else precision
