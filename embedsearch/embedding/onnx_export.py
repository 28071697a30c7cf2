"""The model exported once to ONNX (and quantized to int8), cached per vector fingerprint.

The export traces the transformer with eager attention, which onnxruntime fuses when it loads it (the score
scaling into its product, biases into GELU and layer norms, an int8 product with its dequantization): 1.3x
faster at fp32 than tracing PyTorch's SDPA (``benchmarks/HISTORY.md``, "Embedding").
int8 is onnxruntime's dynamic quantization with one scale per output channel (one scale per tensor loses
too much: mean cosine to fp32 0.94 against 0.995), after the activations' outliers are moved into the
weights (``smoothing``: 0.998). The recipe is fixed and calibrated on package data, so a machine that
exports again makes the same vectors, up to the float noise its CPU adds to any run.
The weights are kept beside the graph (``model.onnx.data``): onnxruntime maps them instead of parsing them
out of the protobuf, which opens a session in 0.07 s instead of 0.17 s and leaves the vectors bit for bit the same
(``benchmarks/HISTORY.md``, "A search command"). A format 2 export (weights inside) found in the cache is
copied that way on first use, without the model; the old folder stays for the versions that read it.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

from ..disk.durable import staged_folder
from .cache import default_cache_dir
from .precision import FP32, INT8, QUANT_FORMAT, vector_fingerprint

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

EXPORT_FORMAT = 3  # 2: eager attention (fusable), int8 beside fp32; 3: weights beside the graph
CONFIG = "config.json"
GRAPH, WEIGHTS = "model.onnx", "model.onnx.data"
_POOLING = ("mean", "cls")


def export_dir(fingerprint: str, version: int = EXPORT_FORMAT) -> Path:
    """Where the export of the vectors with ``fingerprint`` lives (one folder per precision)."""
    return default_cache_dir() / "onnx" / f"{fingerprint}-v{version}"


def exported(fingerprint: str) -> Path | None:
    """The export's folder, a format 2 export rewritten with its weights beside the graph first; ``None``
    when neither is in the cache."""
    folder = export_dir(fingerprint)
    if (folder / CONFIG).exists():
        return folder
    old = export_dir(fingerprint, 2)
    if not (old / CONFIG).exists():
        return None
    with staged_folder(folder) as tmp:
        externalize(old / GRAPH, tmp / GRAPH)
        (tmp / "tokenizer.json").write_bytes((old / "tokenizer.json").read_bytes())
        (tmp / CONFIG).write_text(json.dumps({**json.loads((old / CONFIG).read_text()), "format": EXPORT_FORMAT},
                                             indent=2))
    return folder


def externalize(source: Path, target: Path) -> None:
    """The model in ``source`` written to ``target`` with its weights in ``WEIGHTS`` beside it."""
    import onnx

    model = onnx.load(str(source))
    (target.parent / WEIGHTS).unlink(missing_ok=True)  # onnx appends to an existing weights file
    onnx.save_model(model, str(target), save_as_external_data=True, all_tensors_to_one_file=True,
                    location=WEIGHTS, size_threshold=1024)


def pooling_mode(model: SentenceTransformer) -> str | None:
    """``mean`` or ``cls`` for a plain transformer + pooling (+ normalize) model; ``None`` for anything else."""
    kinds = [type(m).__name__ for m in model]
    if kinds[:2] != ["Transformer", "Pooling"] or any(k != "Normalize" for k in kinds[2:]):
        return None
    mode = model[1].get_config_dict().get("pooling_mode")
    return mode if mode in _POOLING else None


def export_onnx(model: SentenceTransformer, model_fingerprint: str, precision: str = FP32) -> Path | None:
    """The export of ``model`` at ``precision`` (``fp32`` or ``int8``), made on first use; ``None`` when
    the model's modules are not a plain encoder + pooling."""
    fingerprint = vector_fingerprint(model_fingerprint, precision)
    if (found := exported(fingerprint)) is not None:
        return found
    mode = pooling_mode(model)
    if mode is None:
        return None
    if precision == INT8:
        source = export_onnx(model, model_fingerprint, FP32)
        with staged_folder(export_dir(fingerprint)) as tmp:
            _quantize(source, tmp / "quantized.onnx")
            externalize(tmp / "quantized.onnx", tmp / GRAPH)
            (tmp / "quantized.onnx").unlink()
            (tmp / "tokenizer.json").write_bytes((source / "tokenizer.json").read_bytes())
            config = json.loads((source / CONFIG).read_text())
            config.update(fingerprint=fingerprint, precision=INT8, model_fingerprint=model_fingerprint,
                          quant_format=QUANT_FORMAT)
            (tmp / CONFIG).write_text(json.dumps(config, indent=2))
        return export_dir(fingerprint)
    with staged_folder(export_dir(fingerprint)) as tmp:
        _trace(model, tmp / "traced.onnx")
        externalize(tmp / "traced.onnx", tmp / GRAPH)
        (tmp / "traced.onnx").unlink()
        model.tokenizer.backend_tokenizer.save(str(tmp / "tokenizer.json"))
        (tmp / CONFIG).write_text(json.dumps(_config(model, mode, fingerprint), indent=2))
    return export_dir(fingerprint)


