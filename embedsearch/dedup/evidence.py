"""Lexical evidence for a candidate pair: exact match after normalising, word-shingle overlap,
and the longest passages the two texts share."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from difflib import SequenceMatcher

import numpy as np

_WORD = re.compile(r"\w+")
_NOT_WORD = re.compile(r"[\W_]+")


def normalise(text: str) -> str:
    """Text with case, punctuation and whitespace differences removed."""
    return _NOT_WORD.sub(" ", text.casefold()).strip()


def text_hash(text: str) -> bytes:
    return hashlib.blake2b(normalise(text).encode(), digest_size=16).digest()


@dataclass(frozen=True)
class Shingled:
    """A text's lower-cased words with their character spans, for finding and quoting shared passages."""

    text: str
    words: tuple[str, ...]
    spans: tuple[tuple[int, int], ...]

    @classmethod
    def of(cls, text: str) -> Shingled:
        matches = list(_WORD.finditer(text))
        return cls(text, tuple(m.group().casefold() for m in matches), tuple(m.span() for m in matches))


def shingle_hashes(text: str, size: int = 5) -> np.ndarray:
    """Sorted unique hashes of the text's word n-grams: about 1 KB per abstract, so a 100,000-abstract
    run keeps them all in memory cheaply."""
    words = tuple(m.group().casefold() for m in _WORD.finditer(text))
    n = min(size, len(words)) or 1
    return np.unique(np.fromiter((hash(words[i:i + n]) for i in range(max(1, len(words) - n + 1))), dtype=np.int64))


def containment(a: np.ndarray, b: np.ndarray) -> float:
    """Share of the smaller shingle set found in the other (1.0 = fully contained)."""
    smaller = min(len(a), len(b))
    return np.intersect1d(a, b, assume_unique=True).size / smaller if smaller else 0.0


def shared_passages(a: Shingled, b: Shingled, min_words: int = 8, most: int | None = None) -> list[str]:
    """Every run of at least ``min_words`` words the two texts have in common (the ``most`` longest, when
    given), longest first, quoted from the first text: the evidence a reader checks a verdict against."""
    blocks = SequenceMatcher(None, a.words, b.words, autojunk=False).get_matching_blocks()
    longest = sorted((blk for blk in blocks if blk.size >= min_words), key=lambda blk: (-blk.size, blk.a))[:most]
    return [a.text[a.spans[blk.a][0]:a.spans[blk.a + blk.size - 1][1]] for blk in longest]
