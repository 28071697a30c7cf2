"""The Encoder protocol: every path that turns text into vectors provides it, and the hashing encoder lets most
tests build real indexes without loading a neural model."""

import json
import subprocess
import sys

import numpy as np
import pytest
from conftest import run_cli

from embedsearch import InputError
from embedsearch.embedding.encoder import Encoder, HashingEncoder


def test_every_encoder_path_provides_the_protocol(bundled_index, model):
    from dataclasses import asdict

    from embedsearch.embedding.embed import Embedder
    from embedsearch.embedding.settings import EmbedSettings
    from embedsearch.jobs.on_ray import EncodeActor

    embedder = Embedder()
    onnx = bundled_index.snapshot.encoder
    actor = EncodeActor(asdict(EmbedSettings()), threads=1)
    for encoder in (embedder, onnx, actor, HashingEncoder()):
        assert isinstance(encoder, Encoder), type(encoder).__name__
    assert embedder.fingerprint == onnx.fingerprint == actor.fingerprint == bundled_index.manifest.model.fingerprint
    text = "Sparse autoencoders find interpretable features in language models."
    vectors = [e.encode([text])[0] for e in (embedder, onnx, actor)]
    assert all(v.shape == (384,) for v in vectors) and float(vectors[0] @ vectors[1]) > 0.999
    assert float(vectors[0] @ vectors[2]) > 0.999


def test_hashing_vectors_are_deterministic_unit_and_follow_shared_words():
    encoder = HashingEncoder("hashing-128")
    texts = ["graph neural networks for molecules", "graph neural networks for proteins", "tax law in Flanders", "!!"]
    x = encoder.encode(texts)
    np.testing.assert_allclose(np.linalg.norm(x, axis=1), 1, rtol=1e-6)
    assert x[0] @ x[1] > 0.5 > abs(x[0] @ x[2])
    code = "from embedsearch.embedding.encoder import HashingEncoder; import json; " \
           "print(json.dumps(HashingEncoder('hashing-128').encode(['graph neural networks for molecules'])[0].tolist()))"
    other = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    np.testing.assert_array_equal(np.asarray(other, dtype=np.float32), x[0])  # another process, same vector
    assert HashingEncoder("hashing-128").fingerprint != HashingEncoder("hashing-64").fingerprint
    for bad in ("hashing-", "hashing-4", "hashing-abc", "hashed-64"):
        with pytest.raises(InputError, match="hashing-DIM"):
            HashingEncoder(bad)


def test_a_whole_index_on_the_hashing_encoder_without_a_neural_model(tmp_path):
    rows = [{"id": f"d{i}", "text": f"paper {i} on {'graph networks' if i % 2 else 'diffusion models'} and more"}
            for i in range(40)]
    rows.append({"id": "copy", "text": rows[3]["text"]})
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows))
    run_cli("build", str(corpus), "--index", str(tmp_path / "i"), "--model", "hashing-64", check=True)
    hits = [json.loads(line) for line in run_cli("search", "graph networks", "--index", str(tmp_path / "i"),
                                                  "--json", "-k", "3", check=True).stdout.splitlines()]
    assert all(int(h["id"][1:]) % 2 == 1 for h in hits)
    groups = json.loads(run_cli("dedup", "--index", str(tmp_path / "i"), "--json", check=True).stdout)["groups"]
    assert [(g["kept"], g["absorbed"]) for g in groups] == [("d3", ["copy"])]
    modules = subprocess.run([sys.executable, "-c", "import sys; from embedsearch import Index; "
                              f"Index.load({str(tmp_path / 'i')!r}).search('graph', 3); "
                              "print('torch' in sys.modules)"], capture_output=True, text=True, check=True)
    assert modules.stdout.strip() == "False"  # searching a hashing index never imports torch