def _config(model: SentenceTransformer, mode: str, fingerprint: str) -> dict:
    tokenizer = model.tokenizer
    return {"format": EXPORT_FORMAT, "fingerprint": fingerprint, "model_fingerprint": fingerprint,
            "precision": FP32, "pooling": mode, "inputs": list(tokenizer.model_input_names),
            "max_seq_length": int(model.max_seq_length), "special_tokens": int(tokenizer.num_special_tokens_to_add()),
            "pad_id": int(tokenizer.pad_token_id or 0), "pad_token": tokenizer.pad_token or "[PAD]",
            "lowercase": bool(getattr(model[0], "do_lower_case", False))}


def _trace(model: SentenceTransformer, target: Path) -> None:
    import torch

    names = list(model.tokenizer.model_input_names)
    inner = model[0].auto_model

    class Wrapper(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
            return self.inner(**dict(zip(names, inputs))).last_hidden_state

    sample = model.tokenizer(["a short query", "a somewhat longer example query text"], padding=True,
                             return_tensors="pt")
    before = getattr(inner.config, "_attn_implementation", None)
    try:
        _set_attention(inner, "eager")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(Wrapper().eval().cpu(), tuple(sample[n].cpu() for n in names), str(target),
                              input_names=names, output_names=["hidden"], opset_version=17,
                              dynamic_axes={n: {0: "batch", 1: "tokens"} for n in names + ["hidden"]},
                              dynamo=False)
    finally:
        if before is not None:
            _set_attention(inner, before)


def _set_attention(model, kind: str) -> None:
    """Trace with plain matrix products (a model without the switch is traced as it is)."""
    setter = getattr(model, "set_attn_implementation", None)
    if setter is not None:
        try:
            setter(kind)
        except (ValueError, ImportError):
            pass


def _quantize(source: Path, target: Path) -> None:
    """The fp32 export in ``source`` smoothed (``smoothing``), then its matrix products quantized (the
    embedding table stays fp32: a lookup gains nothing from int8 and lost precision)."""
    import logging

    from onnxruntime.quantization import QuantType, quantize_dynamic

    from ..corpus import bundled_sources, read_sources
    from .smoothing import smooth

    smoothed = target.with_name("smoothed.onnx")
    smooth(source, smoothed, [d.embed_text for d in read_sources(bundled_sources()).documents])

    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # the quantizer logs advice on the root logger
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            quantize_dynamic(str(smoothed), str(target), weight_type=QuantType.QInt8, per_channel=True,
                             op_types_to_quantize=["MatMul"])
    finally:
        root.setLevel(level)
        smoothed.unlink(missing_ok=True)
