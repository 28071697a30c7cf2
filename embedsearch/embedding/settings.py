"""How documents become vectors: the model and the windows of long abstracts."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from ..errors import InputError, check
from .precision import DEFAULT_PRECISION, check_precision

DEFAULT_MODEL = "all-MiniLM-L6-v2"


@dataclass(frozen=True)
class EmbedSettings:
    """How documents become vectors. ``max_windows=1`` truncates at the model's window;
    ``tail_weight`` scales the windows after the first (see ``windows.py``); ``precision`` is ``fp32``
    (the ONNX export), ``int8`` (the same, smoothed and quantized: about 2x faster on a CPU) or ``fp16``
    (CUDA; see ``precision.py``)."""

    model: str = DEFAULT_MODEL
    batch_size: int = 32
    max_windows: int = 8
    tail_weight: float = 0.25
    device: str | None = None  # for fp16 and models without an ONNX export; None: a GPU when there is one
    precision: str = DEFAULT_PRECISION

    def __post_init__(self) -> None:
        if not isinstance(self.model, str) or not self.model.strip():
            raise InputError(f"model must name a sentence-transformers model or folder, got {self.model!r}")
        check_precision(self.precision)
        check(self, batch_size=(1, None), max_windows=(1, None), tail_weight=(0, 1))


@dataclass(frozen=True)
class ModelEntry:
    """The model that made an index's vectors, as its manifest records it; ``fingerprint`` guards against
    mixing two models."""

    name: str
    dimension: int
    fingerprint: str
    settings: EmbedSettings
    max_seq_length: int = 0

    def to_json(self) -> dict[str, Any]:
        return {**{f.name: getattr(self, f.name) for f in fields(self)}, "settings": asdict(self.settings)}
