"""Activation outliers moved into the weights before int8 quantization (SmoothQuant, Xiao et al. 2023).

Dynamic quantization gives each matrix product's input one int8 scale for the whole window, so the few
channels whose activations run a hundred times larger than the rest leave the others a handful of levels.
Each input channel ``j`` of a weight matrix is divided by ``s_j = max|x_j|^a / max|w_j|^(1-a)`` (one ``Mul``
per product input) and its weight row multiplied by it: the fp32 product is unchanged, and both sides reach
int8 with room to spare. Activations are measured on the bundled abstracts (package data, so every machine
calibrates on the same texts). ``a = 0.7`` was chosen on cosine to fp32 over SciFact abstracts and the
reviewer gold standard's tuning profiles (``benchmarks/HISTORY.md``, "Embedding: smoothed int8": reviewer loss
0.218 -> 0.210, mean cosine 0.995 -> 0.998, no slower).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

ALPHA = 0.7
_FLOOR = 1e-5


def smooth(folder: Path, target: Path, texts: list[str], alpha: float = ALPHA) -> None:
    """Write the fp32 export in ``folder`` to ``target`` with every constant-weight ``MatMul`` smoothed."""
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(folder / "model.onnx"))
    weights = {i.name: i for i in model.graph.initializer}
    consumers: dict[str, list] = {}
    for node in model.graph.node:
        if node.op_type == "MatMul" and node.input[1] in weights:
            consumers.setdefault(node.input[0], []).append(node)
    peaks = _activation_peaks(folder, model, list(consumers), texts)
    muls = []
    for name, nodes in consumers.items():
        arrays = [numpy_helper.to_array(weights[n.input[1]]) for n in nodes]
        weight_peak = np.max([np.abs(a).max(axis=1) for a in arrays], axis=0)
        scale = (np.maximum(peaks[name], _FLOOR) ** alpha / np.maximum(weight_peak, _FLOOR) ** (1 - alpha))
        scale = scale.astype(np.float32)
        model.graph.initializer.append(numpy_helper.from_array(np.float32(1) / scale, f"{name}/smooth"))
        muls.append(helper.make_node("Mul", [name, f"{name}/smooth"], [f"{name}/smoothed"], name=f"{name}/Smooth"))
        for node, array in zip(nodes, arrays):
            weights[node.input[1]].CopyFrom(numpy_helper.from_array(array * scale[:, None], node.input[1]))
            node.input[0] = f"{name}/smoothed"
    nodes = list(model.graph.node)
    for mul in muls:  # before its first reader, so the graph stays in topological order
        nodes.insert(next(i for i, n in enumerate(nodes) if mul.output[0] in n.input), mul)
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    onnx.save(model, str(target))


def _activation_peaks(folder: Path, source, names: list[str], texts: list[str]) -> dict[str, np.ndarray]:
    """The largest absolute value of each channel of each named tensor of ``source`` (the export in
    ``folder``, not yet changed) over ``texts`` (one window each)."""
    import onnx
    import onnxruntime
    from onnx import helper
    from tokenizers import Tokenizer

    config = json.loads((folder / "config.json").read_text())
    model = onnx.ModelProto()
    model.CopyFrom(source)
    model.graph.output.extend(helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, None) for n in names)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.log_severity_level = 3
    session = onnxruntime.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.enable_truncation(config["max_seq_length"])
    peaks = {n: np.zeros(0, dtype=np.float32) for n in names}
    for text in texts:
        encoding = tokenizer.encode(text.lower() if config["lowercase"] else text)
        columns = {"input_ids": encoding.ids, "attention_mask": encoding.attention_mask,
                   "token_type_ids": encoding.type_ids}
        feed = {n: np.asarray([columns[n]], dtype=np.int64) for n in config["inputs"]}
        for name, value in zip(names, session.run(names, feed)):
            value = np.abs(value).reshape(-1, value.shape[-1]).max(axis=0)
            peaks[name] = value if peaks[name].size == 0 else np.maximum(peaks[name], value)
    return peaks
