"""The lexical side of a segment: its settings, the tokenizer, and the term-frequency postings it stores.

A segment stores, per term, the rows that hold it (ascending) and how often, plus every row's length;
``bm25`` scores them at query time with statistics over the live documents. The tokenizer is ours, so
index and query time tokenise identically.
"""

from __future__ import annotations

import json
import re
from array import array
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict
from functools import cached_property, lru_cache
from pathlib import Path

import numpy as np

from ..corpus import Document
from ..errors import CorruptIndexError, MissingDependencyError
from .settings import LexicalSettings

FOLDER = "lexical"
TOKEN_PATTERN = r"(?u)\b\w\w+\b"
PARTS = ("indptr", "rows", "tf", "lengths")



class Tokenizer:
    """Lower-case word tokens, English stop words removed, word forms met (``forms``), Snowball-stemmed."""

    def __init__(self, stopwords: Sequence[str], stemmer: str | None, forms: bool = False):
        self._pattern = re.compile(TOKEN_PATTERN)
        self._stopwords = frozenset(stopwords)
        self._stemmer = None
        if stemmer:
            import Stemmer

            self._stemmer = Stemmer.Stemmer(stemmer)
        self._forms = None
        if forms:
            from .forms import forms as tables

            self._forms = tables(stemmer)

    def __call__(self, text: str) -> list[str]:
        words = [w for w in self._pattern.findall(text.lower()) if w not in self._stopwords]
        if self._forms is None:
            return self._stemmer.stemWords(words) if self._stemmer else words
        table, stems = self._forms.words, self._forms.stems
        words = [table.get(w, w) for w in words]
        return [stems.get(s, s) for s in self._stemmer.stemWords(words)] if self._stemmer else words

    @classmethod
    def of(cls, settings: LexicalSettings) -> Tokenizer:
        return cls(_english_stopwords() if settings.stopwords else [], settings.stemmer, settings.forms)


@lru_cache(maxsize=1)
def _english_stopwords() -> list[str]:
    """bm25s's English stop words, read from its ``stopwords`` module alone: importing the bm25s package
    pulls in numba (0.6 s), which would double a cold ``add`` or search."""
    import importlib.util

    spec = importlib.util.find_spec("bm25s")
    if spec is None or spec.origin is None:
        raise MissingDependencyError("bm25s is not installed: run `pip install bm25s`")
    source = importlib.util.spec_from_file_location("_bm25s_stopwords", Path(spec.origin).parent / "stopwords.py")
    module = importlib.util.module_from_spec(source)
    source.loader.exec_module(module)
    return sorted(module.STOPWORDS_EN)


def doc_tokens(doc: Document, tokenizer: Tokenizer, settings: LexicalSettings) -> list[str]:
    title = tokenizer(doc.title) * settings.title_weight if doc.title else []
    return title + tokenizer(doc.text)


def build(documents: Sequence[Document], folder: Path, settings: LexicalSettings = LexicalSettings()) -> None:
    """Write the postings of ``documents`` (in row order) under ``folder/lexical``."""
    tokenizer = Tokenizer.of(settings)
    vocab: dict[str, int] = {}
    terms, rows, tfs = array("q"), array("q"), array("f")  # 8 bytes a posting while building, not a Python int
    lengths = np.zeros(len(documents), dtype=np.int32)
    for row, doc in enumerate(documents):
        tokens = doc_tokens(doc, tokenizer, settings)
        lengths[row] = len(tokens)
        counts = Counter(tokens)
        terms.extend(vocab.setdefault(token, len(vocab)) for token in counts)
        rows.extend([row] * len(counts))
        tfs.extend(counts.values())
    _write(folder, vocab, np.frombuffer(terms, np.int64), np.frombuffer(rows, np.int64),
           np.frombuffer(tfs, np.float32), lengths, settings)


def _write(folder: Path, vocab: dict[str, int], terms: np.ndarray, rows: np.ndarray, tfs: np.ndarray,
           lengths: np.ndarray, settings: LexicalSettings) -> None:
    order = np.lexsort((rows, terms))
    indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
    np.cumsum(np.bincount(terms, minlength=len(vocab)), out=indptr[1:])
    target = folder / FOLDER
    target.mkdir()
    arrays = {"indptr": indptr, "rows": rows[order].astype(np.int32), "tf": tfs[order].astype(np.float32),
              "lengths": lengths}
    for name, values in arrays.items():
        np.save(target / f"{name}.npy", values)
    (target / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False))
    (target / "config.json").write_text(json.dumps({"settings": asdict(settings), "documents": len(lengths),
                                                    "token_pattern": TOKEN_PATTERN}))


class Postings:
    """One segment's postings, memory-mapped."""

    def __init__(self, folder: Path):
        self.folder = folder / FOLDER
        try:
            self.config = json.loads((self.folder / "config.json").read_text())
            self.indptr, self.rows, self.tf, self.lengths = (np.asarray(np.load(self.folder / f"{n}.npy", mmap_mode="r"))
                                                             for n in PARTS)  # plain arrays over the mapped pages
            if len(self.rows) != len(self.tf) or int(self.indptr[-1]) != len(self.rows) \
                    or len(self.lengths) != self.config["documents"]:
                raise ValueError("posting arrays disagree in length")
        except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
            raise CorruptIndexError(f"{self.folder}: lexical index missing or unreadable ({exc}); rebuild with "
                                    "`embedsearch build`") from exc

    @cached_property
    def vocab(self) -> dict[str, int]:
        try:
            vocab = json.loads((self.folder / "vocab.json").read_text())
        except (OSError, ValueError) as exc:
            raise CorruptIndexError(f"{self.folder / 'vocab.json'}: unreadable ({exc}); rebuild the index") from exc
        if not isinstance(vocab, dict) or len(vocab) != len(self.indptr) - 1:
            raise CorruptIndexError(f"{self.folder / 'vocab.json'}: does not match the postings; rebuild the index")
        return vocab

    def max_row(self) -> int:
        """The largest document row any posting names (-1 when there are none)."""
        return int(np.max(self.rows)) if len(self.rows) else -1

    def term(self, token: str) -> tuple[np.ndarray, np.ndarray]:
        """The rows holding ``token`` (ascending) and its frequency in each, as memory-mapped views."""
        term = self.vocab.get(token)
        if term is None:
            return np.zeros(0, np.int32), np.zeros(0, np.float32)
        start, stop = int(self.indptr[term]), int(self.indptr[term + 1])
        rows, tf = self.rows[start:stop], self.tf[start:stop]
        if stop > start and (rows[-1] >= len(self.lengths) or rows[0] < 0 or (stop - start > 1 and rows[0] >= rows[-1])
                             or tf[0] <= 0 or tf[-1] <= 0):  # what a read can afford to check: zeroed numbers fail
            raise CorruptIndexError(f"{self.folder}: the postings of {token!r} are out of order, past the last "
                                    f"document or of frequency 0; `embedsearch check --repair --index "
                                    f"{self.folder.parent.parent.parent}` makes them again from the documents")
        return rows, tf

    def lookup(self, token: str, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each of ``rows``, whether it holds ``token``, and the frequency where it does (a binary search
        per row into the term's postings, never a pass over them)."""
        held, tf = self.term(token)
        at = np.searchsorted(held, np.asarray(rows, dtype=held.dtype))  # one type: no copy of the whole list
        found = at < len(held)
        found[found] = held[at[found]] == rows[found]
        return found, np.asarray(tf[at[found]])
