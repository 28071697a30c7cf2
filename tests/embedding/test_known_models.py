"""A model folder loaded once is remembered, so embedding cached texts never imports torch."""

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
from conftest import REPO

from embedsearch import ModelMismatchError
from embedsearch.embedding.embed import Embedder, model_fingerprint, resolve_model, split
from embedsearch.embedding.known_models import folder_key, recall
from embedsearch.embedding.settings import DEFAULT_MODEL, EmbedSettings

TRICKY = ["Plain abstract.", "Ünïcödé àccents, naïve café — “quotes” and ﬁ ligatures.", "数学 与 机器学习 の 研究",
          "emoji 🧪🔬 and tabs\tand\nnewlines  and   spaces", " leading and trailing ", "x" * 3000,
          " ".join(f"word{i}" for i in range(1200)), "Ünïcödé " * 400]


def test_windows_cut_without_the_model_equal_the_models(model, bundled_docs, tmp_path, monkeypatch):
    monkeypatch.setenv("EMBEDSEARCH_CACHE_DIR", str(tmp_path))
    assert recall(resolve_model(DEFAULT_MODEL)) is None
    Embedder()  # a first load remembers the folder
    known = recall(resolve_model(DEFAULT_MODEL))
    assert known is not None and known.info["fingerprint"] == Embedder().model_fingerprint
    settings = EmbedSettings(max_windows=3)
    texts = [d.embed_text for d in bundled_docs] + TRICKY
    fresh = Embedder(settings)
    assert fresh._model is None  # nothing loaded yet: the windows come from tokenizer.json
    assert fresh._split(texts) == split(texts, model, settings)
    assert len({owner for owner in split(TRICKY[-2:], model, settings)[1]}) == 2


def test_a_build_from_cached_vectors_never_imports_torch(bundled_index, tmp_path):
    code = ("import sys, json\nfrom embedsearch import Index\nfrom embedsearch.corpus import bundled_sources\n"
            f"index = Index.from_sources(bundled_sources(), {str(tmp_path / 'again')!r})\n"
            "print(json.dumps(sorted(m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, env=os.environ.copy())
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.splitlines()[-1]) == []
    from embedsearch import Index

    again = Index.load(tmp_path / "again")
    assert again.manifest.model == bundled_index.manifest.model
    np.testing.assert_array_equal(again.embeddings, bundled_index.embeddings)


def test_a_changed_or_misremembered_folder_loads_the_model(model, tmp_path, monkeypatch):
    monkeypatch.setenv("EMBEDSEARCH_CACHE_DIR", str(tmp_path / "cache"))
    folder = shutil.copytree(resolve_model(DEFAULT_MODEL), tmp_path / "minilm")
    settings = EmbedSettings(model=str(folder))
    Embedder(settings)
    assert recall(str(folder)) is not None
    os.utime(folder / "config.json", ns=(1, 1))  # any file changed: the memory no longer applies
    assert recall(str(folder)) is None
    Embedder(settings)
    record = tmp_path / "cache" / "models" / f"{folder_key(str(folder))}.json"
    record.write_text(json.dumps({**json.loads(record.read_text()), "fingerprint": "0" * 16}))
    lied = Embedder(settings)
    assert lied.model_fingerprint == "0" * 16 and lied._model is None
    with pytest.raises(ModelMismatchError, match="changed on disk"):
        lied.embed(["A text the cache has never seen, so the model must load."])
    assert Embedder(settings).model_fingerprint == model_fingerprint(model)  # the next run knows the truth
