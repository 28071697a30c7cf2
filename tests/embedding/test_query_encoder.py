from embedsearch.embedding.embed import embed_batch, model_fingerprint
from embedsearch.embedding.onnx_encoder import OnnxEncoder
from embedsearch.embedding.onnx_export import export_onnx
from embedsearch.embedding.settings import EmbedSettings


def test_onnx_query_vectors_match_sentence_transformers(model, bundled_docs):
    folder = export_onnx(model, model_fingerprint(model))
    assert folder is not None and (folder / "model.onnx").exists()
    texts = ["spiking neural networks", "CTMC discrete diffusion", "VLA robot manipulation policies",
             bundled_docs[0].text, bundled_docs[5].text]
    fast = OnnxEncoder(folder, max_windows=8, tail_weight=0.25).encode(texts)
    slow = embed_batch(texts, model, EmbedSettings(max_windows=8, tail_weight=0.25))
    cosines = (fast * slow).sum(axis=1)
    assert cosines.min() >= 0.999, cosines


def test_onnx_handles_truncate_mode_too(model, bundled_docs):
    folder = export_onnx(model, model_fingerprint(model))
    long_text = max((d.text for d in bundled_docs), key=len)
    fast = OnnxEncoder(folder, max_windows=1, tail_weight=0.25).encode([long_text])
    slow = embed_batch([long_text], model, EmbedSettings(max_windows=1))
    assert float((fast * slow).sum()) >= 0.999


def test_bulk_windows_over_per_core_sessions_match_one_session(model, bundled_docs):
    folder = export_onnx(model, model_fingerprint(model))
    encoder = OnnxEncoder(folder, max_windows=8, tail_weight=0.25, threads=2)
    pieces = [d.text[:600] for d in bundled_docs[:40]]
    bulk = encoder.encode_pieces(pieces)  # length batches spread over two sessions, out of order
    one = OnnxEncoder(folder, max_windows=8, tail_weight=0.25, threads=1).encode_pieces(pieces)
    assert (bulk * one).sum(axis=1).min() >= 0.99999
