"""Text as the query grammar compares it, shared by the grammar (``retrieval.query``) and the word postings
that answer its fielded terms over a whole index (``store.words``): one folding, so the two never disagree."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

_NON_WORD = re.compile(r"[^\w]+")
_NAMES = re.compile(r";| and ")


def plain(text: str | None) -> str:
    """Text as the grammar compares it: accents, case and punctuation gone, single spaces, padded."""
    folded = "".join(c for c in unicodedata.normalize("NFKD", text or "") if not unicodedata.combining(c)).casefold()
    return " " + " ".join(_NON_WORD.sub(" ", folded).split()) + " "


def author_names(metadata: dict[str, Any]) -> list[str]:
    """A record's author names, each folded: its ``authors`` (or ``author``) list, or text split at ``;`` and
    `` and ``."""
    names = metadata.get("authors") or metadata.get("author") or []
    return [plain(str(n)) for n in (names if isinstance(names, list) else _NAMES.split(str(names)))]
