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


def test_export_keeps_weights_beside_the_graph_and_a_format_2_export_is_copied_to_it(model, bundled_docs, tmp_path,
                                                                                       monkeypatch):
    import json
    import shutil

    import onnx

    from embedsearch.embedding.onnx_export import GRAPH, WEIGHTS, export_dir, exported

    folder = export_onnx(model, model_fingerprint(model))
    assert (folder / WEIGHTS).stat().st_size > 50_000_000 and (folder / GRAPH).stat().st_size < 1_000_000
    fingerprint = json.loads((folder / "config.json").read_text())["fingerprint"]
    monkeypatch.setenv("EMBEDSEARCH_CACHE_DIR", str(tmp_path))
    old = export_dir(fingerprint, 2)
    old.mkdir(parents=True)
    onnx.save(onnx.load(str(folder / GRAPH)), str(old / GRAPH))  # format 2: the weights inside the graph
    shutil.copy(folder / "tokenizer.json", old / "tokenizer.json")
    (old / "config.json").write_text(json.dumps({**json.loads((folder / "config.json").read_text()), "format": 2}))
    copied = exported(fingerprint)
    assert copied == export_dir(fingerprint) and copied.parent == old.parent
    assert (copied / WEIGHTS).exists() and (old / GRAPH).exists()
    texts = ["spiking neural networks", bundled_docs[0].text]
    assert (OnnxEncoder(copied, 8, 0.25).encode(texts) == OnnxEncoder(folder, 8, 0.25).encode(texts)).all()


def test_model_inputs_are_what_the_tokenizer_gives_with_truncation_and_padding_on(model, bundled_docs):
    from tokenizers import Tokenizer

    folder = export_onnx(model, model_fingerprint(model))
    encoder = OnnxEncoder(folder, max_windows=1, tail_weight=0.25)
    reference = Tokenizer.from_file(str(folder / "tokenizer.json"))
    reference.enable_truncation(encoder.config["max_seq_length"])
    reference.enable_padding(pad_id=encoder.config["pad_id"], pad_token=encoder.config["pad_token"])
    pieces = ["short", " ".join(d.text for d in bundled_docs[:3]).lower(), bundled_docs[4].text.lower()]
    mine = encoder._model_input(pieces)
    theirs = reference.encode_batch(pieces)
    assert mine["input_ids"].shape == (3, encoder.config["max_seq_length"])
    assert mine["input_ids"].tolist() == [e.ids for e in theirs]
    assert mine["attention_mask"].tolist() == [e.attention_mask for e in theirs]
    assert mine["token_type_ids"].tolist() == [e.type_ids for e in theirs]
