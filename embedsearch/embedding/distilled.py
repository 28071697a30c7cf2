"""Static models for drafts at scale: one vector per word piece, a text the mean of its pieces' vectors
(model2vec's ``StaticModel``, numpy and tokenizers only), about 100x the transformer's speed on a CPU at a
cost in quality (``benchmarks/HISTORY.md``, "Embedding").

``static-minilm`` is distilled from the bundled all-MiniLM-L6-v2 on first use by model2vec's ``distill``
(every word piece through the transformer, PCA to 256 dimensions, Zipf weights: about 30 s here, offline)
and kept in the cache; any folder a model2vec model was saved to works as a model name too. A static
model has no token window, no precision and no export: the vectors are the model, so its fingerprint is
a hash of its files, and an index built with one answers queries only with the same files.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..errors import EmbedsearchError, InputError, MissingDependencyError, ModelMismatchError
from .cache import default_cache_dir
from .encoder import Encoder, HashingEncoder, is_hashing

STATIC_MINILM = "static-minilm"
RECIPE = {"source": "all-MiniLM-L6-v2", "pca_dims": 256, "sif_coefficient": 1e-4, "format": 1}
FOLDER = "static"
_FILES = ("model.safetensors", "tokenizer.json")


def is_static(name: str) -> bool:
    """``static-minilm``, or a folder holding a model2vec model."""
    if name == STATIC_MINILM:
        return True
    config = Path(name).expanduser() / "config.json"
    try:
        return config.is_file() and json.loads(config.read_text()).get("model_type") == "model2vec"
    except (OSError, ValueError):
        return False


def static_folder(name: str) -> Path:
    """The folder of the static model ``name``: its own for a path, the cached distillation (made now when
    missing) for ``static-minilm``."""
    if name != STATIC_MINILM:
        return Path(name).expanduser()
    from .models import resolve_model

    source = resolve_model(RECIPE["source"])
    key = hashlib.sha256(json.dumps([RECIPE, _files_digest(Path(source), ("tokenizer.json",))]).encode())
    folder = default_cache_dir() / FOLDER / f"minilm-{key.hexdigest()[:16]}"
    if not (folder / "model.safetensors").is_file():
        distill(source, folder)
    return folder


def distill(source: str, folder: Path) -> None:
    """Distill a static model from the sentence-transformers folder ``source`` into ``folder``, written
    beside it and renamed into place, so a killed run leaves no half model."""
    try:
        from model2vec.distill import distill_from_model
        from transformers import AutoModel, AutoTokenizer
    except ImportError as exc:
        raise MissingDependencyError("distilling a static model needs model2vec and skeletoken: "
                                     "run `pip install model2vec skeletoken`") from exc
    import logging
    import sys

    logging.getLogger("model2vec").setLevel(logging.ERROR)
    print(f"distilling a static model from {source} into {folder} (once, about 30 s)", file=sys.stderr)
    model = AutoModel.from_pretrained(source)
    tokenizer = AutoTokenizer.from_pretrained(source)
    static = distill_from_model(model, tokenizer, device="cpu", pca_dims=RECIPE["pca_dims"],
                                sif_coefficient=RECIPE["sif_coefficient"])
    folder.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".distill-", dir=folder.parent))
    try:
        static.save_pretrained(str(scratch))
        os.replace(scratch, folder)
    except OSError:
        shutil.rmtree(scratch, ignore_errors=True)
        if not (folder / "model.safetensors").is_file():  # not another process's finished copy
            raise


def _files_digest(folder: Path, names: Sequence[str] = _FILES) -> str:
    digest = hashlib.sha256()
    for name in names:
        digest.update(name.encode())
        digest.update((folder / name).read_bytes())
    return digest.hexdigest()[:16]


class StaticEncoder:
    """The ``Encoder`` protocol over a static model folder: whole texts (no windows) to unit float32 vectors."""

    def __init__(self, name: str):
        self.name = name
        folder = static_folder(name)
        if not all((folder / f).is_file() for f in _FILES):
            raise EmbedsearchError(f"{folder} holds no static model (model.safetensors and tokenizer.json); "
                                   f"pass a folder a model2vec model was saved to, or {STATIC_MINILM}")
        self.folder = folder
        self.fingerprint = hashlib.sha256(f"static:{_files_digest(folder)}".encode()).hexdigest()[:16]
        self._model = _open(str(folder))
        self.dimension = int(self._model.dim)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not len(texts):
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors = self._model.encode(list(texts), use_multiprocessing=False, max_length=None)
        vectors = np.asarray(vectors, dtype=np.float32)
        return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)

    def info(self) -> dict:
        return {"dimension": self.dimension, "max_seq_length": 0, "fingerprint": self.fingerprint}

    def check(self, fingerprint: str) -> StaticEncoder:
        """This encoder, when it makes the vectors with ``fingerprint``; else one line saying what to do."""
        if fingerprint != self.fingerprint:
            raise ModelMismatchError(
                f"the static model {self.name!r} here ({self.folder}, {self.fingerprint}) is not the one the "
                f"index was built with ({fingerprint}); copy that model's folder from the machine that built the "
                "index and pass its path, or rebuild the index here")
        return self


def direct_encoder(settings) -> Encoder | None:
    """The encoder for a model that needs no windows, cache or export (the hashing test encoder, a static
    model), or ``None`` for a transformer. ``settings`` is an ``EmbedSettings``."""
    if is_hashing(settings.model):
        return HashingEncoder(settings.model)
    if not is_static(settings.model):
        return None
    if settings.precision != "fp32":
        raise InputError(f"a static model ({settings.model}) has no {settings.precision} form: its vectors are "
                         "its weights; leave --precision out")
    return StaticEncoder(settings.model)


@lru_cache(maxsize=2)
def _open(folder: str):
    try:
        from model2vec import StaticModel
    except ImportError as exc:
        raise MissingDependencyError("static models run on model2vec: run `pip install model2vec`") from exc
    import logging

    logging.getLogger("model2vec").setLevel(logging.ERROR)  # it warns that max_length=None differs from 512
    # float32 weights: numpy averages half floats several times slower (benchmarks/HISTORY.md, "Embedding")
    return StaticModel.from_pretrained(folder, max_length=None, normalize=True, quantize_to="float32")
