"""What the embedder needs to know about a model folder before any text reaches the model: its
fingerprint, dimension and token window, remembered from the last time it was loaded.

A build, ``dedup --against`` or the first search of the default index whose vectors are all in the
embedding cache then never imports torch and sentence-transformers (about 8 s here): windows are cut
with the folder's own ``tokenizer.json`` (the Rust tokenizer the model's fast tokenizer wraps), and the
model is loaded only when a window is missing from the cache. The memory is keyed by the folder's path
and every file's size and modification time, so a model changed on disk is loaded and fingerprinted again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from ..disk.durable import write_json
from .cache import default_cache_dir

FOLDER = "models"
TOKENIZER = "tokenizer.json"
_INFO = ("dimension", "max_seq_length", "fingerprint")  # ``embed.model_info``'s fields


def folder_key(path: str) -> str | None:
    """A key that changes whenever any file of the model folder does; ``None`` for a hub name or a
    folder without ``tokenizer.json`` (those always load the model)."""
    root = Path(path).expanduser()
    if not (root / TOKENIZER).is_file():
        return None
    root = root.resolve()
    stats = sorted((str(p.relative_to(root)), p.stat().st_size, p.stat().st_mtime_ns)
                   for p in root.rglob("*") if p.is_file())
    return hashlib.sha256(json.dumps([str(root), stats]).encode()).hexdigest()[:24]


def _record(key: str) -> Path:
    return default_cache_dir() / FOLDER / f"{key}.json"


def remember(path: str, info: dict[str, Any], special_tokens: int) -> None:
    """Store what ``model_info`` measured for the folder at ``path`` (best effort: a read-only cache
    only means the next process loads the model again)."""
    key = folder_key(path)
    if key is None:
        return
    try:
        _record(key).parent.mkdir(parents=True, exist_ok=True)
        write_json(_record(key), {**{k: info[k] for k in _INFO}, "special_tokens": int(special_tokens)})
    except OSError:
        pass


@dataclass(frozen=True)
class KnownModel:
    """A model folder seen before: its ``model_info`` and a tokenizer that cuts windows as the model's does."""

    info: dict[str, Any]
    special_tokens: int
    tokenizer_path: Path

    @property
    def max_tokens(self) -> int:
        return int(self.info["max_seq_length"]) - self.special_tokens

    def offsets(self, texts: Sequence[str]) -> list[list[tuple[int, int]]]:
        """Character offsets of each text's tokens, without special tokens, truncation or padding."""
        return [e.offsets for e in self._tokenizer.encode_batch(list(texts), add_special_tokens=False)]

    @cached_property
    def _tokenizer(self):
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(self.tokenizer_path))
        tokenizer.no_truncation()
        tokenizer.no_padding()
        return tokenizer


def recall(path: str) -> KnownModel | None:
    """The remembered model at ``path``, or ``None`` when it was never loaded here or has changed since."""
    key = folder_key(path)
    if key is None:
        return None
    try:
        info = json.loads(_record(key).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(info, dict) or any(not isinstance(info.get(k), (int, str)) for k in _INFO) \
            or not isinstance(info.get("special_tokens"), int):
        return None
    return KnownModel({k: info[k] for k in _INFO}, info["special_tokens"], Path(path).expanduser() / TOKENIZER)
