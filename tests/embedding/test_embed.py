import numpy as np

from embedsearch.embedding.embed import Embedder, embed_batch, model_fingerprint
from embedsearch.embedding.settings import EmbedSettings


def test_vectors_are_unit_length_and_similar_texts_score_higher(model):
    v = embed_batch(["spiking neural networks", "neuromorphic spiking neurons", "tax law in Belgium"], model)
    assert v.shape == (3, 384) and v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1, atol=1e-5)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.2


def test_long_text_tail_is_not_dropped(model):
    head = "We study reinforcement learning for robot locomotion in simulated environments. " * 30
    tail = "Finally we analyse protein folding with graph neural networks on molecular data. " * 12
    windowed = embed_batch([head + tail], model, EmbedSettings(max_windows=8, tail_weight=1.0))[0]
    truncated = embed_batch([head + tail], model, EmbedSettings(max_windows=1))[0]
    topic = embed_batch(["protein folding with graph neural networks"], model)[0]
    assert windowed @ topic > truncated @ topic + 0.05


def test_fingerprint_is_stable_across_loads_and_changes_with_the_weights(model):
    import copy

    from sentence_transformers import SentenceTransformer

    from embedsearch.embedding.embed import resolve_model

    again = SentenceTransformer(resolve_model("all-MiniLM-L6-v2"), device="cpu")  # a second, separate load
    assert again is not model and model_fingerprint(again) == model_fingerprint(model)
    assert len(model_fingerprint(model)) == 16
    changed = copy.deepcopy(again)
    with __import__("torch").no_grad():
        next(changed.parameters())[0, 0] += 1e-3
    assert model_fingerprint(changed) != model_fingerprint(model)


def test_cache_means_a_text_is_embedded_once(tmp_path):
    texts = ["a first abstract about transformers", "a second about diffusion models"]
    first = Embedder(cache_dir=tmp_path)
    a = first.embed(texts)
    assert first.computed == 2
    second = Embedder(cache_dir=tmp_path)
    b = second.embed(texts + ["a third, new one"])
    assert second.computed == 1
    np.testing.assert_array_equal(a, b[:2])


def test_cache_serves_windows_so_settings_can_change_without_reembedding(tmp_path):
    long_text = "Graph neural networks predict molecular properties from atoms and bonds. " * 40
    first = Embedder(EmbedSettings(max_windows=8, tail_weight=0.25), cache_dir=tmp_path)
    a = first.embed([long_text])
    again = Embedder(EmbedSettings(max_windows=8, tail_weight=1.0), cache_dir=tmp_path)
    b = again.embed([long_text])
    assert again.computed == 0 and not np.allclose(a, b)


def test_the_model_is_loaded_once_however_the_device_is_passed(model):
    from embedsearch.embedding.embed import load_model
    from embedsearch.embedding.settings import DEFAULT_MODEL

    assert load_model(DEFAULT_MODEL, None) is model
    assert Embedder(EmbedSettings()).model is model  # the embedder shares the fixture's weights, no second copy
