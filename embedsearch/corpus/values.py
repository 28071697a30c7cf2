"""What a record's values may be: metadata as it is stored and text that is really text. Shared by the file
readers (``corpus``) and the writers; the kinds a field may hold are ``kinds``."""

from __future__ import annotations

import base64
import json
import math
from typing import Any


def clean_scalar(value: Any) -> Any:
    """A metadata value as stored: scalars and flat lists as they are, bytes as base64 text, anything
    nested as its JSON text (never Python's repr)."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, (list, tuple)) and all(isinstance(v, (str, int, float, bool)) for v in value):
        return list(value)
    return json.dumps(value, ensure_ascii=False, default=str)


def check_unicode(value: Any, field: str) -> None:
    """Refuse a string holding an unpaired surrogate (JSON's ``\\ud800`` escape): it is not text, and no
    UTF-8 file or response can hold it."""
    for text in (value if isinstance(value, (list, tuple)) else [value]):
        if isinstance(text, str):
            try:
                text.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise ValueError(f"field {field!r} holds an unpaired surrogate ({text[exc.start]!r}) at character "
                                 f"{exc.start}, which is not text") from None


def type_name(value: Any) -> str:
    """How a message names a value's type: 'a number (3)', 'a list'."""
    if isinstance(value, bool):
        return f"a boolean ({value})"
    if isinstance(value, (int, float)):
        return f"a number ({value})"
    if isinstance(value, (list, tuple)):
        return "a list"
    return f"a {type(value).__name__}"
