"""BM25 over the same documents as the vectors, persisted in the index folder.

bm25s computes the index (term weights in a sparse column matrix, saved as ``.npy`` + JSON).
Queries are scored straight from those arrays with numpy: importing bm25s pulls in numba
(about 0.6 s), which would double a cold search. The tokenizer is ours, so index and query
time tokenise identically; a test checks scores against bm25s itself.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from .corpus import Document
from .errors import CorruptIndexError

FOLDER = "lexical"
TOKEN_PATTERN = r"(?u)\b\w\w+\b"


@dataclass(frozen=True)
class LexicalSettings:
    """BM25 parameters and text processing (tuned on SciFact's train split, see benchmarks)."""

    k1: float = 1.2
    b: float = 0.6
    method: str = "lucene"
    stemmer: str | None = "english"
    stopwords: bool = True
    title_weight: int = 2


class Tokenizer:
    """Lower-case word tokens, English stop words removed, Snowball-stemmed."""

    def __init__(self, stopwords: Sequence[str], stemmer: str | None):
        self._pattern = re.compile(TOKEN_PATTERN)
        self._stopwords = frozenset(stopwords)
        self._stemmer = None
        if stemmer:
            import Stemmer

            self._stemmer = Stemmer.Stemmer(stemmer)

    def __call__(self, text: str) -> list[str]:
        words = [w for w in self._pattern.findall(text.lower()) if w not in self._stopwords]
        return self._stemmer.stemWords(words) if self._stemmer else words


def _english_stopwords() -> list[str]:
    import bm25s.stopwords

    return sorted(bm25s.stopwords.STOPWORDS_EN)


def doc_tokens(doc: Document, tokenizer: Tokenizer, settings: LexicalSettings) -> list[str]:
    title = tokenizer(doc.title) * settings.title_weight if doc.title else []
    return title + tokenizer(doc.text)


def build(documents: Sequence[Document], folder: Path, settings: LexicalSettings = LexicalSettings()) -> None:
    """Index ``documents`` (in row order) with bm25s and save the arrays under ``folder/lexical``."""
    import bm25s

    stopwords = _english_stopwords() if settings.stopwords else []
    tokenizer = Tokenizer(stopwords, settings.stemmer)
    vocab: dict[str, int] = {}
    ids = [[vocab.setdefault(t, len(vocab)) for t in doc_tokens(d, tokenizer, settings)] for d in documents]
    model = bm25s.BM25(k1=settings.k1, b=settings.b, method=settings.method)
    model.index((ids, vocab), show_progress=False)  # token ids share one int object each: 8 bytes a token
    target = folder / FOLDER
    target.mkdir()
    for name in ("data", "indices", "indptr"):
        np.save(target / f"{name}.npy", np.asarray(model.scores[name]))
    (target / "vocab.json").write_text(json.dumps(model.vocab_dict, ensure_ascii=False))
    (target / "config.json").write_text(json.dumps(
        {"settings": asdict(settings), "stopwords": stopwords, "documents": len(documents),
         "token_pattern": TOKEN_PATTERN, "engine": f"bm25s {bm25s.__version__}"}))


class LexicalIndex:
    """Query-time BM25 scoring from the saved arrays (memory-mapped)."""

    def __init__(self, folder: Path):
        self.folder = folder / FOLDER
        try:
            self.config = json.loads((self.folder / "config.json").read_text())
            self._data, self._indices, self._indptr = (np.load(self.folder / f"{n}.npy", mmap_mode="r")
                                                      for n in ("data", "indices", "indptr"))
            self.tokenizer = Tokenizer(self.config["stopwords"], self.config["settings"]["stemmer"])
            if len(self._data) != len(self._indices) or int(self._indptr[-1]) != len(self._data):
                raise ValueError("posting arrays disagree in length")
        except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
            raise CorruptIndexError(f"{self.folder}: lexical index missing or unreadable ({exc}); rebuild with "
                                    "`embedsearch build`") from exc

    def max_row(self) -> int:
        """The largest document row any posting names (-1 when there are none)."""
        return int(np.max(self._indices)) if len(self._indices) else -1

    @cached_property
    def vocab(self) -> dict[str, int]:
        try:
            vocab = json.loads((self.folder / "vocab.json").read_text())
        except (OSError, ValueError) as exc:
            raise CorruptIndexError(f"{self.folder / 'vocab.json'}: unreadable ({exc}); rebuild the index") from exc
        if not isinstance(vocab, dict) or (vocab and max(vocab.values()) >= len(self._indptr)):
            raise CorruptIndexError(f"{self.folder / 'vocab.json'}: does not match the postings; rebuild the index")
        return vocab

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every document for ``query`` (zero where no term matches)."""
        out = np.zeros(self.config["documents"], dtype=np.float32)
        for token in self.tokenizer(query):
            term = self.vocab.get(token)
            if term is not None:
                start, stop = self._indptr[term], self._indptr[term + 1]
                out[self._indices[start:stop]] += self._data[start:stop]
        return out
