"""Smoothing moves activation outliers into the weights: the fp32 vectors stay as they were, and the int8
export made after it lands closer to fp32 than int8 made without it, on abstracts it was not calibrated on."""

import json
import shutil

import numpy as np
import onnx
import pytest

from conftest import SHARED
from embedsearch.embedding.embed import model_fingerprint
from embedsearch.embedding.onnx_encoder import OnnxEncoder
from embedsearch.embedding.onnx_export import export_onnx
from embedsearch.embedding.smoothing import smooth


@pytest.fixture(scope="module")
def held_out() -> list[str]:
    """SciFact abstracts: the calibration texts are the bundled NeurIPS ones."""
    with (SHARED / "eval" / "scifact" / "corpus.jsonl").open() as fh:
        return [json.loads(next(fh))["text"] for _ in range(30)]


@pytest.fixture(scope="module")
def fp32_export(model):
    return export_onnx(model, model_fingerprint(model), "fp32")


def _beside(export, folder):
    folder.mkdir()
    for name in ("tokenizer.json", "config.json"):
        shutil.copy(export / name, folder / name)
    return folder


def _vectors(folder, texts):
    return OnnxEncoder(folder, max_windows=8, tail_weight=0.25).encode(texts)


def test_smoothing_leaves_the_fp32_vectors_as_they_were(fp32_export, bundled_docs, held_out, tmp_path):
    folder = _beside(fp32_export, tmp_path / "smoothed")
    smooth(fp32_export, folder / "model.onnx", [d.embed_text for d in bundled_docs[:8]])
    muls = [n for n in onnx.load(str(folder / "model.onnx")).graph.node if n.name.endswith("/Smooth")]
    assert len(muls) == 24  # the inputs of attention's projections, its output and both feed-forward layers, x6
    before, after = _vectors(fp32_export, held_out), _vectors(folder, held_out)
    assert np.abs(before - after).max() < 1e-4


def test_the_int8_export_is_closer_to_fp32_than_int8_without_smoothing(model, fp32_export, held_out, tmp_path):
    from onnxruntime.quantization import QuantType, quantize_dynamic

    smoothed = export_onnx(model, model_fingerprint(model), "int8")
    plain = _beside(fp32_export, tmp_path / "plain")
    quantize_dynamic(str(fp32_export / "model.onnx"), str(plain / "model.onnx"), weight_type=QuantType.QInt8,
                     per_channel=True, op_types_to_quantize=["MatMul"])
    reference = _vectors(fp32_export, held_out)
    cosines = {name: (_vectors(folder, held_out) * reference).sum(axis=1).mean()
               for name, folder in (("smoothed", smoothed), ("plain", plain))}
    assert cosines["smoothed"] >= 0.997 and cosines["smoothed"] - cosines["plain"] >= 0.001, cosines
