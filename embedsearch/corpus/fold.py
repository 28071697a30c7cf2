"""Text as the query grammar compares it, shared by the grammar (``retrieval.query``) and the word postings
that answer its fielded terms over a whole index (``store.words``): one folding, so the two never disagree."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Any

_WORD = re.compile(r"\w+")
_NAMES = re.compile(r";| and ")


def plain(text: str | None) -> str:
    """Text as the grammar compares it: accents, case and punctuation gone, single spaces, padded. (NFKD,
    then every combining mark dropped, then case folded; ASCII text is its own NFKD.)"""
    text = text or ""
    if not text.isascii():
        text = unicodedata.normalize("NFKD", text).translate(_marks())
    return " " + " ".join(_WORD.findall(text.casefold())) + " "


@lru_cache(maxsize=1)
def _marks() -> dict[int, None]:
    """Every code point of a non-zero canonical combining class (none lies past U+1FFFF), mapped to nothing."""
    return dict.fromkeys((c for c in range(0x20000) if unicodedata.combining(chr(c))), None)


def author_names(metadata: dict[str, Any]) -> list[str]:
    """A record's author names, each folded: its ``authors`` (or ``author``) list, or text split at ``;`` and
    `` and ``."""
    names = metadata.get("authors") or metadata.get("author") or []
    return [plain(str(n)) for n in (names if isinstance(names, list) else _NAMES.split(str(names)))]
